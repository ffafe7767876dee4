"""An interrupted first install is redone, not stuck: a venv made without pip (Ctrl-C during
`python -m venv`) used to fail every later ./scripts/demo with `.venv/bin/pip: No such file or directory`."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_setup_makes_a_venv_without_pip_again(tmp_path):
    setup = (ROOT / "scripts" / "setup").read_text()
    venv_step = re.search(r"^PYTHON=.*?^fi$", setup, re.M | re.S).group(0)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", ".venv"], cwd=tmp_path, check=True)
    assert subprocess.run([".venv/bin/python", "-m", "pip", "--version"], cwd=tmp_path,
                          capture_output=True).returncode != 0
    subprocess.run(["bash", "-euc", venv_step], cwd=tmp_path, check=True, timeout=120,
                   env={"PATH": "/usr/bin:/bin", "PYTHON": sys.base_prefix + "/bin/python3"})
    pip = subprocess.run([".venv/bin/python", "-m", "pip", "--version"], cwd=tmp_path, capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr
