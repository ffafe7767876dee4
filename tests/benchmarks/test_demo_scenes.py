"""The procedural demo: point clouds, the viewer binary, top-view maps and the benchmark they fill."""

import hashlib
import io
import re

import numpy as np
import pytest
from django.template.loader import render_to_string
from PIL import Image

from benchmarks.models import Asset, AssetRole, Benchmark, Scene, SceneObject, WorldFrame
from demo.rooms import generate_room
from demo.sandbox import build_demo_benchmark
from scenes.pointcloud import decode_viewer_points
from scenes.topview import render_topview
from scenes.viewer import scene_viewer_data

FRAME_TEXT = re.compile(r"^The (?P<label>[a-z ]+) is to the (?P<side>left|right|front|back) of the scene\.$")


@pytest.fixture(scope="module")
def rooms():
    return [generate_room(i) for i in range(3)]


def image_pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_each_room_has_200k_points_and_instance_ids_name_its_objects(rooms):
    for room in rooms:
        assert len(room.xyz) >= 200_000
        assert room.xyz.dtype == np.float32 and room.rgb.dtype == np.uint8 and room.instance.dtype == np.uint16
        object_ids = {o["instance_id"] for o in room.objects}
        assert set(np.unique(room.instance).tolist()) == object_ids | {0}
        labels = [o["label"] for o in room.objects if o["label"] != "chair"]
        assert len(labels) == len(set(labels)), "labels other than chair are unique within a room"
        for obj in room.objects:
            points = room.xyz[room.instance == obj["instance_id"]]
            low = np.subtract(obj["center"], np.divide(obj["size"], 2)) - 0.01
            high = np.add(obj["center"], np.divide(obj["size"], 2)) + 0.01
            assert ((points >= low) & (points <= high)).all(), f"{obj['label']} points lie in its box"


def test_rooms_differ_and_floor_lies_on_the_xy_plane(rooms):
    assert len({room.room_type for room in rooms}) == 3
    for room in rooms:
        structure = room.xyz[room.instance == 0]
        assert np.isclose(structure[:, 2].min(), 0.0)
        assert room.xyz[:, 2].max() > 2.0, "walls stand up along +Z"


def test_decoding_refuses_a_file_that_is_not_hlpc():
    with pytest.raises(ValueError, match="HLPC"):
        decode_viewer_points(b"PLY!" + bytes(40))


def test_topview_shows_the_highest_point_per_pixel():
    xyz = np.array([[0, 0, 0.0], [0, 0, 1.0], [1, 1, 0.0]], dtype=np.float32)
    rgb = np.array([[255, 0, 0], [0, 0, 255], [0, 255, 0]], dtype=np.uint8)
    png, meta = render_topview(xyz, rgb, [], size_px=64)
    pixels = image_pixels(png)
    assert pixels.shape == (meta["height"], meta["width"], 3)
    xmin, ymin, xmax, ymax = meta["bounds"]
    col = int((0 - xmin) / (xmax - xmin) * meta["width"])
    row = int((ymax - 0) / (ymax - ymin) * meta["height"])
    assert tuple(pixels[row, col]) == (0, 0, 255)


def test_semantic_topview_differs_from_plain_and_boxes_sit_on_projected_centroids(rooms):
    room = rooms[1]
    plain_png, plain = render_topview(room.xyz, room.rgb, room.objects)
    semantic_png, semantic = render_topview(room.xyz, room.rgb, room.objects, semantic=True)
    assert plain == semantic, "both maps share one pixel grid and label data"
    plain_pixels, semantic_pixels = image_pixels(plain_png), image_pixels(semantic_png)
    assert plain_pixels.shape == semantic_pixels.shape == (plain["height"], plain["width"], 3)
    assert (plain_pixels != semantic_pixels).any(axis=2).mean() > 0.005
    assert max(plain["width"], plain["height"]) == 512

    xmin, ymin, xmax, ymax = plain["bounds"]
    by_id = {o["instance_id"]: o for o in room.objects}
    assert {e["instance_id"] for e in plain["labels"]} == set(by_id)
    for entry in plain["labels"]:
        obj = by_id[entry["instance_id"]]
        assert entry["label"] == obj["label"]
        expected_x = (obj["center"][0] - xmin) / (xmax - xmin) * plain["width"]
        expected_y = (ymax - obj["center"][1]) / (ymax - ymin) * plain["height"]
        assert abs(entry["x"] - expected_x) <= 1 and abs(entry["y"] - expected_y) <= 1
        left, top, right, bottom = entry["box"]
        assert 0 <= left <= entry["x"] <= right < plain["width"]
        assert 0 <= top <= entry["y"] <= bottom < plain["height"]


