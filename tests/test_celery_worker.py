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

ROOT = Path(__file__).resolve().parent.parent

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
