"""3D scans import whole (canonical PLY, objects, world frame, viewer assets) or not at all."""

import hashlib
import json

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from benchmarks.models import Asset, AssetRole, Scene, SceneObject, WorldFrame
from demo.files import ply_bytes
from scenes.alignment import transform
from scenes.scans import ScanError, read_ply, write_points_ply
from scenes.services import MaterialError, NamedFile, import_scan
from scenes.tasks import process_scene
from tests.factories import BenchmarkFactory, UserFactory

pytestmark = pytest.mark.django_db

# Two objects on a floor: a table (segments 1, 2) and a chair (segment 3); segment 0 is the floor.
RNG = np.random.default_rng(7)
FLOOR = np.c_[RNG.uniform(0, 4, (400, 2)), np.full(400, -0.05)]  # just below the boxes
TABLE = RNG.uniform([1.0, 1.0, 0.0], [2.0, 1.6, 0.8], (300, 3))
CHAIR = RNG.uniform([3.0, 2.5, 0.0], [3.5, 3.0, 0.9], (200, 3))
XYZ = np.vstack([FLOOR, TABLE, CHAIR]).astype(np.float32)
RGB = RNG.integers(0, 256, (len(XYZ), 3)).astype(np.uint8)
SEGMENTS = [0] * 400 + [1] * 150 + [2] * 150 + [3] * 200
AGGREGATION = {"sceneId": "scene0000_00", "appId": "Aggregator.v2", "segmentsFile": "segs.json", "segGroups": [
    {"id": 0, "objectId": 0, "label": "table", "segments": [1, 2]},
    {"id": 1, "objectId": 1, "label": "chair", "segments": [3]},
]}
SEGS = {"sceneId": "scene0000_00", "segIndices": SEGMENTS, "params": {}}
BOXES = [{"label": "table", "center": [1.5, 1.3, 0.4], "size": [1.02, 0.62, 0.82]},
         {"label": "chair", "center": [3.25, 2.75, 0.45], "size": [0.52, 0.52, 0.92]}]
FRAME = "The chair was located at the right of the scene."


def mesh_ply(endian="<", truncate=0) -> bytes:
    """ScanNet-style mesh: x y z float, red green blue alpha uchar, then triangle faces."""
    data = ply_bytes(XYZ, RGB, np.tile([0, 1, 2], (10, 1)), comment="made by the test", endian=endian)
    return data[: len(data) - truncate]


def ascii_ply(drop_column_on_line=None) -> bytes:
    lines = []
    for i, ((x, y, z), (r, g, b)) in enumerate(zip(XYZ.tolist(), RGB.tolist(), strict=True)):
        values = [f"{x:.7g}", f"{y:.7g}", f"{z:.7g}", str(r), str(g), str(b)]
        lines.append(" ".join(values[:-1] if i == drop_column_on_line else values))
    header = (f"ply\nformat ascii 1.0\nelement vertex {len(XYZ)}\nproperty float x\nproperty float y\n"
              "property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n")
    return (header + "\n".join(lines) + "\n").encode()


def scannet_inputs(ply=None, segs=SEGS, aggregation=AGGREGATION):
    return {"ply": NamedFile("scene0000_00_vh_clean_2.ply", ply or mesh_ply()),
            "aggregation": NamedFile("scene0000_00.aggregation.json", json.dumps(aggregation).encode()),
            "segments": NamedFile("scene0000_00_vh_clean_2.0.010000.segs.json", json.dumps(segs).encode())}


def stored_files(settings) -> list:
    media = settings.MEDIA_ROOT
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


def assert_nothing_written(settings):
    assert not Scene.objects.exists() and not Asset.objects.exists() and not SceneObject.objects.exists()
    assert stored_files(settings) == []


# --- PLY reading ---------------------------------------------------------------------------------


@pytest.mark.parametrize("endian", ["<", ">"])
def test_binary_mesh_either_endian_gives_vertices_and_colours(endian):
    xyz, rgb, instance = read_ply(mesh_ply(endian))
    assert np.array_equal(xyz, XYZ) and np.array_equal(rgb, RGB) and not instance.any()


def test_ascii_point_cloud_reads_like_binary():
    xyz, rgb, _ = read_ply(ascii_ply())
    assert np.allclose(xyz, XYZ, atol=1e-5) and np.array_equal(rgb, RGB)


def test_canonical_ply_round_trips_instance_ids():
    instance = np.arange(len(XYZ), dtype=np.uint16) % 5
    xyz, rgb, back = read_ply(write_points_ply(XYZ, RGB, instance))
    assert np.array_equal(xyz, XYZ) and np.array_equal(rgb, RGB) and np.array_equal(back, instance)


@pytest.mark.parametrize(("data", "reason"), [
    (mesh_ply(truncate=len(XYZ) * 8), "truncated"),
    (mesh_ply(truncate=20), "truncated: the file ends before its face data"),
    (ascii_ply(drop_column_on_line=5), "vertex line 6 has 5"),
    (b"solid cube\n", "not a PLY file"),
    (b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
     b"1 2 3\n", "no colours"),
])
def test_bad_ply_says_why(data, reason):
    with pytest.raises(ScanError, match=reason):
        read_ply(data)


