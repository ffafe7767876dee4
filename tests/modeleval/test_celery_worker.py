"""A real Celery worker consuming the `gpu` queue through Redis runs a model run end to end."""

import pytest

from config.celery import app as celery_app
from modeleval import services
from modeleval.models import Prediction, Run
from tests.celery_workers import (
    kill_mid_batch,
    needs_services,
    process_env,
    slow_run_items,
    start_worker,
    stop,
    wait_for_end,
)
from tests.factories import ItemFactory

pytestmark = [pytest.mark.real_worker, pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def workers(tmp_path):
    needs_services()
    env = process_env()
    celery_app.control.purge()
    procs = [start_worker(q, env, tmp_path / f"{q}.log") for q in ("gpu", "default")]
    yield tmp_path
    for proc in procs:
        stop(proc)


def test_real_worker_on_gpu_queue_writes_predictions_and_scores(workers):
    first = ItemFactory()
    items = [first] + [ItemFactory(change__scene__benchmark=first.benchmark, answers=[a]) for a in ("desk", "left")]
    run = services.launch_run(services.ensure_baseline_model().pk, first.benchmark, None, batch_size=2)
    wait_for_end(run, 60)
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


def test_killed_gpu_worker_mid_run_loses_and_duplicates_nothing(tmp_path):
    needs_services()
    # Short, so the killed worker's unacknowledged batch comes back within the test without the reaper
    # (the backstop when no beat runs; tests/core/test_faults.py kills a worker with the reaper at work),
    # and swept for every second instead of every 10.
    env = process_env(CELERY_VISIBILITY_TIMEOUT="3", CELERY_UNACKED_RESTORE_S="1")
    celery_app.control.purge()
    model, items = slow_run_items()
    procs = [start_worker("default", env, tmp_path / "default.log"), start_worker("gpu", env, tmp_path / "gpu-1.log")]
    try:
        run = services.launch_run(model.pk, items[0].benchmark, None, batch_size=6, repeats=2)
        in_flight = kill_mid_batch(procs[1], run)
        assert 0 < in_flight < run.total
        procs.append(start_worker("gpu", env, tmp_path / "gpu-2.log"))
        wait_for_end(run, 90)
        logs = "\n".join(p.read_text() for p in tmp_path.glob("*.log"))
        assert run.status == "finished", logs
    finally:
        for proc in procs:
            stop(proc)
    pairs = list(Prediction.objects.filter(run=run).values_list("item_id", "variant", "repeat"))
    assert len(pairs) == len(set(pairs)) == len(items) * 2
    assert "Task modeleval.tasks.infer_batch[" in (tmp_path / "gpu-2.log").read_text()
