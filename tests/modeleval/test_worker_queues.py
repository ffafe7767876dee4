"""Batches of a model go to the GPU workers that hold it (`gpu.<worker_queue>`), and a local checkpoint
loads only on a GPU worker: a prompt for one from anywhere else is answered by such a worker."""

import pytest

from config.celery import app as celery_app
from core.errors import DomainError
from modeleval import dispatch, services
from modeleval.clients import adapters
from modeleval.clients.secrets import check_model_config
from modeleval.models import ModelSpec, Prediction
from tests.celery_workers import needs_services, process_env, start_worker, stop, wait_for_end
from tests.factories import ItemFactory
from tests.needs import need_module
from tests.tiny_vlm import build_tiny_qwen2_vl


@pytest.mark.django_db
def test_a_model_names_the_queue_of_its_workers():
    assert dispatch.inference_queue(ModelSpec(name="a", config={})) == "gpu"
    assert dispatch.inference_queue(ModelSpec(name="b", config={"worker_queue": "qwen2-vl-7b"})) == "gpu.qwen2-vl-7b"


@pytest.mark.parametrize("queue", ["GPU", "a b", "x" * 65, 7, "-lead", "gpu.other"])
def test_a_worker_queue_that_no_worker_could_be_named_is_refused(queue):
    with pytest.raises(DomainError) as refused:
        check_model_config("random_baseline", {"worker_queue": queue})
    assert refused.value.field == "config" and "worker_queue" in str(refused.value)


@pytest.mark.django_db
def test_the_models_api_refuses_a_bad_worker_queue(admin_client):
    response = admin_client.post("/api/v1/models/", {"name": "m", "adapter": "random_baseline",
                                                     "config": {"worker_queue": "Not A Queue"}},
                                 content_type="application/json")
    assert response.status_code == 400 and "worker_queue" in response.content.decode()


@pytest.mark.real_worker
@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_two_models_each_run_on_the_worker_that_holds_it(tmp_path):
    needs_services()
    env = process_env()
    celery_app.control.purge()
    procs = [start_worker(queue, env, tmp_path / f"{queue}.log") for queue in ("gpu.alpha", "gpu.beta", "default")]
    try:
        first = ItemFactory()
        for answer in ("desk", "left", "door"):
            ItemFactory(change__scene__benchmark=first.benchmark, answers=[answer])
        models = {name: ModelSpec.objects.create(name=f"baseline on {name}", adapter="random_baseline",
                                                 config={"worker_queue": name}) for name in ("alpha", "beta")}
        runs = {name: services.launch_run(model.pk, first.benchmark, None, batch_size=2)
                for name, model in models.items()}
        for run in runs.values():
            wait_for_end(run, 60)
    finally:
        for proc in procs:
            stop(proc)
    logs = {name: (tmp_path / f"gpu.{name}.log").read_text() for name in ("alpha", "beta")}
    for name, run in runs.items():
        assert run.status == "finished", logs[name]
        assert Prediction.objects.filter(run=run).count() == 4
        # two batches of two, each on its own model's worker, none on the other's
        other = "beta" if name == "alpha" else "alpha"
        assert logs[name].count("infer_batch[") >= 2 * 2  # received + succeeded lines for both batches
        assert f"args=({run.pk}," not in logs[other] and "infer_batch" in logs[other]


@pytest.mark.real_worker
@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_prompt_for_a_local_checkpoint_is_answered_by_a_gpu_worker_never_loaded_here(tmp_path, settings):
    needs_services()
    need_module("torchvision", "Qwen2-VL's processors")
    checkpoint = str(build_tiny_qwen2_vl(tmp_path / "tiny"))
    settings.LOCAL_CHECKPOINTS = False  # this process is a web or default-queue process
    adapters.loaded_checkpoint.cache_clear()
    adapters._cached_adapter.cache_clear()
    model = ModelSpec.objects.create(name="tiny", adapter="hf_local", modality="caption_only", max_new_tokens=2,
                                     config={"checkpoint": checkpoint, "device": "cpu", "worker_queue": "tiny"})
    celery_app.control.purge()
    worker = start_worker("gpu.tiny", process_env(LOCAL_CHECKPOINTS="1"), tmp_path / "gpu.tiny.log")
    try:
        answer = services.complete(model, "Write one word.")
    finally:
        stop(worker)
    log = (tmp_path / "gpu.tiny.log").read_text()
    assert isinstance(answer, str) and "complete_prompt[" in log and "succeeded" in log, log
    assert adapters.loaded_checkpoint.cache_info().currsize == 0  # nothing loaded in this process
    with pytest.raises(RuntimeError, match="only on GPU workers"):
        adapters.loaded_checkpoint(checkpoint, "float32", "cpu")
