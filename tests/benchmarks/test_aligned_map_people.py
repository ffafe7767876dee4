"""A top view rotated into the world frame (meta `aligned: true`, uploaded for Hypo3D Table 11) is a
model-run condition: the scene's viewer, studies and release files keep showing the scene's own map,
however recent the aligned one is."""

import pytest

from benchmarks.models import AssetRole
from benchmarks.releases.published import scene_media
from benchmarks.services import scene_asset, store_asset
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


def test_people_are_shown_the_scenes_own_map_not_the_aligned_one():
    item = ItemFactory()
    own = store_asset(item.scene, AssetRole.TOPVIEW_SEMANTIC, "own.png", b"own", {})
    store_asset(item.scene, AssetRole.TOPVIEW_SEMANTIC, "aligned.png", b"aligned", {"aligned": True})
    assert scene_asset(item.scene, AssetRole.TOPVIEW_SEMANTIC) == own
    assert scene_media([item], (AssetRole.TOPVIEW_SEMANTIC,))[(item.scene_id, AssetRole.TOPVIEW_SEMANTIC)] == [own]