def test_semantic_topview_draws_a_label_where_the_plain_map_shows_the_object(rooms):
    room = rooms[0]
    plain_png, meta = render_topview(room.xyz, room.rgb, room.objects)
    semantic_png, _ = render_topview(room.xyz, room.rgb, room.objects, semantic=True)
    plain, semantic = image_pixels(plain_png), image_pixels(semantic_png)
    for entry in meta["labels"]:
        x, y = entry["x"], entry["y"]
        window = np.s_[max(y - 4, 0) : y + 5, max(x - 12, 0) : x + 13]
        assert (plain[window] != semantic[window]).any(), f"no label drawn for {entry['label']}"


@pytest.mark.django_db
def test_build_demo_benchmark_creates_scenes_objects_frames_and_assets(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    benchmark = build_demo_benchmark()

    assert benchmark.family == "hypo3d" and benchmark.name == "Hypo3D demo"
    scenes = list(benchmark.scenes.all())
    assert [s.external_id for s in scenes] == ["demo_room_01", "demo_room_02", "demo_room_03"]
    for scene in scenes:
        labels = set(scene.scene_objects.values_list("label", flat=True))
        assert scene.scene_objects.count() >= 8
        assert any(label in scene.caption for label in labels)

        frames = list(scene.world_frames.all())
        assert len(frames) == 1
        match = FRAME_TEXT.match(frames[0].text)
        assert match and match["label"] in labels
        assert frames[0].anchor.scene == scene and frames[0].anchor.label == match["label"]
        assert frames[0].side == match["side"]

        assets = {a.role: a for a in scene.assets.all()}
        assert set(assets) == {AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC}
        for asset in assets.values():
            with asset.file.open("rb") as handle:
                content = handle.read()
            assert asset.size == len(content) > 0
            assert asset.sha256 == hashlib.sha256(content).hexdigest()

        with assets[AssetRole.VIEWER_POINTS].file.open("rb") as handle:
            xyz, _, instance = decode_viewer_points(handle.read())
        assert len(xyz) >= 200_000
        object_ids = set(scene.scene_objects.values_list("instance_id", flat=True))
        assert set(np.unique(instance).tolist()) == object_ids | {0}

        plain_meta = assets[AssetRole.TOPVIEW_PLAIN].meta
        assert {e["instance_id"] for e in plain_meta["labels"]} == object_ids
        with assets[AssetRole.TOPVIEW_PLAIN].file.open("rb") as handle:
            assert image_pixels(handle.read()).shape[:2] == (plain_meta["height"], plain_meta["width"])


def row_counts() -> list[int]:
    models = [Benchmark, Scene, SceneObject, WorldFrame, Asset]
    return [model.objects.count() for model in models]


@pytest.mark.django_db
def test_build_demo_benchmark_is_idempotent(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    first = build_demo_benchmark(points_per_room=200_000)
    counts = row_counts()

    again = build_demo_benchmark(points_per_room=200_000)

    assert again.pk == first.pk
    assert counts[:2] == [1, 3]
    assert row_counts() == counts


@pytest.mark.django_db
def test_scene_viewer_data_gives_urls_map_frames_and_objects(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    scene = build_demo_benchmark(points_per_room=200_000).scenes.get(external_id="demo_room_01")

    data = scene_viewer_data(scene)

    assert data["scene_id"] == scene.pk and data["external_id"] == "demo_room_01"
    assert data["caption"] == scene.caption
    assert data["points_url"].endswith(".hlpc")
    assert data["topview_plain_url"].endswith(".png") and data["topview_semantic_url"].endswith(".png")
    assert data["map"] == scene.assets.get(role=AssetRole.TOPVIEW_PLAIN).meta
    assert data["world_frames"] == [scene.world_frames.get().text]
    assert [(o["instance_id"], o["label"]) for o in data["objects"]] == [
        (o.instance_id, o.label) for o in scene.scene_objects.all()
    ]


@pytest.mark.django_db
def test_scene_viewer_data_gives_none_for_missing_assets():
    benchmark = Benchmark.objects.create(name="Bare", slug="bare", family="hypo3d")
    scene = benchmark.scenes.create(external_id="scene0000_00")

    data = scene_viewer_data(scene)

    assert data["points_url"] is None and data["topview_plain_url"] is None
    assert data["topview_semantic_url"] is None and data["map"] is None
    assert data["world_frames"] == [] and data["objects"] == []


@pytest.mark.django_db
def test_scene_viewer_partial_passes_the_data_and_mounts_both_modules(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    scene = build_demo_benchmark(points_per_room=200_000).scenes.first()

    html = render_to_string("frontend/_scene_viewer.html", {"viewer": scene_viewer_data(scene)})

    assert 'id="scene-viewer-data"' in html and "data-topview" in html and "data-pointcloud" in html
    assert "vendor/hypolab/pointcloud-viewer.js" in html and "vendor/hypolab/scene-viewer.js" in html
    script = (settings.BASE_DIR / "frontend/static/hypolab/pages/scene-viewer.js").read_text()
    assert "mountPointCloudViewer(" in script and "mountTopView(" in script
