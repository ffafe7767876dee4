"""A bench needs no arguments and no settings from outside (the bench rules): a bench names its database
and runs with DEBUG off, so it makes the key that the settings then demand (config/settings.py)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STARTS_DJANGO = (
    "import os, sys; sys.path.insert(0, 'bench'); import _database; "
    "os.environ.update(_database.database_environment('hypolab_bench_probe')); "
    "import django; django.setup(); from django.conf import settings; print(len(settings.SECRET_KEY))"
)


def test_a_bench_on_postgresql_starts_django_with_no_key_given():
    env = {key: value for key, value in os.environ.items()
           if key not in ("SECRET_KEY", "DEBUG", "DJANGO_SETTINGS_MODULE", "DATABASE_URL")}
    started = subprocess.run([sys.executable, "-c", STARTS_DJANGO], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
    assert started.returncode == 0, started.stderr[-2000:]
    assert int(started.stdout.split()[-1]) >= 50  # its own key for the run, not a shipped one


def test_a_key_given_from_outside_is_kept(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    monkeypatch.setenv("SECRET_KEY", "given-from-outside")
    import _database

    assert _database.database_environment("x")["SECRET_KEY"] == "given-from-outside"


def test_the_demo_bench_starts_django_with_no_key_given(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    monkeypatch.delenv("SECRET_KEY", raising=False)
    import seed_demo_time

    env = {key: value for key, value in seed_demo_time.demo_environment(tmp_path).items() if key != "DEBUG"}
    started = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT,
                             env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"}, capture_output=True,
                             text=True, timeout=120)
    assert started.returncode == 0, started.stderr[-2000:]
