"""HLPC v2: disjoint decimated levels, Morton order, delta / byte-plane coding under gzip, and the
processing step that turns a cloud into a scene's viewer assets."""

import numpy as np
import pytest

from benchmarks.models import Asset, AssetRole, Benchmark, SceneObject, WorldFrame
from demo.rooms import generate_room
from demo.sandbox import build_demo_benchmark
from scenes.pointcloud import (
    FIRST_LEVEL_POINTS,
    HEADER,
    MIN_STEP,
    REFINE_LEVEL_POINTS,
    decode_viewer_points,
    encode_viewer_points,
    level_split,
    morton_order,
    quantisation,
    read_header,
)
from scenes.processing import DERIVED_ROLES, build_viewer_assets
from scenes.viewer import scene_viewer_data


def grid_cloud(n: int, seed: int = 0):
    """n distinct points on the 1 mm grid, each point's colour and id a function of its position."""
    rng = np.random.default_rng(seed)
    cells = rng.choice(4000 * 3000 * 2000, size=n, replace=False)
    q = np.column_stack([cells % 4000, cells // 4000 % 3000, cells // 12_000_000]).astype(np.int64)
    xyz = (q * MIN_STEP + [-1.0, 2.0, 0.0]).astype(np.float32)
    rgb = np.column_stack([q[:, 0] % 256, q[:, 1] % 256, (q[:, 0] + q[:, 2]) % 256]).astype(np.uint8)
    instance = ((q[:, 0] // 100) % 60).astype(np.uint16)
    return xyz, rgb, instance


def test_round_trip_keeps_every_point_with_its_colour_and_instance_within_half_a_step():
    xyz, rgb, instance = grid_cloud(250_000)
    decoded_xyz, decoded_rgb, decoded_instance = decode_viewer_points(encode_viewer_points(xyz, rgb, instance))

    origin, step = quantisation(xyz)
    key = lambda points: [tuple(row) for row in np.rint((points - origin) / step).astype(np.int64)]  # noqa: E731
    original = dict(zip(key(xyz), zip(map(tuple, rgb), instance, strict=True), strict=True))
    decoded = dict(zip(key(decoded_xyz), zip(map(tuple, decoded_rgb), decoded_instance, strict=True), strict=True))
    assert len(decoded_xyz) == len(xyz) and decoded == original
    for axis in range(3):
        error = np.abs(np.sort(decoded_xyz[:, axis]) - np.sort(xyz[:, axis]))
        assert error.max() <= step[axis] / 2 + 1e-6


def test_levels_are_disjoint_a_uniform_sample_first_and_morton_ordered():
    xyz, rgb, instance = grid_cloud(250_000)
    data = encode_viewer_points(xyz, rgb, instance)
    header = read_header(data)
    counts = [points for points, _ in header["levels"]]
    assert counts == [FIRST_LEVEL_POINTS, 250_000 - FIRST_LEVEL_POINTS]
    assert len(data) == HEADER.size + 8 * len(counts) + sum(size for _, size in header["levels"])

    decoded_xyz, _, _ = decode_viewer_points(data)
    origin, step = quantisation(xyz)
    q = np.rint((decoded_xyz - origin) / step).astype(np.uint16)
    assert len({tuple(row) for row in q}) == len(q), "no point is stored twice"
    first = q[:FIRST_LEVEL_POINTS]
    assert (morton_order(first) == np.arange(len(first))).all()
    # A uniform sample: the first level covers the cloud's extent like the whole does.
    assert np.allclose(first.mean(axis=0), q.mean(axis=0), rtol=0.02)


def test_a_million_points_split_into_a_first_level_and_equal_refinements_covering_all():
    levels = level_split(1_000_000)
    assert [len(level) for level in levels] == [FIRST_LEVEL_POINTS] + [300_000] * 3
    assert all(len(level) <= REFINE_LEVEL_POINTS for level in levels[1:])
    assert (np.sort(np.concatenate(levels)) == np.arange(1_000_000)).all()


def test_a_million_point_room_takes_at_most_six_bytes_per_point():
    room = generate_room(0, points_per_room=1_000_000)
    data = encode_viewer_points(room.xyz, room.rgb, room.instance)
    assert len(data) / 1_000_000 <= 6.0


def test_small_clouds_make_one_level_and_flat_or_empty_clouds_decode():
    xyz = np.array([[0, 0, 0.5], [2, 1, 0.5], [1, 3, 0.5]], dtype=np.float32)
    rgb = np.array([[1, 2, 3], [250, 0, 7], [9, 9, 9]], dtype=np.uint8)
    instance = np.array([0, 65535, 7], dtype=np.uint16)
    data = encode_viewer_points(xyz, rgb, instance)
    assert [n for n, _ in read_header(data)["levels"]] == [3]
    decoded_xyz, decoded_rgb, decoded_instance = decode_viewer_points(data)
    order = np.argsort(decoded_instance)
    assert np.allclose(decoded_xyz[order], xyz[[0, 2, 1]], atol=MIN_STEP)
    assert (decoded_rgb[order] == rgb[[0, 2, 1]]).all() and decoded_instance[order].tolist() == [0, 7, 65535]

    empty = decode_viewer_points(encode_viewer_points(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0)))
    assert [len(part) for part in empty] == [0, 0, 0]


def test_encoding_is_deterministic_and_bad_input_is_refused():
    xyz, rgb, instance = grid_cloud(1000)
    assert encode_viewer_points(xyz, rgb, instance) == encode_viewer_points(xyz, rgb, instance)
    with pytest.raises(ValueError, match="same N"):
        encode_viewer_points(xyz, rgb[:10], instance)
    with pytest.raises(ValueError, match="0..65535"):
        encode_viewer_points(xyz, rgb, instance.astype(np.int64) + 70_000)
    data = encode_viewer_points(xyz, rgb, instance)
    with pytest.raises(ValueError):
        decode_viewer_points(data[:-20])
    with pytest.raises(ValueError, match="HLPC"):
        decode_viewer_points(data[:10])


@pytest.mark.django_db
def test_build_viewer_assets_replaces_the_derived_assets_and_their_files(
    settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    benchmark = Benchmark.objects.create(name="Scans", slug="scans", family="hypo3d")
    scene = benchmark.scenes.create(external_id="scene0001_00")
    room = generate_room(1, points_per_room=150_000)
    with django_capture_on_commit_callbacks(execute=True):
        first = build_viewer_assets(scene, room.xyz, room.rgb, room.instance, room.objects)
    with django_capture_on_commit_callbacks(execute=True):
        second = build_viewer_assets(scene, room.xyz, room.rgb, room.instance, room.objects)

    assert [a.role for a in second] == list(DERIVED_ROLES)
    assert set(Asset.objects.filter(scene=scene).values_list("pk", flat=True)) == {a.pk for a in second}
    for old in first:
        assert not old.file.storage.exists(old.file.name), "the replaced asset's file is gone"
    points, plain, semantic = second
    assert points.meta["points"] == 150_000 and points.meta["levels"] == [FIRST_LEVEL_POINTS, 50_000]
    with points.file.open("rb") as handle:
        assert len(decode_viewer_points(handle.read())[0]) == 150_000
    labels = {(e["instance_id"], e["label"]) for e in semantic.meta["labels"]}
    assert labels == {(o["instance_id"], o["label"]) for o in room.objects} and plain.meta["labels"]


@pytest.mark.django_db
def test_scene_viewer_data_gives_object_boxes_and_the_world_frame_for_the_compass(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    scene = build_demo_benchmark(n_rooms=1, points_per_room=120_000).scenes.get()
    frame = WorldFrame.objects.get(scene=scene)

    data = scene_viewer_data(scene)

    assert data["world_frame"] == {"anchor_instance_id": frame.anchor.instance_id, "side": frame.side}
    desk = SceneObject.objects.get(scene=scene, label="desk")
    box = next(o for o in data["objects"] if o["instance_id"] == desk.instance_id)
    assert box == {"instance_id": desk.instance_id, "label": "desk", "center": list(desk.center),
                   "size": [desk.size_x, desk.size_y, desk.size_z], "yaw": desk.yaw}
    assert scene.assets.get(role=AssetRole.VIEWER_POINTS).meta["version"] == 2
