"""Scans are stored in Hypo3D's aligned frame (floor on XY, Z up, walls on the axes) with oriented
object boxes: ScanNet's axisAlignment applied exactly when given, else estimated from the scan.

The scan is a synthetic room written here: floor, four walls, a table, a sofa turned 30 degrees and
a cabinet, the whole room turned 20 degrees about Z, tilted 3 degrees and moved, as a ScanNet-style
mesh (faces) or a plain point cloud (no faces)."""

import json
import math

import numpy as np
import pytest
from django.core.management import call_command

from benchmarks.models import AssetRole, SceneObject
from demo.files import ply_bytes
from scenes.alignment import (
    _monotone_hull,
    convex_hull_2d,
    estimate_alignment,
    min_area_rectangle,
    transform,
)
from scenes.scans import read_ply
from scenes.services import MaterialError, NamedFile, import_scan
from scenes.topview import render_topview
from tests.factories import BenchmarkFactory, UserFactory

pytestmark = pytest.mark.django_db

W, D, H = 6.0, 5.0, 2.5
SOFA_YAW = math.radians(30)
# (label, centre, size, yaw) of the furniture, in the room's own (aligned) frame.
FURNITURE = [("table", (1.5, 1.2, 0.375), (1.2, 0.8, 0.75), 0.0),
             ("sofa", (4.0, 3.0, 0.4), (2.0, 0.9, 0.8), SOFA_YAW),
             ("cabinet", (0.3, 4.0, 0.9), (0.5, 1.0, 1.8), 0.0)]
WALLS = [((0, 0, 0), (W, 0, 0), (0, 0, H)), ((0, D, 0), (W, 0, 0), (0, 0, H)),
         ((0, 0, 0), (0, D, 0), (0, 0, H)), ((W, 0, 0), (0, D, 0), (0, 0, H))]


def raw_transform(turn_deg=20.0, tilt_deg=3.0, shift=(2.0, -1.0, 0.7)) -> np.ndarray:
    """Room frame -> the scanner's frame: turned about Z, tilted about X, moved."""
    t, a = math.radians(turn_deg), math.radians(tilt_deg)
    turn = np.array([[math.cos(t), -math.sin(t), 0], [math.sin(t), math.cos(t), 0], [0, 0, 1]])
    tilt = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    matrix = np.eye(4)
    matrix[:3, :3], matrix[:3, 3] = tilt @ turn, shift
    return matrix


def rectangle(origin, u, v, step=0.05):
    """A grid of vertices over the rectangle origin + s u + t v and its triangles."""
    origin, u, v = (np.asarray(a, dtype=np.float64) for a in (origin, u, v))
    nu, nv = max(2, round(np.linalg.norm(u) / step) + 1), max(2, round(np.linalg.norm(v) / step) + 1)
    s, t = np.meshgrid(np.linspace(0, 1, nu), np.linspace(0, 1, nv), indexing="ij")
    vertices = origin + s.reshape(-1, 1) * u + t.reshape(-1, 1) * v
    index = np.arange(nu * nv).reshape(nu, nv)
    a, b, c, d = index[:-1, :-1].ravel(), index[1:, :-1].ravel(), index[1:, 1:].ravel(), index[:-1, 1:].ravel()
    return vertices, np.r_[np.c_[a, b, c], np.c_[a, c, d]]


def box_rectangles(centre, size, yaw):
    """Top and four sides of a box turned by yaw, as (origin, u, v) rectangles."""
    c, s = math.cos(yaw), math.sin(yaw)
    ex = np.array([c, s, 0]) * size[0]
    ey = np.array([-s, c, 0]) * size[1]
    ez = np.array([0, 0, 1.0]) * size[2]
    low = np.asarray(centre) - ex / 2 - ey / 2 - ez / 2
    return [(low + ez, ex, ey), (low, ex, ez), (low + ey, ex, ez), (low, ey, ez), (low + ex, ey, ez)]


