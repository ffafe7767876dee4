"""Tasks are sent by name (core.sending): a dispatch module never imports its app's tasks.py, so the
verbs that send and the tasks that call them do not import each other."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from celery.exceptions import NotRegistered

from core import sending

ROOT = Path(__file__).resolve().parents[2]


def test_a_task_whose_module_no_one_imported_yet_is_found_by_its_name():
    # a fresh process, as a web server is: nothing has imported crowd.tasks
    script = ("import django; django.setup(); import sys; from core import sending; "
              "assert 'crowd.tasks' not in sys.modules; "
              "print(sending.task('crowd.tasks.run_prolific_verb').name, 'crowd.tasks' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"})
    assert out.stdout.split() == ["crowd.tasks.run_prolific_verb", "True"], out.stderr[-2000:]


def test_a_name_no_task_has_is_refused_at_once():
    with pytest.raises(NotRegistered):
        sending.task("crowd.tasks.no_such_task")


@pytest.mark.parametrize("app", ["benchmarks", "construction", "crowd", "humaneval", "review"])
def test_dispatch_never_imports_tasks(app):
    tree = ast.parse((ROOT / app / "dispatch.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {"tasks", f"{app}.tasks"} & imported
