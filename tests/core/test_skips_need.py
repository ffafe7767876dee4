"""A test skips for a missing program, package, model or service only through tests/needs.py, which fails it
under CI=true (.ci/run sets it): a skip CI cannot see would hide a missing install step."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A skip whose reason says something is missing: the words tests/needs.py is there to say.
MISSING = re.compile(r"""(importorskip\(|(pytest\.skip|skipif)\([^)]*["'](needs|missing|requires|install))""", re.I)


def test_no_skip_for_a_missing_thing_bypasses_needs():
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name == "needs.py" or path == Path(__file__):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if MISSING.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == [], "use tests.needs.need / need_module:\n" + "\n".join(found)


def _run(tmp_path, ci: str | None) -> subprocess.CompletedProcess:
    (tmp_path / "test_missing.py").write_text(
        "from tests.needs import need, need_module\n\n"
        "def test_program():\n    need(False, 'the program frobnicate')\n\n"
        "def test_package():\n    need_module('no_such_package_here')\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(ROOT)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:django",
                           "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path / "test_missing.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_missing_thing_fails_under_ci_and_skips_elsewhere(tmp_path):
    under_ci = _run(tmp_path, "true")
    assert under_ci.returncode == 1, under_ci.stdout
    assert "2 failed" in under_ci.stdout
    assert "the program frobnicate is missing" in under_ci.stdout
    assert "the Python package no_such_package_here is missing" in under_ci.stdout
    by_hand = _run(tmp_path, None)
    assert by_hand.returncode == 0 and "2 skipped" in by_hand.stdout, by_hand.stdout


def test_ci_run_sets_ci():
    assert re.search(r"^export CI=true$", (ROOT / ".ci" / "run").read_text(), re.M)
