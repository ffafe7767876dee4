"""Hand-written SQL lives only in each app's sql.py (../shared/ARCHITECTURE.md, "Inside an app"): every
module of the project's packages (migrations and tests aside) is read from the source, and a cursor,
a raw query, RawSQL, .extra() or a string that reads as SQL anywhere else fails this test."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Upper-case keywords only, as SQL is written here: prose in messages ("select the items from") passes.
SQL_TEXT = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\S+\s+SET\b|\bDELETE\s+FROM\b|\bFOR\s+UPDATE\b"
    r"|\b(CREATE|DROP|ALTER)\s+(OR\s+REPLACE\s+|TEMPORARY\s+)?(TABLE|INDEX|TRIGGER|FUNCTION|VIEW|DATABASE)\b"
    r"|\bCOPY\b[\s\S]*\bSTDIN\b|\bpg_advisory"
)
RAW_QUERY_CALLS = {"cursor", "raw", "extra"}


def code_files(root: Path) -> list[Path]:
    """Every module of the project's packages (top-level folders with an __init__.py), tests and
    migrations aside."""
    packages = [p.parent for p in root.glob("*/__init__.py") if p.parent.name != "tests"]
    return sorted(path for package in packages for path in package.rglob("*.py") if "migrations" not in path.parts)


def _docstrings(tree) -> set[int]:
    """ids of the string constants that are docstrings (prose about SQL is allowed anywhere)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _text(node) -> str | None:
    """A string literal's text; an f-string's with each placeholder as `?`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "?" for part in node.values)
    return None


def sql_in(path: Path) -> list[str]:
    """'line: what' for each piece of hand-written SQL in the module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings, inside_fstrings = _docstrings(tree), set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside_fstrings.update(id(part) for part in node.values)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, receiver = node.func.attr, ast.unparse(node.func.value)
            if method in RAW_QUERY_CALLS or (method in {"execute", "executemany"} and receiver.endswith("cursor")):
                found.append((node.lineno, f"{receiver}.{method}()"))
        elif isinstance(node, ast.Name | ast.Attribute) and "RawSQL" in (getattr(node, "id", None),
                                                                       getattr(node, "attr", None)):
            found.append((node.lineno, "RawSQL"))
        elif isinstance(node, ast.ImportFrom) and any(alias.name == "RawSQL" for alias in node.names):
            found.append((node.lineno, "RawSQL"))
        elif id(node) not in docstrings | inside_fstrings and (text := _text(node)) and SQL_TEXT.search(text):
            found.append((node.lineno, f"SQL text {text[:40]!r}"))
    return [f"{line}: {what}" for line, what in sorted(found)]


def sql_outside_sql_modules(root: Path) -> list[str]:
    return [f"{path.relative_to(root)}:{finding}" for path in code_files(root) if path.name != "sql.py"
            for finding in sql_in(path)]


def test_no_sql_outside_sql_modules():
    assert sql_outside_sql_modules(ROOT) == []


def test_every_sql_module_holds_sql_the_checker_sees():
    """The checker recognises the SQL the project writes: each app's sql.py is found and flagged."""
    modules = [path for path in code_files(ROOT) if path.name == "sql.py"]
    assert {path.parent.name for path in modules} >= {"core", "benchmarks", "annotation", "humaneval", "review",
                                                      "modeleval"}
    assert [path.parent.name for path in modules if not sql_in(path)] == []


def test_the_checker_sees_a_violation(tmp_path):
    """Planted SQL outside sql.py is caught, in each form (the rule cannot pass by reading nothing);
    sql.py, migrations, docstrings and tests are not read."""
    app = tmp_path / "app"
    (app / "migrations").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    for package in (app, app / "migrations", tmp_path / "tests"):
        (package / "__init__.py").write_text("")
    (app / "bad.py").write_text(
        '"""Docstrings may say SELECT id FROM items."""\n'
        "from django.db.models.expressions import RawSQL\n"
        "def f(connection, Item, table):\n"
        "    with connection.cursor() as cursor:\n"
        "        cursor.execute(f'DELETE FROM {table} WHERE id = 1')\n"
        "    Item.objects.raw('SELECT * FROM item')\n"
        "    Item.objects.extra(where=['id > 1'])\n"
        "    return 'UPDATE item SET n = 0'\n"
    )
    clean = "def f(cursor):\n    cursor.execute('SELECT 1 FROM item')\n"
    for path in (app / "sql.py", app / "migrations" / "0001_initial.py", tmp_path / "tests" / "test_x.py"):
        path.write_text(clean)
    assert sql_outside_sql_modules(tmp_path) == [
        "app/bad.py:2: RawSQL",
        "app/bad.py:4: connection.cursor()",
        "app/bad.py:5: SQL text 'DELETE FROM ? WHERE id = 1'",
        "app/bad.py:5: cursor.execute()",
        "app/bad.py:6: Item.objects.raw()",
        "app/bad.py:6: SQL text 'SELECT * FROM item'",
        "app/bad.py:7: Item.objects.extra()",
        "app/bad.py:8: SQL text 'UPDATE item SET n = 0'",
    ]
