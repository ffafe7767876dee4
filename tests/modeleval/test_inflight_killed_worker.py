"""A GPU worker killed while its endpoint requests are in flight: after the reaper hands its batch to
another worker, every (item, variant, repeat) has exactly one prediction."""

import pytest

from config.celery import app as celery_app
from modeleval import services
from modeleval.models import ModelSpec, Prediction, Run
from modeleval.runs import inflight
from tests.celery_workers import (
    kill_mid_batch,
    needs_services,
    process_env,
    start_beat,
    start_worker,
    stop,
    wait_for_end,
)
from tests.factories import ItemFactory
from tests.latency_endpoint import LatencyEndpoint

pytestmark = [pytest.mark.real_worker, pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def endpoint():
    needs_services()
    conn = inflight.client()
    for key in [inflight.index_key(), *conn.scan_iter(f"{inflight.index_key()}:*")]:
        conn.delete(key)
    # 0.5 s per answer, two at a time: a batch of six items and two repeats lasts about 3 s, and its
    # first predictions are written after about a second, with requests still open.
    endpoint = LatencyEndpoint(latency_s=0.5, reply=lambda body: "window")
    yield endpoint
    endpoint.close()


def test_a_worker_killed_with_requests_in_flight_leaves_each_prediction_once(endpoint, tmp_path):
    env = process_env(CELERY_VISIBILITY_TIMEOUT="3600", INFERENCE_STALE_S="6", INFERENCE_HEARTBEAT_S="1",
                      INFERENCE_REAPER_S="3")
    celery_app.control.purge()
    first = ItemFactory()
    items = [first] + [ItemFactory(change__scene__benchmark=first.benchmark) for _ in range(11)]
    model = ModelSpec.objects.create(name="served", adapter="openai_compatible", modality="caption_only",
                                     config={"endpoint": endpoint.url, "max_in_flight": 2})
    procs = {"default": start_worker("default", env, tmp_path / "default.log"), "beat": start_beat(env, tmp_path),
             "doomed": start_worker("gpu", env, tmp_path / "gpu-1.log")}
    try:
        run = services.launch_run(model.pk, first.benchmark, None, batch_size=6, repeats=2)
        stored_at_kill = kill_mid_batch(procs["doomed"], run)
        assert 0 < stored_at_kill < run.total
        procs["successor"] = start_worker("gpu", env, tmp_path / "gpu-2.log")
        wait_for_end(run, 120)
        logs = "\n".join(f"--- {p.name}\n{p.read_text()}" for p in sorted(tmp_path.glob("*.log")))
        assert run.status == Run.Status.FINISHED, logs
    finally:
        for proc in procs.values():
            stop(proc)
    keys = list(Prediction.objects.filter(run=run).values_list("item_id", "variant", "repeat"))
    assert len(keys) == len(set(keys)) == len(items) * 2
    assert not Prediction.objects.filter(run=run).exclude(error="").exists()
    assert len(endpoint.requests) >= len(items) * 2  # the killed batch's open requests were asked again
