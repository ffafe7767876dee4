"""The local transformers adapter honours a run's settings: temperature, max tokens and each
repeat's own seed reach generate() (a tiny randomly initialised Qwen2-VL on the CPU)."""

import io

import pytest
from PIL import Image

from benchmarks.services import store_asset
from modeleval import services
from modeleval.clients.adapters import load_adapter, model_settings_key
from modeleval.models import ModelSpec
from tests.factories import ItemFactory
from tests.needs import need_module
from tests.tiny_vlm import build_tiny_qwen2_vl

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    need_module("torchvision", "Qwen2-VL's processors")
    return str(build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen2-vl")))


def test_temperature_max_tokens_and_repeat_seeds_reach_generate(checkpoint, django_capture_on_commit_callbacks):
    import torch

    item = ItemFactory()
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 30, 30)).save(buffer, format="PNG")
    store_asset(item.scene, "image", "view.png", buffer.getvalue())
    model = ModelSpec.objects.create(name="tiny-local", adapter="hf_local", modality="image", max_new_tokens=128,
                                     config={"checkpoint": checkpoint, "device": "cpu", "generation_batch": 4})
    adapter = load_adapter(model.pk, model_settings_key(model), item.benchmark_id)
    calls, generate = [], adapter.model.generate

    def recorded(**kwargs):
        calls.append({"seed": torch.initial_seed(), "rows": len(kwargs["input_ids"]),
                      **{k: kwargs.get(k) for k in ("max_new_tokens", "do_sample", "temperature", "top_p")}})
        return generate(**kwargs)

    adapter.model.generate = recorded
    settings = {"temperature": 1.5, "top_p": 0.95, "max_tokens": 6}
    with django_capture_on_commit_callbacks(execute=True):
        sampled = services.launch_run(model.pk, item.benchmark, None, repeats=2, settings=settings)
    sampled.refresh_from_db()
    assert sampled.status == "finished", list(sampled.predictions.values_list("error", flat=True))
    seeds = sorted(sampled.predictions.values_list("seed", flat=True))
    assert len(set(seeds)) == 2
    assert sorted(call["seed"] for call in calls) == seeds  # each repeat sampled under its own seed
    assert all(call["rows"] == 1 and call["max_new_tokens"] == 6 and call["do_sample"] is True
               and call["temperature"] == 1.5 and call["top_p"] == 0.95 for call in calls)
    outputs = list(sampled.predictions.order_by("repeat").values_list("output", flat=True))
    assert outputs[0] != outputs[1]

    calls.clear()
    with django_capture_on_commit_callbacks(execute=True):
        greedy = services.launch_run(model.pk, item.benchmark, None, repeats=2, settings={"max_tokens": 4})
    greedy.refresh_from_db()
    assert [(c["rows"], c["max_new_tokens"], c["do_sample"]) for c in calls] == [(2, 4, False)]  # one batch
    outputs = list(greedy.predictions.values_list("output", flat=True))
    assert outputs[0] == outputs[1]
