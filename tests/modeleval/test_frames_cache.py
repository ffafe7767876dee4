"""Video frames decoded once (scenes/frames.py): a frame set (video, count, size) is
decoded in one pass, stored as an asset, and read by every item, variant, repeat and run after."""

import pytest

from benchmarks.models import Asset, AssetRole
from benchmarks.services import store_asset
from modeleval import services
from modeleval.models import ModelSpec
from scenes import frames
from tests.clips import clip_bytes
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory
from tests.latency_endpoint import LatencyEndpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint():
    endpoint = LatencyEndpoint(reply=lambda body: "A")
    yield endpoint
    endpoint.close()


@pytest.fixture
def decodes(monkeypatch):
    calls, sample = [], frames.sample_frames

    def counted(video, n, size, *args):
        calls.append((n, tuple(size)))
        return sample(video, n, size, *args)

    monkeypatch.setattr(frames, "sample_frames", counted)
    frames._frame_set.cache_clear()
    yield calls
    frames._frame_set.cache_clear()


def test_a_frame_set_is_decoded_once_for_three_items_two_repeats_and_the_next_run(
        endpoint, decodes, django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="m3verse")
    scene = SceneFactory(benchmark=benchmark, object_labels=[])
    for which, pattern in (("before", "testsrc"), ("after", "smptebars")):
        store_asset(scene, AssetRole.VIDEO, f"{which}.mp4", clip_bytes(pattern=pattern), {"which": which})
    for i in range(3):
        ItemFactory(change=None, scene=scene, benchmark=benchmark, answer_format="single", answers=["A"],
                    question=f"What changed between the two videos ({i})?", choices=["the cup", "the lamp"])
    model = ModelSpec.objects.create(name="video model", adapter="openai_compatible", modality="video_frames",
                                     config={"endpoint": endpoint.url, "n_frames": 4, "frame_size": [32, 24]})
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(model.pk, benchmark, None, repeats=2)
    run.refresh_from_db()
    assert run.status == "finished" and run.predictions.filter(error="").count() == 6
    assert decodes == [(4, (32, 24)), (4, (32, 24))]  # one pass per video, for six requests
    sent = [request["body"]["messages"][0]["content"][1:] for request in endpoint.requests]
    assert len(sent) == 6 and all(images == sent[0] and len(images) == 8 for images in sent)
    stored = Asset.objects.filter(role=AssetRole.VIDEO_FRAMES)
    assert sorted(a.meta["set"] for a in stored) == ["4@32x24", "4@32x24"]

    # Another run, in a process that holds no frame set: the stored sets are read, nothing is decoded.
    frames._frame_set.cache_clear()
    with django_capture_on_commit_callbacks(execute=True):
        again = services.launch_run(model.pk, benchmark, None)
    again.refresh_from_db()
    assert again.status == "finished" and len(decodes) == 2
    assert endpoint.requests[-1]["body"]["messages"][0]["content"][1:] == sent[0]


def test_frames_are_sampled_at_the_centres_of_equal_slices():
    # A 1 s clip at 10 fps: four slices' centres are 0.125, 0.375, 0.625 and 0.875 s, when the frames
    # of 0.1, 0.3, 0.6 and 0.8 s are on screen.
    clip = clip_bytes(pattern="testsrc")
    sampled = frames.sample_frames(clip, 4, (96, 64))
    every = frames.sample_frames(clip, 10, (96, 64))  # one frame per slice: each frame once
    assert len(set(every)) == 10
    assert sampled == [every[1], every[3], every[6], every[8]]