# --- the import ----------------------------------------------------------------------------------


def test_scannet_scan_becomes_a_scene_with_objects_frame_and_viewer_assets(django_capture_on_commit_callbacks):
    bench = BenchmarkFactory(family="hypo3d")
    inputs = scannet_inputs()
    with django_capture_on_commit_callbacks(execute=True):
        scene = import_scan(bench, "scene0000_00", caption="A small office.", world_frame=FRAME, **inputs)
    assert scene.caption == "A small office."
    cloud = Asset.objects.get(scene=scene, role=AssetRole.POINT_CLOUD)
    assert cloud.meta["source_sha256"] == hashlib.sha256(inputs["ply"].content).hexdigest()
    assert cloud.sha256 == hashlib.sha256(cloud.file.read()).hexdigest()
    xyz, rgb, instance = read_ply(cloud.file.open("rb").read())
    # Stored in the aligned frame (here: floor to z = 0, footprint centred), recorded on the scene.
    alignment = scene.meta["alignment"]
    assert alignment["source"] == "estimated" and cloud.meta["alignment"] == alignment
    aligned = transform(np.array(alignment["matrix"]), XYZ)
    assert np.allclose(xyz, aligned, atol=1e-5) and np.array_equal(rgb, RGB)
    assert abs(np.median(xyz[:400, 2])) < 1e-4
    assert np.bincount(instance).tolist() == [400, 300, 200]
    table, chair = SceneObject.objects.filter(scene=scene).order_by("instance_id")
    assert (table.instance_id, table.label, chair.instance_id, chair.label) == (1, "table", 2, "chair")
    table_xyz, chair_xyz = aligned[400:700], aligned[700:]
    assert np.allclose(table.center, (table_xyz.min(0) + table_xyz.max(0)) / 2, atol=1e-4)
    assert np.allclose(chair.size, chair_xyz.max(0) - chair_xyz.min(0), atol=1e-4)
    frame = WorldFrame.objects.get(scene=scene)
    assert (frame.anchor, frame.side, frame.text) == (chair, "right", FRAME)
    roles = set(scene.assets.values_list("role", flat=True))
    assert {AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC} <= roles


def test_processing_again_replaces_the_viewer_assets():
    bench = BenchmarkFactory(family="hypo3d")
    scene = import_scan(bench, "scene0000_00", **scannet_inputs())
    process_scene.delay(scene.pk)
    process_scene.delay(scene.pk)
    counts = {role: scene.assets.filter(role=role).count()
              for role in (AssetRole.POINT_CLOUD, AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_SEMANTIC)}
    assert set(counts.values()) == {1}


def test_ascii_scan_with_boxes_assigns_points_inside_each_box():
    bench = BenchmarkFactory(family="hypo3d")
    scene = import_scan(bench, "room_1", NamedFile("room.ply", ascii_ply()),
                        boxes=NamedFile("boxes.json", json.dumps(BOXES).encode()))
    _, _, instance = read_ply(scene.assets.get(role=AssetRole.POINT_CLOUD).file.open("rb").read())
    assert np.bincount(instance).tolist() == [400, 300, 200]
    assert list(scene.scene_objects.values_list("label", flat=True)) == ["table", "chair"]


@pytest.mark.parametrize(("inputs", "message"), [
    (scannet_inputs(ply=mesh_ply(truncate=1000)), "scene0000_00_vh_clean_2.ply: truncated"),
    (scannet_inputs(ply=ascii_ply(drop_column_on_line=0)), "scene0000_00_vh_clean_2.ply: each vertex line"),
    (scannet_inputs(segs={**SEGS, "segIndices": SEGMENTS[:-1]}),
     "scene0000_00_vh_clean_2.0.010000.segs.json: 899 segment ids for 900 vertices"),
    (scannet_inputs(aggregation={**AGGREGATION, "sceneId": "scene0001_00"}),
     "scene0000_00.aggregation.json: it is for scene 'scene0001_00', not 'scene0000_00'"),
    (scannet_inputs(aggregation={**AGGREGATION, "segGroups": [{"objectId": 0, "label": "lamp", "segments": [9]}]}),
     r"scene0000_00.aggregation.json: no vertex of the scan lies in objectId 0 \(lamp\)"),
])
def test_bad_files_are_named_with_the_reason_and_nothing_is_written(settings, inputs, message):
    bench = BenchmarkFactory(family="hypo3d")
    with pytest.raises(MaterialError, match=message):
        import_scan(bench, "scene0000_00", **inputs)
    assert_nothing_written(settings)


