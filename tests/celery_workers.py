"""Real Celery workers and beat as subprocesses on the test database and Redis, and the run that the
tests killing a GPU worker mid-batch share."""

import os
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.db import connection

from modeleval import services
from modeleval.models import Prediction, Run
from tests.factories import ItemFactory
from tests.needs import need

ROOT = Path(__file__).resolve().parents[1]


def needs_services():
    need(bool(settings.REDIS_URL) and connection.vendor == "postgresql", "REDIS_URL and PostgreSQL")


def process_env(**extra) -> dict:
    """This process's environment pointed at the test database and media folder, plus `extra`."""
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        # this process's key: a server with DEBUG off needs one, and links it signs open here too
        "SECRET_KEY": settings.SECRET_KEY,
        **extra,
    }


def start_worker(queue: str, env: dict, log: Path) -> subprocess.Popen:
    """One solo worker on `queue`, named after its log file (gpu@gpu-1), logging to `log`."""
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queue, "--pool", "solo",
         "--concurrency", "1", "--hostname", f"{queue}@{log.stem}", "--without-heartbeat", "--without-gossip",
         "--without-mingle", "--loglevel", "INFO"],
        cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
    )


def start_beat(env: dict, folder: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "beat", "-s", str(folder / "celerybeat-schedule"),
         "--loglevel", "INFO"],
        cwd=ROOT, env=env, stdout=(folder / "beat.log").open("w"), stderr=subprocess.STDOUT,
    )


def stop(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def slow_run_items():
    """Twelve items and the baseline model answering each after 150 ms: a batch of six lasts long enough
    to kill its worker halfway."""
    first = ItemFactory()
    items = [first] + [ItemFactory(change__scene__benchmark=first.benchmark) for _ in range(11)]
    model = services.ensure_baseline_model()
    model.config = {"latency_ms": 150}
    model.save()
    return model, items


def kill_mid_batch(worker: subprocess.Popen, run: Run) -> int:
    """SIGKILL (no warm shutdown: its batch stays unacknowledged in Redis) once the run has three
    predictions; how many it had then."""
    deadline = time.monotonic() + 60
    while Prediction.objects.filter(run=run).count() < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    worker.kill()
    worker.wait(timeout=10)
    return Prediction.objects.filter(run=run).count()


def wait_for_end(run: Run, seconds: float) -> None:
    """Until the run has finished or failed, for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status in (Run.Status.FINISHED, Run.Status.FAILED):
            return
        time.sleep(0.3)
