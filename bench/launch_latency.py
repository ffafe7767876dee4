"""How long Launch takes on a fresh demo: the answer to `POST /api/v1/runs/` and the run's end after it.

Run: .venv/bin/python bench/launch_latency.py   (no arguments)
Builds the demo as `./scripts/demo` does (migrate, seed_demo) on a new SQLite file in a temporary
directory, serves it with `manage.py runserver`, TASKS_IN_THREADS=1 and plain HTTP as the script does, signs in as
the demo admin and launches the random baseline on the Hypo3D and CausalSpatial demos, the server's first
runs. Bounded: each run is waited for at most 120 s. Stops the server and removes the directory.
Last line: `first_launch_s=N first_run_s=N second_launch_s=N second_run_s=N` (wall-clock seconds).
"""

import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests
from seed_demo_time import ROOT, demo_environment, timed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def signed_in(base: str) -> requests.Session:
    session = requests.Session()
    page = session.get(base + "/accounts/login/", timeout=30).text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    session.post(base + "/accounts/login/", data={"username": "admin", "password": "hypolab-demo",
                                                  "csrfmiddlewaretoken": token},
                 headers={"Referer": base + "/accounts/login/"}, timeout=30)
    if "sessionid" not in session.cookies:
        raise SystemExit("could not sign in as the demo admin")
    return session


def launch(session: requests.Session, base: str, model: int, slug: str) -> tuple[float, float]:
    """(seconds until the launch answered, seconds until the run ended)."""
    started = time.monotonic()
    answer = session.post(base + "/api/v1/runs/", json={"model": model, "benchmark": slug}, timeout=120,
                          headers={"X-CSRFToken": session.cookies["csrftoken"], "Referer": base + "/"})
    answered = time.monotonic() - started
    if answer.status_code != 201:
        raise SystemExit(f"launch on {slug}: {answer.status_code} {answer.text[:300]}")
    run = answer.json()["run"]
    while time.monotonic() - started < 120:
        progress = session.get(f"{base}/api/v1/runs/{run}/", timeout=30).json()
        if progress["status"] in ("finished", "failed"):
            return answered, time.monotonic() - started
        time.sleep(0.2)
    raise SystemExit(f"run {run} on {slug} did not end within 120 s")


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="hypolab-launch-bench-"))
    env = demo_environment(work)
    server = None
    try:
        timed(["migrate", "--noinput"], env)
        timed(["seed_demo"], env)
        port = free_port()
        server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                                  cwd=ROOT, env={**env, "TASKS_IN_THREADS": "1", "HTTPS": "false"},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                requests.get(base + "/accounts/login/", timeout=2)
                break
            except requests.ConnectionError:
                time.sleep(0.2)
        session = signed_in(base)
        models = session.get(base + "/api/v1/models/", timeout=30).json()
        models = models.get("results", models) if isinstance(models, dict) else models
        baseline = next(m["id"] for m in models if m["name"].startswith("Random baseline"))
        first = launch(session, base, baseline, "hypo3d-finished")
        second = launch(session, base, baseline, "causalspatial-demo")
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    print(f"first launch answered in {first[0]:.3f} s, its run ended {first[1]:.1f} s after the click")
    print(f"first_launch_s={first[0]:.3f} first_run_s={first[1]:.2f} "
          f"second_launch_s={second[0]:.3f} second_run_s={second[1]:.2f}")


if __name__ == "__main__":
    main()
