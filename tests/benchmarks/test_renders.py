"""Camera views rendered from a stored scan (scenes/renders.py): real offscreen OpenGL
(pyrender on OSMesa), checked by what each picture shows."""

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchmarks.models import Asset, AssetRole
from benchmarks.services import store_asset
from scenes import renders
from scenes.scans import write_points_ply
from tests.factories import SceneFactory
from tests.needs import need_module

RED, BLUE, FLOOR = (220, 30, 30), (30, 30, 220), (150, 150, 150)


def block(lo, hi, n, rng):
    return rng.uniform(lo, hi, (n, 3))


def room_with_two_boxes():
    """A 6 x 4 m floor, a red box against the +x wall and a blue one against the -x wall."""
    rng = np.random.default_rng(3)
    floor = np.c_[rng.uniform([0, 0], [6, 4], (40_000, 2)), np.zeros(40_000)]
    red = block([5.2, 1.5, 0], [5.9, 2.5, 1.8], 20_000, rng)
    blue = block([0.1, 1.5, 0], [0.8, 2.5, 1.8], 20_000, rng)
    xyz = np.vstack([floor, red, blue]).astype(np.float32)
    rgb = np.array([FLOOR] * len(floor) + [RED] * len(red) + [BLUE] * len(blue), dtype=np.uint8)
    return xyz, rgb


def share_of(png: bytes, colour) -> float:
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).reshape(-1, 3).astype(int)
    return float((np.abs(pixels - colour).sum(axis=1) < 40).mean())


@pytest.fixture
def scene(db):
    scene = SceneFactory()
    xyz, rgb = room_with_two_boxes()
    store_asset(scene, AssetRole.POINT_CLOUD, "scan.ply", write_points_ply(xyz, rgb, np.zeros(len(xyz), np.uint16)))
    return scene


def test_egocentric_views_look_where_their_pose_says(scene):
    views = renders.view_set(scene, "egocentric:4")
    assert [asset.meta["index"] for asset in views] == [0, 1, 2, 3]
    pictures = [asset.file.open("rb").read() for asset in views]
    assert Image.open(io.BytesIO(pictures[0])).size == renders.DEFAULT_SIZE
    # view 0 turns to +x (the red box), view 2 to -x (the blue one)
    assert share_of(pictures[0], RED) > 0.02 and share_of(pictures[0], BLUE) == 0
    assert share_of(pictures[2], BLUE) > 0.02 and share_of(pictures[2], RED) == 0
    pose = np.array(views[0].meta["pose"])
    assert np.allclose(pose[:3, 3][:2], [3.0, 2.0], atol=0.01)  # from the room's centre
    assert pose[2, 3] == pytest.approx(renders.EYE_HEIGHT, abs=0.01)  # at eye height above the floor


def test_multi_view_cameras_stand_inside_the_room_and_look_at_its_centre(scene):
    views = renders.view_set(scene, "multi_view:4")
    for asset in views:
        pose = np.array(asset.meta["pose"])
        eye, forward = pose[:3, 3], -pose[:3, 2]
        assert 0 < eye[0] < 6 and 0 < eye[1] < 4
        to_centre = np.array([3.0, 2.0]) - eye[:2]
        assert np.dot(forward[:2], to_centre) / np.linalg.norm(forward[:2]) / np.linalg.norm(to_centre) > 0.99
        assert asset.meta["intrinsics"]["width"] == 640
    # every view sees the floor; the two boxes are each seen from somewhere
    pictures = [asset.file.open("rb").read() for asset in views]
    assert all(share_of(p, FLOOR) > 0.05 for p in pictures)
    assert max(share_of(p, RED) for p in pictures) > 0.01 and max(share_of(p, BLUE) for p in pictures) > 0.01


def test_a_view_set_is_rendered_once(scene):
    first = renders.view_set(scene, "multi_view:2")
    again = renders.view_set(scene, "multi_view:2")
    assert [a.pk for a in again] == [a.pk for a in first]
    assert Asset.objects.filter(scene=scene, role=AssetRole.RENDER).count() == 2


def test_a_half_written_set_is_rendered_again_whole(scene):
    first = renders.view_set(scene, "egocentric:3")
    first[1].delete()
    again = renders.view_set(scene, "egocentric:3")
    assert len(again) == 3 and Asset.objects.filter(scene=scene, role=AssetRole.RENDER).count() == 3


@pytest.mark.parametrize("name", ["multi_view", "multi_view:0", "multi_view:99", "orbit:4", "multi_view:x"])
def test_unknown_view_sets_are_refused(name):
    with pytest.raises(renders.RenderError):
        renders.parse_view_set(name)


def test_scannet_pose_files_are_read_in_opencv_axes():
    # a ScanNet camera at (1, 2, 1.5) looking along world +y: its +z (forward) axis is world +y
    text = "1 0 0 1\n0 0 1 2\n0 -1 0 1.5\n0 0 0 1\n"
    pose = renders.pose_from_file(text)
    assert np.allclose(pose[:3, 3], [1, 2, 1.5])
    assert np.allclose(-pose[:3, 2], [0, 1, 0])  # OpenGL looks down -z
    assert np.allclose(pose[:3, 1], [0, 0, 1])  # and +y is up
    with pytest.raises(renders.RenderError):
        renders.pose_from_file("-inf " * 16)


RENDER_THEN_TORCHVISION = """
import numpy as np
from scenes import renders
renders.render_views(np.random.rand(500, 3).astype(np.float32), np.full((500, 3), 128, np.uint8),
                     [renders.look_at(np.array([2.0, 2.0, 2.0]), np.zeros(3))], size=(64, 48))
import torchvision.models  # a vision model's loading path, after the render (torch._dynamo reaches Triton)
print("loaded")
"""


def test_a_process_that_rendered_can_load_a_vision_model_afterwards():
    """Mesa's LLVM and Triton's clash when Triton is loaded second: without renders loading Triton first
    the child process dies of a segfault at `import torchvision.models`."""
    need_module("torchvision", "a vision model's loading path")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    setup = "import django; django.setup()\n"
    done = subprocess.run([sys.executable, "-c", setup + RENDER_THEN_TORCHVISION], cwd=Path(__file__).parents[2],
                          env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and "loaded" in done.stdout, done.stderr[-2000:]
