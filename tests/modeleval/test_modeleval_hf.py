"""The local transformers adapter, on a tiny randomly initialised Qwen2-VL built by the test,
through the real loading path, on an image item and a paired-video (frames) item, on the CPU."""

import io

import pytest
from PIL import Image

from benchmarks.services import store_asset
from modeleval import services
from modeleval.models import ModelSpec, Prediction
from tests.clips import clip_bytes
from tests.factories import ItemFactory
from tests.needs import need_module
from tests.tiny_vlm import build_tiny_qwen2_vl

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    need_module("torchvision", "Qwen2-VL's processors")
    return str(build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen2-vl")))


def png(colour) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def test_tiny_qwen2_vl_answers_image_and_video_items_and_the_run_is_scored(
        checkpoint, django_capture_on_commit_callbacks):
    image_item = ItemFactory()
    store_asset(image_item.scene, "image", "view.png", png((200, 30, 30)))
    video_item = ItemFactory(change__scene__benchmark=image_item.benchmark)
    store_asset(video_item.scene, "video", "before.mp4", clip_bytes())
    store_asset(video_item.scene, "video", "after.mp4", clip_bytes())
    for modality, extra in (("image", {}), ("video_frames", {"n_frames": 2, "frame_size": [56, 56]})):
        model = ModelSpec.objects.create(
            name=f"tiny-qwen2-vl-{modality}", adapter="hf_local", modality=modality, max_new_tokens=4,
            config={"checkpoint": checkpoint, "device": "cpu", "generation_batch": 2, **extra},
        )
        with django_capture_on_commit_callbacks(execute=True):
            run = services.launch_run(model.pk, image_item.benchmark, None)
        run.refresh_from_db()
        assert run.status == "finished", list(run.predictions.values_list("error", flat=True))
        assert run.scores["n_items"] == 2 and "EM" in run.scores["overall"]
        by_item = {p.item_id: p for p in Prediction.objects.filter(run=run)}
        # The item whose scene has the stimulus is answered; the other records why it could not be.
        answered = image_item if modality == "image" else video_item
        other = video_item if modality == "image" else image_item
        assert by_item[answered.pk].error == "" and by_item[answered.pk].prompt_sha256
        assert "LookupError" in by_item[other.pk].error


def test_batched_generation_matches_one_at_a_time(checkpoint):
    from modeleval.clients.adapters import HFLocal
    from modeleval.prompting.prompts import InferenceRequest

    adapter = HFLocal(checkpoint, max_new_tokens=3, device="cpu")
    requests = [InferenceRequest(prompt="the answer", images=[png((10, 200, 10))]),
                InferenceRequest(prompt="left or right", images=[png((10, 10, 200))])]
    items = [ItemFactory(), ItemFactory()]
    batched = adapter.answer_batch(requests, items, [0, 0])
    assert batched == [adapter.answer(r, i) for r, i in zip(requests, items, strict=True)]
