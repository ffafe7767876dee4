"""What a session page is given to show: images with overlays and the before/after pair with its fps."""

import pytest

from benchmarks.services import store_asset
from humaneval.services.stimuli import stimulus_files
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


def test_paired_videos_come_with_the_probed_frame_rate():
    item = ItemFactory()
    store_asset(item.scene, "video", "before.mp4", b"before", {"which": "before", "fps": 25.0})
    store_asset(item.scene, "video", "after.mp4", b"after", {"which": "after", "fps": 25.0})
    videos = stimulus_files(item)["videos"]
    assert videos["fps"] == 25.0
    assert videos["before"].endswith("before.mp4") and videos["after"].endswith("after.mp4")


def test_one_video_alone_is_no_pair():
    item = ItemFactory()
    store_asset(item.scene, "video", "before.mp4", b"before", {"which": "before", "fps": 25.0})
    assert stimulus_files(item)["videos"] is None
