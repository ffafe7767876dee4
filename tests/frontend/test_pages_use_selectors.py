"""Page views read through selectors (../shared/ARCHITECTURE.md, "Inside an app": page views call
selectors, never the ORM directly): every module of frontend/pages/ is parsed, and any touch of the ORM
in it fails this test. `get_object_or_404` on a model or a selector's queryset is the page turning "no
such row" into a 404, and stays in the page."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "frontend" / "pages"

MANAGERS = {"objects", "_default_manager", "_base_manager"}
# Methods of querysets and managers that no built-in type of Python's has.
QUERYSET_METHODS = {
    "all", "filter", "exclude", "select_related", "prefetch_related", "annotate", "alias", "aggregate",
    "order_by", "distinct", "values_list", "only", "defer", "extra", "raw", "using", "select_for_update",
    "exists", "first", "last", "earliest", "latest", "in_bulk", "iterator", "create", "get_or_create",
    "update_or_create", "bulk_create", "bulk_update", "delete",
}


def shared_name_is_orm(call: ast.Call, name: str) -> bool:
    """Names Python's own types share with querysets, told apart by their arguments: dict.values()
    takes none, list.count and str.count take one, dict.get takes no keywords (a bare `.values()` is
    a dict's, `.update` is left to services' writes)."""
    has_args = bool(call.args or call.keywords)
    return ((name == "values" and has_args) or (name == "count" and not has_args)
            or (name == "get" and bool(call.keywords)))


def orm_touches(path: Path) -> list[str]:
    """`file:line what` for each import of django.db, manager and queryset method call in the module."""
    found = []  # (line, what)
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"imports {alias.name}") for alias in node.names
                      if alias.name.split(".")[:2] == ["django", "db"]]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[:2] == ["django", "db"]:
            found.append((node.lineno, f"imports {node.module}"))
        elif isinstance(node, ast.Attribute) and node.attr in MANAGERS:
            found.append((node.lineno, f"reads .{node.attr}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in QUERYSET_METHODS or shared_name_is_orm(node, name):
                found.append((node.lineno, f"calls .{name}()"))
    where = path.relative_to(ROOT)
    return [f"{where}:{line} {what}" for line, what in sorted(found, key=lambda touch: touch[0])]


def page_modules() -> list[Path]:
    return sorted(PAGES.glob("*.py"))


def test_page_views_read_only_through_selectors():
    modules = page_modules()
    assert len(modules) >= 10 and PAGES / "home.py" in modules and PAGES / "manage.py" in modules
    assert [touch for path in modules for touch in orm_touches(path)] == []


def test_the_checker_sees_each_kind_of_orm_touch(tmp_path, monkeypatch):
    """Planted violations are each caught, and Python's own dict, list and str methods of the same
    names are not (the rule cannot pass by reading nothing, nor fail on plain code)."""
    pages = tmp_path / "frontend" / "pages"
    pages.mkdir(parents=True)
    (pages / "bad.py").write_text(
        "from django.db.models import Count\n"
        "import django.db\n"
        "def view(request, benchmark, Item):\n"
        "    items = Item.objects.all()\n"
        "    scenes = benchmark.scenes.order_by('name')\n"
        "    n = service_queryset().count()\n"
        "    tags = items.values('tags')\n"
        "    one = Item._default_manager.get(pk=1)\n"
        "    first = benchmark.items.first()\n"
        "    return request.GET.get('page', '1'), {}.values(), [1].count(1), 'ab'.count('a'), {}.get('k')\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}.PAGES", pages)
    assert [touch for path in page_modules() for touch in orm_touches(path)] == [
        "frontend/pages/bad.py:1 imports django.db.models",
        "frontend/pages/bad.py:2 imports django.db",
        "frontend/pages/bad.py:4 calls .all()",
        "frontend/pages/bad.py:4 reads .objects",
        "frontend/pages/bad.py:5 calls .order_by()",
        "frontend/pages/bad.py:6 calls .count()",
        "frontend/pages/bad.py:7 calls .values()",
        "frontend/pages/bad.py:8 calls .get()",
        "frontend/pages/bad.py:8 reads ._default_manager",
        "frontend/pages/bad.py:9 calls .first()",
    ]
