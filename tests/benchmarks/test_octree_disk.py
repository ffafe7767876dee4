"""The out-of-core octree (scenes/octree_disk.py): the same HLPC v3 bytes as the in-memory
builder for the same cloud, whether the nodes are split through spill files or finished in memory;
from a PLY mapped chunk by chunk; every point in exactly one node when points repeat; and LAS/LAZ
read in chunks giving what the whole-file reader gives."""

import numpy as np
import pytest

from scenes.las import las_chunks, read_las, read_las_file
from scenes.octree_disk import array_chunks, build_octree_file
from scenes.pointcloud import decode_octree_node, encode_octree, read_octree
from scenes.scans import ScanError, ply_chunks, read_ply, write_points_ply

from .test_import_las import las_bytes
from .test_pointcloud_format import grid_cloud

NODE = 2_000


@pytest.mark.parametrize("memory_points", [4_000, 20_000, 10_000_000])
def test_out_of_core_bytes_equal_the_in_memory_builders(tmp_path, memory_points):
    xyz, rgb, instance = grid_cloud(60_000, seed=3)
    meta = build_octree_file(array_chunks(xyz, rgb, instance, chunk_points=7_000), tmp_path / "cloud.hlpc",
                             node_points=NODE, memory_points=memory_points)

    expected = encode_octree(xyz, rgb, instance, node_points=NODE)
    assert (tmp_path / "cloud.hlpc").read_bytes() == expected
    header = read_octree(expected)
    assert meta["points"] == 60_000 and meta["nodes"] == len(header["nodes"])
    assert meta["depth"] == max(node["depth"] for node in header["nodes"])
    assert list(tmp_path.iterdir()) == [tmp_path / "cloud.hlpc"], "no spill file is left behind"


def test_a_ply_read_chunk_by_chunk_gives_the_same_octree(tmp_path):
    xyz, rgb, instance = grid_cloud(30_000, seed=5)
    path = tmp_path / "scan.ply"
    path.write_bytes(write_points_ply(xyz, rgb, instance))
    parts = list(ply_chunks(path, chunk_points=4_000)())
    assert [len(part[0]) for part in parts] == [4_000] * 7 + [2_000]
    whole = read_ply(path.read_bytes())
    for mine, theirs in zip((np.concatenate([p[i] for p in parts]) for i in range(3)), whole, strict=True):
        assert np.array_equal(mine, theirs)

    build_octree_file(ply_chunks(path, chunk_points=4_000), tmp_path / "scan.hlpc", node_points=NODE,
                      memory_points=5_000)
    assert (tmp_path / "scan.hlpc").read_bytes() == encode_octree(*whole, node_points=NODE)


def test_a_truncated_ply_is_refused_before_any_work(tmp_path):
    xyz, rgb, instance = grid_cloud(1_000)
    path = tmp_path / "cut.ply"
    path.write_bytes(write_points_ply(xyz, rgb, instance)[:-100])
    with pytest.raises(ScanError, match="truncated"):
        ply_chunks(path)


def test_repeated_points_each_land_in_exactly_one_node(tmp_path):
    """Points sharing a position (and priorities tied at a node's threshold) are neither lost nor
    held twice: the decoded nodes hold the cloud's multiset of (position, colour, id)."""
    rng = np.random.default_rng(9)
    base = rng.uniform(0, 5, (6_000, 3)).astype(np.float32)
    xyz = np.concatenate([base] * 5)  # every position five times, with different colours
    rgb = rng.integers(0, 256, (len(xyz), 3)).astype(np.uint8)
    instance = rng.integers(0, 40, len(xyz)).astype(np.uint16)
    meta = build_octree_file(array_chunks(xyz, rgb, instance, chunk_points=3_333), tmp_path / "dup.hlpc",
                             node_points=1_000, memory_points=2_500)

    data = (tmp_path / "dup.hlpc").read_bytes()
    header = read_octree(data)
    assert sum(node["points"] for node in header["nodes"]) == len(xyz) == meta["points"]
    decoded = [decode_octree_node(data[n["offset"]:n["offset"] + n["bytes"]], n, header) for n in header["nodes"]]
    q = np.rint((np.concatenate([d[0] for d in decoded]) - header["origin"]) / header["step"]).astype(np.int64)
    got = np.column_stack([q, np.concatenate([d[1] for d in decoded]), np.concatenate([d[2] for d in decoded])])
    q_in = np.rint((xyz - np.asarray(header["origin"], dtype=np.float32)) / np.asarray(header["step"],
                   dtype=np.float32)).astype(np.int64)
    wanted = np.column_stack([q_in, rgb, instance])
    assert np.array_equal(np.unique(got, axis=0, return_counts=True)[1].sum(), len(xyz))
    assert np.array_equal(got[np.lexsort(got.T)], wanted[np.lexsort(wanted.T)])
    for node in header["nodes"]:
        assert node["points"] <= 1_000


@pytest.mark.parametrize("compressed", [False, True])
def test_a_las_or_laz_file_read_in_chunks_equals_the_whole_file_read(tmp_path, compressed):
    path = tmp_path / ("site.laz" if compressed else "site.las")
    path.write_bytes(las_bytes(compressed=compressed))
    chunks, origin = las_chunks(path, chunk_points=128)
    parts = list(chunks())
    assert len(parts) == 8 and all(len(p[0]) <= 128 for p in parts)
    xyz, rgb, instance, whole_origin = read_las(path.read_bytes())
    assert origin == whole_origin
    assert np.allclose(np.concatenate([p[0] for p in parts]), xyz, atol=1e-6)
    assert np.array_equal(np.concatenate([p[1] for p in parts]), rgb)

    file_xyz, file_rgb, file_instance, file_origin = read_las_file(path, chunk_points=100)
    assert np.allclose(file_xyz, xyz, atol=1e-6) and np.array_equal(file_rgb, rgb)
    assert not file_instance.any() and file_origin == origin


def test_an_unreadable_las_file_is_refused(tmp_path):
    path = tmp_path / "bad.las"
    path.write_bytes(b"LASF" + b"\0" * 50)
    with pytest.raises(ScanError, match="LAS/LAZ"):
        las_chunks(path)


@pytest.mark.django_db
def test_a_scan_over_the_in_memory_limit_is_processed_from_its_file(monkeypatch):
    from benchmarks.models import AssetRole
    from benchmarks.services import store_asset
    from scenes import processing
    from scenes.tasks import process_scene
    from tests.factories import SceneFactory

    xyz, rgb, instance = grid_cloud(40_000, seed=8)
    scene = SceneFactory()
    store_asset(scene, AssetRole.POINT_CLOUD, "scan.ply", write_points_ply(xyz, rgb, instance), {"points": 40_000})
    monkeypatch.setattr(processing, "OUT_OF_CORE_POINTS", 10_000)
    monkeypatch.setattr(processing, "TOPVIEW_POINTS", 5_000)  # the top views drawn from a sample, as for 10M+
    monkeypatch.setattr("scenes.tasks.load_scene_points",
                        lambda scene: pytest.fail("the scan must not be loaded whole"))

    process_scene.apply(args=[scene.pk]).get()

    points = scene.assets.get(role=AssetRole.VIEWER_POINTS)
    with points.file.open("rb") as handle:
        assert handle.read() == encode_octree(xyz, rgb, instance)
    assert points.meta["points"] == 40_000 and points.size == points.file.size
    assert scene.assets.filter(role__in=[AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC]).count() == 2
    monkeypatch.setattr(processing, "OUT_OF_CORE_POINTS", 40_000)
    assert processing.build_large_scene_assets(scene) is None, "at or under the limit: the in-memory path"