def test_a_failure_after_the_file_was_stored_leaves_no_orphan_file(settings, monkeypatch):
    bench = BenchmarkFactory(family="hypo3d")

    def fail(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(SceneObject.objects, "bulk_create", fail)
    with pytest.raises(RuntimeError):
        import_scan(bench, "scene0000_00", **scannet_inputs())
    assert_nothing_written(settings)


def test_world_frame_on_an_unknown_object_is_refused():
    bench = BenchmarkFactory(family="hypo3d")
    with pytest.raises(Exception, match="names 'sofa', which is not an object") as caught:
        import_scan(bench, "scene0000_00", world_frame="The sofa was located at the back of the scene.",
                    **scannet_inputs())
    assert caught.value.field == "world_frame" and not Scene.objects.exists()


def test_objects_come_from_exactly_one_source():
    bench = BenchmarkFactory(family="hypo3d")
    inputs = scannet_inputs()
    with pytest.raises(Exception, match="either as a ScanNet aggregation and segments file pair") as caught:
        import_scan(bench, "scene0000_00", boxes=NamedFile("boxes.json", json.dumps(BOXES).encode()), **inputs)
    assert caught.value.field == "objects"
    with pytest.raises(Exception, match="either as a ScanNet"):
        import_scan(bench, "scene0000_00", inputs["ply"], aggregation=inputs["aggregation"])
    assert not Scene.objects.exists()


def test_a_scene_is_scanned_once():
    bench = BenchmarkFactory(family="hypo3d")
    import_scan(bench, "scene0000_00", **scannet_inputs())
    with pytest.raises(MaterialError, match="already has a scan"):
        import_scan(bench, "scene0000_00", **scannet_inputs())
    assert Asset.objects.filter(role=AssetRole.POINT_CLOUD).count() == 1


# --- command and API -----------------------------------------------------------------------------


def test_command_imports_from_files_and_fails_cleanly(tmp_path, capsys, settings):
    bench = BenchmarkFactory(family="hypo3d")
    paths = {}
    for key, file in scannet_inputs().items():
        paths[key] = tmp_path / file.name
        paths[key].write_bytes(file.content)
    call_command("import_scan", "--benchmark", bench.slug, "--scene", "scene0000_00", str(paths["ply"]),
                 "--aggregation", str(paths["aggregation"]), "--segments", str(paths["segments"]),
                 "--caption", "An office.")
    assert json.loads(capsys.readouterr().out)["objects"] == 2
    bad = tmp_path / "bad.ply"
    bad.write_bytes(mesh_ply(truncate=500))
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_scan", "--benchmark", bench.slug, "--scene", "scene0001_00", str(bad),
                     "--boxes", str(paths["aggregation"]))
    assert "bad.ply: truncated" in capsys.readouterr().out
    assert Scene.objects.count() == 1


def upload(file: NamedFile) -> SimpleUploadedFile:
    return SimpleUploadedFile(file.name, file.content)


def test_api_imports_a_scan_for_admins_only(api_client):
    bench = BenchmarkFactory(family="hypo3d")
    inputs = scannet_inputs()
    url = f"/api/v1/benchmarks/{bench.slug}/scans/"
    body = {"scene_id": "scene0000_00", "caption": "An office.", "world_frame": FRAME,
            **{key: upload(file) for key, file in inputs.items()}}
    api_client.force_authenticate(UserFactory(role="annotator"))
    assert api_client.post(url, body, format="multipart").status_code == 403
    api_client.force_authenticate(UserFactory(is_staff=True))
    bad = {**body, "ply": upload(NamedFile("cut.ply", mesh_ply(truncate=100)))}
    response = api_client.post(url, bad, format="multipart")
    assert response.status_code == 400 and response.json()["files"][0].startswith("cut.ply: truncated")
    body = {"scene_id": "scene0000_00", "caption": "An office.", "world_frame": FRAME,
            **{key: upload(file) for key, file in inputs.items()}}
    response = api_client.post(url, body, format="multipart")
    assert response.status_code == 201, response.json()
    assert response.json()["objects"] == 2 and response.json()["external_id"] == "scene0000_00"


def test_admin_upload_form_imports_a_scan_and_shows_file_errors(client):
    bench = BenchmarkFactory(family="hypo3d")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    url = f"/admin/benchmarks/benchmark/{bench.pk}/import-scan/"
    assert client.get(url).status_code == 200
    assert url in client.get(f"/admin/benchmarks/benchmark/{bench.pk}/change/").content.decode()
    inputs = scannet_inputs(ply=mesh_ply(truncate=300))
    form = {"scene_id": "scene0000_00", **{key: upload(file) for key, file in inputs.items()}}
    response = client.post(url, form)
    assert response.status_code == 200 and "scene0000_00_vh_clean_2.ply: truncated" in response.content.decode()
    assert not Scene.objects.exists()
    form = {"scene_id": "scene0000_00", "caption": "An office.",
            **{key: upload(file) for key, file in scannet_inputs().items()}}
    response = client.post(url, form)
    scene = Scene.objects.get()
    assert response.status_code == 302 and response.url.endswith(f"/scene/{scene.pk}/change/")
    assert scene.scene_objects.count() == 2