def room(rng):
    """(xyz in the room frame, faces, object index per vertex (0 floor, 1-4 walls, then furniture), labels)."""
    parts = [[((0, 0, 0), (W, 0, 0), (0, D, 0))], *[[wall] for wall in WALLS],
             *[box_rectangles(c, s, y) for _, c, s, y in FURNITURE]]
    labels = ["floor", "wall", "wall", "wall", "wall", *[f[0] for f in FURNITURE]]
    vertices, faces, owner = [], [], []
    for k, rectangles in enumerate(parts):
        for rect in rectangles:
            v, f = rectangle(*rect)
            faces.append(f + sum(len(x) for x in vertices))
            vertices.append(v)
            owner.append(np.full(len(v), k))
    xyz = np.vstack(vertices) + rng.normal(0, 0.003, (sum(len(v) for v in vertices), 3))
    return xyz, np.vstack(faces), np.concatenate(owner), labels


class Scan:
    """The room as the scanner saw it, with ScanNet's aggregation + segments files."""

    def __init__(self, with_faces=True, seed=3, scene_id="scene0000_00"):
        rng = np.random.default_rng(seed)
        room_xyz, faces, self.owner, self.labels = room(rng)
        self.matrix = raw_transform()
        self.raw = transform(self.matrix, room_xyz)
        self.room = room_xyz
        self.rgb = rng.integers(0, 256, (len(room_xyz), 3)).astype(np.uint8)
        self.ply = NamedFile(f"{scene_id}_vh_clean_2.ply", ply_bytes(self.raw, self.rgb, faces if with_faces else None))
        groups = [{"id": k, "objectId": k, "label": label, "segments": [k]} for k, label in enumerate(self.labels)]
        self.aggregation = NamedFile(f"{scene_id}.aggregation.json", json.dumps(
            {"sceneId": scene_id, "segGroups": groups}).encode())
        self.segments = NamedFile(f"{scene_id}_vh_clean_2.0.010000.segs.json", json.dumps(
            {"sceneId": scene_id, "segIndices": self.owner.tolist()}).encode())

    def inputs(self, **extra):
        return {"ply": self.ply, "aggregation": self.aggregation, "segments": self.segments, **extra}


def stored_points(scene):
    with scene.assets.get(role=AssetRole.POINT_CLOUD).file.open("rb") as handle:
        return read_ply(handle.read())


def quarter_offset_deg(angle: float) -> float:
    """How far an angle (radians) is from the nearest multiple of 90 degrees, in degrees."""
    return abs(math.degrees(math.remainder(angle, math.pi / 2)))


def direction_deg(points: np.ndarray) -> float:
    """Angle of the main horizontal direction of points (PCA of x, y)."""
    xy = points[:, :2] - points[:, :2].mean(axis=0)
    _, vectors = np.linalg.eigh(xy.T @ xy)
    return math.atan2(vectors[1, 1], vectors[0, 1])


# --- estimated alignment ------------------------------------------------------------------------------


@pytest.mark.parametrize("with_faces", [True, False], ids=["mesh", "point-cloud"])
def test_without_alignment_data_walls_go_on_the_axes_and_the_floor_on_xy(with_faces):
    scan = Scan(with_faces=with_faces)
    # The raw scan is off: its walls run about 20 degrees from the axes.
    walls = [scan.raw[scan.owner == k] for k in range(1, 5)]
    assert all(quarter_offset_deg(direction_deg(w)) > 15 for w in walls)

    scene = import_scan(BenchmarkFactory(family="hypo3d"), "scene0000_00", **scan.inputs())

    alignment = scene.meta["alignment"]
    assert alignment["source"] == "estimated" and alignment["normals"] == ("faces" if with_faces else "points")
    assert np.array(alignment["matrix"]).shape == (4, 4)
    xyz, _, instance = stored_points(scene)
    assert np.allclose(xyz, transform(np.array(alignment["matrix"]), scan.raw), atol=1e-5)
    for k in range(1, 5):
        assert quarter_offset_deg(direction_deg(xyz[scan.owner == k])) < 1.0, "wall within 1 degree of an axis"
    floor = xyz[scan.owner == 0]
    assert abs(np.median(floor[:, 2])) < 0.01 and floor[:, 2].std() < 0.01, "floor flat on z = 0"
    assert (xyz[scan.owner == 1][:, 2].mean() > 1.0), "Z up: the walls stand above the floor"

    wall_boxes = SceneObject.objects.filter(scene=scene, label="wall")
    assert wall_boxes.count() == 4
    for wall in wall_boxes:
        assert min(wall.size_x, wall.size_y) < 0.3, f"a thin wall box, not {wall.size_x:.2f} x {wall.size_y:.2f}"
        assert max(wall.size_x, wall.size_y) > 4.9 and abs(wall.size_z - H) < 0.05
        assert quarter_offset_deg(wall.yaw) < 1.0


