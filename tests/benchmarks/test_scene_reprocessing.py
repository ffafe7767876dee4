"""A scene whose processing died is processed again (issue #34): the reaper finds scans stored long ago
with no viewer files, sends each once per period and at most MAX_PROCESSING_ATTEMPTS times, and leaves
processed and fresh scenes alone."""

from datetime import timedelta

import pytest
from django.utils import timezone

from benchmarks.models import Asset, AssetRole, Scene
from benchmarks.services import store_asset
from scenes import tasks
from scenes.processing import MAX_PROCESSING_ATTEMPTS
from tests.factories import SceneFactory

pytestmark = pytest.mark.django_db


def scan(scene, age_s: float):
    asset = store_asset(scene, AssetRole.POINT_CLOUD, "scan.ply", b"ply\n")
    Asset.objects.filter(pk=asset.pk).update(created_at=timezone.now() - timedelta(seconds=age_s))


def test_the_reaper_sends_a_dead_scenes_processing_again(settings, monkeypatch):
    settings.SCENE_PROCESSING_STALE_S = 600
    sent = []
    monkeypatch.setattr(tasks.dispatch, "send_scene_processing", sent.append)
    died, fresh, done = SceneFactory(), SceneFactory(), SceneFactory()
    scan(died, 3600)
    scan(fresh, 10)
    scan(done, 3600)
    store_asset(done, AssetRole.VIEWER_POINTS, "done.hlpc", b"HLPC")

    assert tasks.reprocess_stalled_scenes() == [died.pk] and sent == [died.pk]
    assert tasks.reprocess_stalled_scenes() == []  # sent already in this period
    for _ in range(MAX_PROCESSING_ATTEMPTS + 2):  # each period again, up to the bound
        Scene.objects.filter(pk=died.pk).update(meta={**Scene.objects.get(pk=died.pk).meta,
                                                      "processing_sent_at": "2000-01-01T00:00:00+00:00"})
        tasks.reprocess_stalled_scenes()
    assert sent == [died.pk] * MAX_PROCESSING_ATTEMPTS
