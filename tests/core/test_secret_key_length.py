"""#44: the settings refuse a SECRET_KEY under 50 characters outside DEBUG (a short key can be guessed
offline from any signed cookie or download link); DEBUG and the embedded default's own key still start."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "import django; django.setup(); from django.conf import settings; print(len(settings.SECRET_KEY))"


def start(**extra) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key not in ("SECRET_KEY", "DEBUG")}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings", "DATABASE_URL": "postgres://hypolab@127.0.0.1:5432/x",
                **extra})
    return subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_a_short_key_is_refused_with_debug_off_and_kept_with_debug_on():
    short = start(DEBUG="false", SECRET_KEY="k" * 49)
    assert short.returncode != 0 and "at least 50" in short.stderr and "49 characters" in short.stderr
    assert start(DEBUG="false", SECRET_KEY="k" * 30 + "-long-enough-" + "x" * 20).returncode == 0
    debug = start(DEBUG="true", SECRET_KEY="short")
    assert debug.returncode == 0 and debug.stdout.split()[-1] == "5"
