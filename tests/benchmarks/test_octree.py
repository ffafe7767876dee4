"""HLPC v3, the octree viewer file of a scan over the viewer's point budget: every point in exactly
one node, nodes within their size and cube, each node's byte range decoding back to its points,
processing choosing the octree above the budget, and the media view answering node ranges only to
those who may see the scene (an annotator without a lease gets 404, as for the whole file)."""

import numpy as np
import pytest
from django.test import Client

from benchmarks.services import store_asset
from scenes import processing
from scenes.pointcloud import (
    OCTREE_VERSION,
    decode_octree_node,
    encode_octree,
    encode_viewer_points,
    octree_nodes,
    read_octree,
)
from tests.factories import SceneFactory, UserFactory

from .test_pointcloud_format import grid_cloud

NODE = 5_000


def quantised_keys(xyz: np.ndarray, header: dict) -> np.ndarray:
    origin, step = np.asarray(header["origin"]), np.asarray(header["step"])
    return np.rint((xyz - origin) / step).astype(np.int64)


def test_every_point_lands_in_exactly_one_node_within_its_size_and_cube():
    xyz, rgb, instance = grid_cloud(60_000)
    data = encode_octree(xyz, rgb, instance, node_points=NODE)
    header = read_octree(data)
    nodes = header["nodes"]
    _, built = octree_nodes(quantised_keys(xyz, header).astype(np.uint16), NODE)

    held = np.concatenate([indices for _, _, indices in built])
    assert len(held) == len(xyz) and (np.sort(held) == np.arange(len(xyz))).all(), "each point once"
    assert header["points"] == 60_000 and sum(node["points"] for node in nodes) == 60_000
    assert nodes[0]["depth"] == 0 and nodes[0]["points"] == NODE
    # Breadth first, and the budget per node: an inner node holds NODE points, a leaf at most NODE.
    assert [node["depth"] for node in nodes] == sorted(node["depth"] for node in nodes)
    cells = {(node["depth"], node["cell"]) for node in nodes}
    for node in nodes:
        children = [(node["depth"] + 1, tuple(2 * c + (k >> a & 1) for a, c in enumerate(node["cell"])))
                    for k in range(8)]
        assert node["points"] == NODE if any(child in cells for child in children) else node["points"] <= NODE
        if node["depth"]:
            assert (node["depth"] - 1, tuple(c // 2 for c in node["cell"])) in cells, "its parent exists"
    # A node's points lie in its cube: cell * side <= q < (cell + 1) * side.
    for node in nodes:
        q = quantised_keys(decode_octree_node(data[node["offset"]:node["offset"] + node["bytes"]], node, header)[0],
                           header)
        side = 2 ** (header["top"] - node["depth"])
        assert ((q >= np.asarray(node["cell"]) * side) & (q < (np.asarray(node["cell"]) + 1) * side)).all()


def test_node_ranges_decode_back_to_the_points_with_colours_and_ids():
    xyz, rgb, instance = grid_cloud(40_000, seed=3)
    data = encode_octree(xyz, rgb, instance, node_points=NODE)
    header = read_octree(data)
    assert header["nodes"][-1]["offset"] + header["nodes"][-1]["bytes"] == len(data), "ranges tile the file"
    decoded = [decode_octree_node(data[n["offset"]:n["offset"] + n["bytes"]], n, header) for n in header["nodes"]]
    key = lambda points: [tuple(row) for row in quantised_keys(points, header)]  # noqa: E731
    original = dict(zip(key(xyz), zip(map(tuple, rgb), instance, strict=True), strict=True))
    back = {}
    for points, colours, ids in decoded:
        back.update(zip(key(points), zip(map(tuple, colours), ids, strict=True), strict=True))
    assert back == original
    # The root is a uniform sample: it spans the cloud as the whole does.
    root = decoded[0][0]
    assert np.allclose(root.mean(axis=0), xyz.mean(axis=0), atol=0.05 * np.ptp(xyz, axis=0).max())
    assert encode_octree(xyz, rgb, instance, node_points=NODE) == data, "deterministic"
    with pytest.raises(ValueError, match="v3"):
        read_octree(encode_viewer_points(xyz, rgb, instance))
    with pytest.raises(ValueError, match="truncated"):
        read_octree(data[:60])


def test_coincident_points_stop_at_the_finest_cell():
    """Points one quantisation step apart cannot be split further: the finest cells keep them all."""
    xyz = np.zeros((5 * NODE, 3), dtype=np.float32)
    xyz[::2] = [0.001, 0.001, 0.001]
    header = read_octree(encode_octree(xyz, np.zeros((len(xyz), 3), np.uint8), np.zeros(len(xyz)), NODE))
    assert header["top"] == 1 and sum(node["points"] for node in header["nodes"]) == len(xyz)
    assert [(node["depth"], node["cell"]) for node in header["nodes"]] == [(0, (0, 0, 0)), (1, (0, 0, 0)),
                                                                         (1, (1, 1, 1))]


@pytest.mark.django_db
def test_processing_writes_an_octree_above_the_budget(settings, tmp_path, monkeypatch,
                                                      django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    monkeypatch.setattr(processing, "VIEWER_BUDGET_POINTS", 30_000)
    xyz, rgb, instance = grid_cloud(40_000)
    scene = SceneFactory()
    with django_capture_on_commit_callbacks(execute=True):
        points, _, _ = processing.build_viewer_assets(scene, xyz, rgb, instance, [])
    assert points.meta["version"] == OCTREE_VERSION and points.meta["points"] == 40_000
    with points.file.open("rb") as handle:
        header = read_octree(handle.read())
    assert points.meta["nodes"] == len(header["nodes"]) and points.meta["depth"] >= 0


@pytest.mark.django_db
def test_node_ranges_are_served_only_to_those_who_may_see_the_scene(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    xyz, rgb, instance = grid_cloud(20_000)
    data = encode_octree(xyz, rgb, instance, node_points=NODE)
    header = read_octree(data)
    asset = store_asset(SceneFactory(), "viewer_points", "scene.hlpc", data)
    node = header["nodes"][-1]
    ask = {"HTTP_RANGE": f"bytes={node['offset']}-{node['offset'] + node['bytes'] - 1}"}

    reviewer = Client()
    reviewer.force_login(UserFactory(role="reviewer"))
    response = reviewer.get(asset.file.url, **ask)
    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes {node['offset']}-{node['offset'] + node['bytes'] - 1}/{len(data)}"
    section = b"".join(response.streaming_content)
    assert len(decode_octree_node(section, node, header)[0]) == node["points"]

    annotator = Client()
    annotator.force_login(UserFactory(role="annotator"))  # no lease on the scene
    assert annotator.get(asset.file.url, **ask).status_code == 404
    assert Client().get(asset.file.url, **ask).status_code == 404
