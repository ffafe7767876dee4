"""A real Celery worker consuming the `gpu` queue through Redis runs a model run end to end."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from config.celery import app as celery_app
from modeleval import services
from modeleval.models import Prediction, Run
from tests.factories import ItemFactory

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.real_worker, pytest.mark.services, pytest.mark.django_db(transaction=True)]


def start_worker(queue: str, env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queue, "--pool", "solo",
         "--concurrency", "1", "--hostname", f"{queue}@test", "--without-heartbeat", "--without-gossip",
         "--without-mingle", "--loglevel", "INFO"],
        cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
    )


@pytest.fixture
def workers(tmp_path):
    if not settings.REDIS_URL or connection.vendor != "postgresql":
        pytest.skip("needs REDIS_URL and PostgreSQL (run ./scripts/test)")
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }
    celery_app.control.purge()
    procs = [start_worker(q, env, tmp_path / f"{q}.log") for q in ("gpu", "default")]
    yield tmp_path
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=20)


def test_real_worker_on_gpu_queue_writes_predictions_and_scores(workers):
    first = ItemFactory()
    items = [first] + [ItemFactory(change__scene__benchmark=first.benchmark, answers=[a]) for a in ("desk", "left")]
    run = services.launch_run(services.ensure_baseline_model().pk, first.benchmark, None, batch_size=2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status in ("finished", "failed"):
            break
        time.sleep(0.3)
    logs = "\n".join(p.read_text() for p in workers.glob("*.log"))
    assert run.status == "finished", logs
    assert Prediction.objects.filter(run=run).count() == len(items)
    assert set(run.scores["overall"]) >= {"EM", "PM"}
    # The inference batches were executed by the worker that consumes only the gpu queue.
    gpu_log = (workers / "gpu.log").read_text()
    assert "Task modeleval.tasks.infer_batch[" in gpu_log and "succeeded" in gpu_log
    default_log = (workers / "default.log").read_text()
    assert "Task modeleval.tasks.infer_batch[" not in default_log
    assert "Task modeleval.tasks.score_run[" in default_log
    assert Run.objects.get(pk=run.pk).predictions.exclude(error="").count() == 0


def predictions_count(run) -> int:
    return Prediction.objects.filter(run=run).count()


def test_killed_gpu_worker_mid_run_loses_and_duplicates_nothing(tmp_path):
    if not settings.REDIS_URL or connection.vendor != "postgresql":
        pytest.skip("needs REDIS_URL and PostgreSQL (run ./scripts/test)")
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        # Short, so the killed worker's unacknowledged batch comes back within the test without the reaper
        # (the backstop when no beat runs; tests/test_faults.py kills a worker with the reaper at work).
        "CELERY_VISIBILITY_TIMEOUT": "3",
    }
    celery_app.control.purge()
    first = ItemFactory()
    items = [first] + [ItemFactory(change__scene__benchmark=first.benchmark) for _ in range(11)]
    model = services.ensure_baseline_model()
    model.config = {"latency_ms": 150}
    model.save()
    default_worker = start_worker("default", env, tmp_path / "default.log")
    doomed = start_worker("gpu", env, tmp_path / "gpu-1.log")
    successor = None
    try:
        run = services.launch_run(model.pk, first.benchmark, None, batch_size=6, repeats=2)
        deadline = time.monotonic() + 60
        while predictions_count(run) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        doomed.kill()  # SIGKILL: no warm shutdown, the batch in flight stays unacknowledged
        doomed.wait(timeout=10)
        in_flight = predictions_count(run)
        assert 0 < in_flight < run.total
        successor = start_worker("gpu", {**env}, tmp_path / "gpu-2.log")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            run.refresh_from_db()
            if run.status == "finished":
                break
            time.sleep(0.3)
        logs = "\n".join(p.read_text() for p in tmp_path.glob("*.log"))
        assert run.status == "finished", logs
    finally:
        for proc in (default_worker, doomed, successor):
            if proc and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=20)
    pairs = list(Prediction.objects.filter(run=run).values_list("item_id", "variant", "repeat"))
    assert len(pairs) == len(set(pairs)) == len(items) * 2
    assert "Task modeleval.tasks.infer_batch[" in (tmp_path / "gpu-2.log").read_text()
