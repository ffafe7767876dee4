"""The map's arrows as a test (../shared/ARCHITECTURE.md, docs/ARCHITECTURE.md "Rooms and arrows"):
every import in the project's code, at module level or inside a function, is read from the source and
checked against the rooms it may touch, so the layout cannot drift without this failing."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

STAGES = {"annotation", "construction", "review", "humaneval", "modeleval"}
OURS = {"config", "core", "crowd", "benchmarks", "scenes", "results", "scoring", "frontend", "demo"} | STAGES

# room -> the rooms it may import (itself always). A stage may also call another stage's services.py,
# read through its selectors.py or connect to its signals.py.
MAY_IMPORT = {
    "scoring": set(),
    "core": {"scoring"},
    "crowd": {"core"},
    "benchmarks": {"core", "scoring"},
    "scenes": {"benchmarks", "core", "scoring"},
    **{stage: {"benchmarks", "scenes", "core", "crowd", "scoring"} for stage in STAGES},
    "results": {"benchmarks", "core", "scoring", "humaneval", "modeleval"},
    # the demo builds its benchmarks through every room's services, as a research team would; only the
    # pages import it (the home and login list its accounts)
    "demo": OURS - {"config", "frontend", "demo"},
}


def imported_modules(path: Path):
    """(line, dotted module) for every import of the file, relative ones resolved."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            # `from app import services` names the module services
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"


def code_files(room: str):
    return [p for p in (ROOT / room).rglob("*.py") if "migrations" not in p.parts]


def allowed(room: str, module: str) -> bool:
    target = module.split(".")[0]
    if target not in OURS or target == room:
        return True
    if target in MAY_IMPORT[room]:
        return True
    # one stage asks another only through that stage's services or selectors, or reacts to its signals
    return room in STAGES and target in STAGES and module.split(".")[1:2] in (["services"], ["selectors"], ["signals"])


def violations(room: str) -> list[str]:
    found = []
    for path in code_files(room):
        for line, module in imported_modules(path):
            if not allowed(room, module):
                found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return found


@pytest.mark.parametrize("room", sorted(MAY_IMPORT))
def test_room_imports_only_what_the_map_allows(room):
    assert (ROOT / room).is_dir()
    assert violations(room) == []


def test_crowd_serves_both_annotation_and_humaneval():
    for stage in ("annotation", "humaneval"):
        modules = {module for path in code_files(stage) for _, module in imported_modules(path)}
        assert any(module.split(".")[0] == "crowd" for module in modules), f"{stage} does not use crowd"


def stage_arrows() -> set[tuple[str, str]]:
    """(importer, imported) for each stage that imports anything of another stage."""
    return {(stage, module.split(".")[0]) for stage in STAGES for path in code_files(stage)
            for _, module in imported_modules(path) if module.split(".")[0] in STAGES - {stage}}


def both_ways(arrows: set[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted((first, second) for first, second in arrows if (second, first) in arrows and first < second)


def test_stages_depend_one_way():
    """Between two stages the calls go one way: review reacts to annotation's signals and may call its
    services; annotation imports nothing of review."""
    arrows = stage_arrows()
    assert both_ways(arrows) == []
    assert ("annotation", "review") not in arrows
    assert ("review", "annotation") in arrows  # the arrows are read: review does use annotation


def test_the_checker_sees_stages_both_ways(tmp_path, monkeypatch):
    for stage, module in (("annotation", "review.services"), ("review", "annotation.signals")):
        (tmp_path / stage).mkdir()
        (tmp_path / stage / "uses.py").write_text(f"import {module}\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert both_ways(stage_arrows()) == [("annotation", "review")]


def test_the_checker_sees_a_violation(tmp_path, monkeypatch):
    """A planted import of a stage from scoring is caught (the rule cannot pass by reading nothing)."""
    room = tmp_path / "scoring"
    room.mkdir()
    (room / "bad.py").write_text("def f():\n    from humaneval.models import Study\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert violations("scoring") == ["scoring/bad.py:2 imports humaneval.models.Study"]


def test_a_stage_reads_another_through_its_selectors_and_nothing_else_of_it():
    assert allowed("construction", "review.selectors.yes_or_no")
    assert allowed("construction", "review.services.search_duplicates")
    assert not allowed("construction", "review.complements.flipped_answers")
