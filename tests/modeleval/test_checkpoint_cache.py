"""One copy of a local checkpoint per worker process: runs on two benchmarks, a judge and drafting
that name the same checkpoint (through model rows with their own settings) load its weights once."""

import pytest

from modeleval import services
from modeleval.clients import adapters
from modeleval.clients.judge import run_judge
from modeleval.models import ModelSpec
from tests.factories import ItemFactory
from tests.needs import need_module
from tests.tiny_vlm import build_tiny_qwen2_vl

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    need_module("torchvision", "Qwen2-VL's processors")
    return str(build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen2-vl")))


@pytest.fixture
def weight_loads(monkeypatch):
    from transformers import AutoModelForImageTextToText

    loads, load = [], AutoModelForImageTextToText.from_pretrained

    def counted(checkpoint, *args, **kwargs):
        loads.append(checkpoint)
        return load(checkpoint, *args, **kwargs)

    monkeypatch.setattr(AutoModelForImageTextToText, "from_pretrained", counted)
    adapters.loaded_checkpoint.cache_clear()
    adapters._cached_adapter.cache_clear()
    yield loads
    adapters.loaded_checkpoint.cache_clear()
    adapters._cached_adapter.cache_clear()


def local_model(name: str, checkpoint: str, **fields) -> ModelSpec:
    return ModelSpec.objects.create(name=name, adapter="hf_local", modality="caption_only", max_new_tokens=2,
                                    config={"checkpoint": checkpoint, "device": "cpu"}, **fields)


def test_two_benchmarks_the_judge_and_drafting_load_the_checkpoint_once(
        checkpoint, weight_loads, django_capture_on_commit_callbacks):
    evaluated = local_model("tiny", checkpoint)
    judge = local_model("tiny as judge", checkpoint, temperature=0.0, seed=7)
    runs = []
    for _ in range(2):  # two benchmarks
        item = ItemFactory()
        with django_capture_on_commit_callbacks(execute=True):
            runs.append(services.launch_run(evaluated.pk, item.benchmark, None))
    for run in runs:
        run.refresh_from_db()
        assert run.status == "finished" and run.predictions.filter(error="").count() == 1
    runs[0].judge_model = judge
    run_judge(runs[0])("Which is left", {"A": "desk", "B": "door"}, "the desk")
    services.complete(judge, "Write one word.")
    assert weight_loads == [checkpoint]
