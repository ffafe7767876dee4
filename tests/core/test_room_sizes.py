"""No source file outside migrations grows past 600 lines (issues 20 and 32): Python modules, page
scripts, stylesheets, templates and the tests themselves alike, so that a room (or a test module) that
starts to hold two things shows here."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 600
SOURCES = {".py", ".js", ".css", ".html"}
# Not ours to size: installed packages, what the setup step bundles or collects, and generated migrations.
SKIP = {".venv", "node_modules", "vendor", "staticfiles", "migrations", ".git", "__pycache__"}


def oversized() -> list[str]:
    found = []
    for path in ROOT.rglob("*"):
        relative = path.relative_to(ROOT)
        if path.suffix not in SOURCES or SKIP & set(relative.parts) or not path.is_file():
            continue
        lines = len(path.read_text(encoding="utf-8", errors="replace").splitlines())
        if lines > MAX_LINES:
            found.append(f"{relative}: {lines} lines")
    return found


def test_no_source_file_outside_migrations_is_over_600_lines():
    assert not oversized(), "\n".join(oversized())
