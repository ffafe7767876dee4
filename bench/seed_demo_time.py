"""How long the demo takes to build: `migrate` and `seed_demo` on a fresh embedded default.

Run: .venv/bin/python bench/seed_demo_time.py   (no arguments)
Each command runs as `./scripts/demo` runs it, in its own `manage.py` process, on a new SQLite file and
media folder in a temporary directory (removed afterwards), with REDIS_URL unset so tasks run in-process.
A second `seed_demo` on the same database checks the seed is idempotent and times it.
Last line: `seed_demo_s=N migrate_s=N reseed_s=N` (wall-clock seconds, process start included).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _database import bench_key

ROOT = Path(__file__).resolve().parent.parent


def timed(args: list[str], env: dict) -> float:
    started = time.monotonic()
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if result.returncode:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"manage.py {' '.join(args)} failed ({result.returncode})")
    return elapsed


def demo_environment(work: Path) -> dict[str, str]:
    """The demo's embedded default (SQLite, a local media folder, tasks in-process) in `work`."""
    env = {key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "S3_BUCKET")}
    env.update({"DATABASE_URL": f"sqlite:///{work / 'hypolab.sqlite3'}", "MEDIA_ROOT": str(work / "media"),
                "SECRET_KEY": bench_key()})
    return env


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="hypolab-seed-bench-"))
    env = demo_environment(work)
    try:
        migrate_s = timed(["migrate", "--noinput"], env)
        seed_s = timed(["seed_demo"], env)
        reseed_s = timed(["seed_demo"], env)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"migrate: {migrate_s:.1f} s, seed_demo: {seed_s:.1f} s, seed_demo again: {reseed_s:.1f} s")
    print(f"seed_demo_s={seed_s:.2f} migrate_s={migrate_s:.2f} reseed_s={reseed_s:.2f}")


if __name__ == "__main__":
    main()
