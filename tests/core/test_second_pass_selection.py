"""./scripts/test's second pass (PostgreSQL) leaves out the tests that use no database, no service and no
browser when the SQLite pass ran them (DATABASE_FREE_TESTS_RAN): they would run the same again. Every
test that reaches a database, a service or a browser stays."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = ("tests/scoring/test_scoring_engine.py", "tests/benchmarks/test_media_access.py",
         "tests/core/test_cluster_settings.py", "tests/browser/test_demo_results.py")


def collected(**env) -> list[str]:
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "-p", "no:xdist", *FILES], cwd=ROOT, capture_output=True, text=True,
                         env={**{k: v for k, v in os.environ.items() if k != "DATABASE_FREE_TESTS_RAN"}, **env})
    assert run.returncode == 0, run.stdout + run.stderr
    return [line for line in run.stdout.splitlines() if "::" in line]


def test_the_second_pass_keeps_database_service_and_browser_tests_only():
    second = collected(DATABASE_FREE_TESTS_RAN="1")
    assert not any(test.startswith("tests/scoring/") for test in second)  # no database: ran in pass 1
    assert any("media_access" in test for test in second) and any("browser" in test for test in second)
    # a Redis test among settings tests stays: the SQLite pass deselects it (marker services)
    assert any("cluster_settings" in test for test in second)