@pytest.mark.parametrize("with_faces", [True, False], ids=["mesh", "point-cloud"])
def test_a_turned_sofa_gets_its_yaw_and_true_footprint(with_faces):
    scan = Scan(with_faces=with_faces)
    scene = import_scan(BenchmarkFactory(family="hypo3d"), "scene0000_00", **scan.inputs())
    sofa = SceneObject.objects.get(scene=scene, label="sofa")
    # The aligned frame is the room's own up to a quarter turn: the sofa is turned 30 degrees in it.
    yaw_error = math.degrees(math.remainder(sofa.yaw - SOFA_YAW, math.pi / 2))
    assert abs(yaw_error) < 1.5
    swapped = round((sofa.yaw - SOFA_YAW - math.radians(yaw_error)) / (math.pi / 2)) % 2
    length, depth = (sofa.size_y, sofa.size_x) if swapped else (sofa.size_x, sofa.size_y)
    assert abs(length - 2.0) < 0.05 and abs(depth - 0.9) < 0.05 and abs(sofa.size_z - 0.8) < 0.05
    # Its box holds its points: each one inside, to noise.
    xyz, _, instance = stored_points(scene)
    points = xyz[instance == sofa.instance_id] - np.array(sofa.center)
    c, s = math.cos(sofa.yaw), math.sin(sofa.yaw)
    local = np.c_[c * points[:, 0] + s * points[:, 1], -s * points[:, 0] + c * points[:, 1], points[:, 2]]
    assert (np.abs(local) <= np.array(sofa.size) / 2 + 0.01).all()
    table = SceneObject.objects.get(scene=scene, label="table")
    assert quarter_offset_deg(table.yaw) < 1.0 and sorted([table.size_x, table.size_y]) == pytest.approx(
        [0.8, 1.2], abs=0.05)


def test_estimate_is_a_rigid_transform_and_keeps_an_aligned_room_as_it_is():
    scan = Scan()
    matrix, details = estimate_alignment(scan.raw)
    rotation = matrix[:3, :3]
    assert np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-9) and np.linalg.det(rotation) == pytest.approx(1)
    assert details["tilt_deg"] == pytest.approx(3, abs=0.1) and details["turn_deg"] == pytest.approx(-20, abs=0.2)
    # The room as it was built (already aligned): its coordinates are kept; a floor lifted off
    # z = 0 is put back there, nothing else moves.
    matrix, details = estimate_alignment(scan.room)
    assert details["already_aligned"] and details["walls"] and np.array_equal(matrix, np.eye(4))
    matrix, details = estimate_alignment(scan.room + [0.0, 0.0, 0.4])
    expected = np.eye(4)
    expected[2, 3] = -0.4
    assert details["already_aligned"] and np.allclose(matrix, expected, atol=0.005)


def test_a_scan_with_no_flat_surface_is_left_as_it_is():
    blob = np.random.default_rng(0).normal(0, 1, (5000, 3)).astype(np.float32)
    matrix, details = estimate_alignment(blob)
    assert details["source"] == "none" and details["reason"] and np.array_equal(matrix, np.eye(4))


# --- ScanNet's axisAlignment and --no-align -----------------------------------------------------------


def scene_txt(matrix) -> NamedFile:
    numbers = " ".join(f"{v:.9f}" for v in np.asarray(matrix).ravel())
    text = f"colorHeight = 968\naxisAlignment = {numbers}\nsceneType = Living room / Lounge\n"
    return NamedFile("scene0000_00.txt", text.encode())


def test_the_given_axis_alignment_is_applied_exactly():
    scan = Scan()
    given = np.round(np.linalg.inv(scan.matrix), 9)
    given[3] = [0, 0, 0, 1]
    scene = import_scan(BenchmarkFactory(family="hypo3d"), "scene0000_00", **scan.inputs(meta=scene_txt(given)))
    alignment = scene.meta["alignment"]
    assert alignment["source"] == "axisAlignment" and np.array(alignment["matrix"]) == pytest.approx(given, abs=1e-12)
    assert scene.meta["scene_type"] == "Living room / Lounge"
    xyz, rgb, _ = stored_points(scene)
    expected = (np.c_[scan.raw.astype(np.float64), np.ones(len(scan.raw))] @ given.T)[:, :3]
    assert np.abs(xyz - expected).max() < 1e-5 and np.array_equal(rgb, scan.rgb)
    assert np.abs(xyz - scan.room).max() < 1e-3, "the inverse of the scanner's transform brings the room back"
    assert scene.assets.get(role=AssetRole.POINT_CLOUD).meta["alignment"] == alignment


def test_no_align_keeps_the_raw_frame(tmp_path, capsys):
    scan = Scan()
    bench = BenchmarkFactory(family="hypo3d")
    paths = {}
    for key, file in scan.inputs(meta=scene_txt(np.eye(4) * 2)).items():  # not even read: no alignment asked for
        paths[key] = tmp_path / file.name
        paths[key].write_bytes(file.content)
    call_command("import_scan", "--benchmark", bench.slug, "--scene", "scene0000_00", str(paths["ply"]),
                 "--aggregation", str(paths["aggregation"]), "--segments", str(paths["segments"]),
                 "--meta", str(paths["meta"]), "--no-align")
    out = json.loads(capsys.readouterr().out)
    assert out["alignment"] == "none"
    scene = bench.scenes.get()
    assert scene.meta["alignment"]["source"] == "none" and scene.meta["alignment"]["matrix"] == np.eye(4).tolist()
    xyz, _, _ = stored_points(scene)
    assert np.array_equal(xyz, scan.raw)


def test_a_bad_axis_alignment_is_named_and_nothing_is_written():
    scan = Scan()
    bad = NamedFile("scene0000_00.txt", b"axisAlignment = 1 0 0 0 0 1 0 0 0 0 1 0 0 0 0\n")
    with pytest.raises(MaterialError, match=r"scene0000_00.txt: axisAlignment must be 16 numbers"):
        import_scan(BenchmarkFactory(family="hypo3d"), "scene0000_00", **scan.inputs(meta=bad))
    sheared = NamedFile("scene0000_00.txt", scene_txt(np.diag([2.0, 1, 1, 1])).content)
    with pytest.raises(MaterialError, match=r"not a rotation plus translation"):
        import_scan(BenchmarkFactory(family="hypo3d"), "scene0001_00", **scan.inputs(meta=sheared))
    assert not SceneObject.objects.exists()


def test_a_scannet_folder_imports_with_its_txt(tmp_path, capsys):
    scan = Scan()
    folder = tmp_path / "scene0000_00"
    folder.mkdir()
    given = np.linalg.inv(scan.matrix)
    for file in scan.inputs(meta=scene_txt(given)).values():
        (folder / file.name).write_bytes(file.content)
    bench = BenchmarkFactory(family="hypo3d")
    call_command("import_scan", "--benchmark", bench.slug, str(folder))
    out = json.loads(capsys.readouterr().out)
    assert (out["scene"], out["alignment"], out["format"], out["objects"]) == (
        "scene0000_00", "axisAlignment", "scannet", 8)


def test_a_boxes_file_follows_the_alignment():
    scan = Scan()
    given = np.linalg.inv(scan.matrix)
    # The sofa's box as the scanner saw it: centre moved and yaw turned by the scanner's transform.
    raw_centre = transform(scan.matrix, np.array([FURNITURE[1][1]]))[0].tolist()
    boxes = [{"label": "sofa", "center": raw_centre, "size": [2.05, 0.95, 0.85], "yaw": SOFA_YAW + math.radians(20)}]
    scene = import_scan(BenchmarkFactory(family="hypo3d"), "room", scan.ply, meta=scene_txt(given),
                        boxes=NamedFile("boxes.json", json.dumps(boxes).encode()))
    sofa = scene.scene_objects.get()
    assert sofa.center == pytest.approx(FURNITURE[1][1], abs=0.06)
    assert math.degrees(sofa.yaw) == pytest.approx(30, abs=0.5)


# --- geometry pieces ------------------------------------------------------------------------------------


def test_min_area_rectangle_of_a_turned_rectangle():
    rng = np.random.default_rng(0)
    local = rng.uniform([-1.0, -0.25], [1.0, 0.25], (2000, 2))
    for turn in (0.0, 0.3, -0.6, 1.2, math.pi / 2):
        c, s = math.cos(turn), math.sin(turn)
        points = local @ np.array([[c, s], [-s, c]]) + [3.0, -2.0]
        centre, size, yaw = min_area_rectangle(points)
        assert -math.pi / 4 <= yaw < math.pi / 4
        assert abs(math.remainder(yaw - turn, math.pi / 2)) < 0.01
        assert sorted(size) == pytest.approx([0.5, 2.0], abs=0.01) and centre == pytest.approx([3, -2], abs=0.01)


def test_monotone_chain_hull_matches_qhull():
    points = np.random.default_rng(1).normal(size=(500, 2))
    ours = {tuple(p) for p in _monotone_hull(points)}
    assert ours == {tuple(p) for p in convex_hull_2d(points)}


# --- top view labels --------------------------------------------------------------------------------------


def overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_semantic_top_view_labels_do_not_overlap_and_hover_boxes_follow_the_yaw():
    rng = np.random.default_rng(0)
    xyz = np.c_[rng.uniform(0, 4, (20000, 2)), np.zeros(20000)].astype(np.float32)
    rgb = np.full((len(xyz), 3), 200, dtype=np.uint8)
    # Many long labels crowded together, one object turned 45 degrees.
    objects = [{"instance_id": i + 1, "label": f"kitchen cabinet number {i}", "center": [1 + 0.1 * i, 2, 0.5],
                "size": [0.3, 0.3, 1], "yaw": 0.0} for i in range(8)]
    objects.append({"instance_id": 20, "label": "rug", "center": [3, 1, 0.01], "size": [1.0, 0.1, 0.02],
                    "yaw": math.pi / 4})
    _, meta = render_topview(xyz, rgb, objects, semantic=True)
    drawn = [e["text_box"] for e in meta["labels"] if e["text_box"]]
    assert len(drawn) >= 2
    assert not any(overlaps(a, b) for i, a in enumerate(drawn) for b in drawn[i + 1:])
    assert any(not e["text_box"] for e in meta["labels"]), "the crowded ones are left to hover"
    rug = next(e for e in meta["labels"] if e["label"] == "rug")
    corners = np.array(rug["corners"])
    assert corners.shape == (4, 2)
    # A thin rug on the diagonal: its polygon is far smaller than the box around it.
    x, y = corners[:, 0], corners[:, 1]
    polygon_area = 0.5 * abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))
    left, top, right, bottom = rug["box"]
    assert polygon_area < 0.3 * (right - left) * (bottom - top)


# --- the scene page ------------------------------------------------------------------------------------


def test_the_scene_page_shows_any_scene_to_reviewers_and_admins_only(client, django_capture_on_commit_callbacks):
    scan = Scan()
    with django_capture_on_commit_callbacks(execute=True):
        scene = import_scan(BenchmarkFactory(family="hypo3d"), "scene0000_00", caption="A synthetic room.",
                            **scan.inputs())
    url = f"/scenes/{scene.pk}/"
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(UserFactory(role="annotator"))
    assert client.get(url).status_code == 403
    for user in (UserFactory(role="reviewer"), UserFactory(is_staff=True)):
        client.force_login(user)
        response = client.get(url)
        assert response.status_code == 200
        page = response.content.decode()
        assert 'id="alignment-source">estimated<' in page and page.count("<tr><td><code>") == 4
        assert "A synthetic room." in page and 'id="scene-pointcloud"' in page and 'id="scene-topview"' in page
        sofa = SceneObject.objects.get(scene=scene, label="sofa")
        assert f'data-instance="{sofa.instance_id}"' in page and f"{math.degrees(sofa.yaw):.1f}" in page
        assert (f'href="/manage/scenes/{scene.pk}/"' in page) == user.is_staff
    assert client.get("/scenes/999999/").status_code == 404
