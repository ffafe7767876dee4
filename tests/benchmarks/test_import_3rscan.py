"""3RScan scans (mesh.refined.v2.obj with vertex colours or a texture, semseg.v2.json with oriented
boxes, per-vertex segments) import to the stored form of a ScanNet scan: the canonical PLY with
instance ids in the aligned frame, SceneObjects with yaw, viewer assets; Hypo3D items naming the
scan's uuid then find it."""

import io
import json
import math

import numpy as np
import pytest
from django.core.management import call_command
from PIL import Image

from benchmarks.models import AssetRole, ContextChange, Item, Scene, SceneObject
from scenes.alignment import transform
from scenes.obj import read_obj
from scenes.scans import read_ply
from scenes.services import MaterialError, NamedFile, detect_scan_format, import_3rscan
from tests.benchmarks.test_scan_alignment import (
    FURNITURE,
    SOFA_YAW,
    H,
    quarter_offset_deg,
    raw_transform,
    room,
)
from tests.factories import BenchmarkFactory

pytestmark = pytest.mark.django_db

SCAN_ID = "095821f7-e2c2-2de1-9568-b9ce59920e29"
TEXTURE = (64, 32)  # width, height


def texture_png() -> tuple[bytes, np.ndarray]:
    """A texture whose every texel differs, and its pixels (rows from the top)."""
    width, height = TEXTURE
    cols, rows = np.meshgrid(np.arange(width), np.arange(height))
    pixels = np.stack([cols * 4, rows * 8, (cols + rows) % 256], axis=-1).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue(), pixels


class RScan:
    """The synthetic room of test_scan_alignment as a 3RScan scan folder."""

    def __init__(self, textured: bool, seed: int = 5):
        rng = np.random.default_rng(seed)
        room_xyz, faces, self.owner, self.labels = room(rng)
        self.matrix = raw_transform(turn_deg=-25.0, tilt_deg=2.0)
        self.raw = transform(self.matrix, room_xyz)
        n = len(room_xyz)
        lines = ["# 3RScan-like mesh written by the test"]
        if textured:
            self.png, pixels = texture_png()
            # Texel centres, so each vertex's colour is exactly one texel.
            cols, rows = rng.integers(0, TEXTURE[0], n), rng.integers(0, TEXTURE[1], n)
            uv = np.c_[cols / (TEXTURE[0] - 1), 1 - rows / (TEXTURE[1] - 1)]
            self.rgb = pixels[rows, cols]
            lines += ["mtllib mesh.refined.mtl"]
            lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in self.raw]
            lines += [f"vt {u:.8f} {v:.8f}" for u, v in uv]
            lines += ["usemtl mesh.refined_0"]
            # Texture coordinates numbered as the vertices, as a per-vertex UV layout is.
            lines += [f"f {a + 1}/{a + 1} {b + 1}/{b + 1} {c + 1}/{c + 1}" for a, b, c in faces]
        else:
            self.rgb = rng.integers(0, 256, (n, 3)).astype(np.uint8)
            lines += [f"v {x:.6f} {y:.6f} {z:.6f} {r / 255:.6f} {g / 255:.6f} {b / 255:.6f}"
                      for (x, y, z), (r, g, b) in zip(self.raw, self.rgb, strict=True)]
            lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
        self.files = [NamedFile("mesh.refined.v2.obj", ("\n".join(lines) + "\n").encode())]
        if textured:
            self.files += [NamedFile("mesh.refined.mtl", b"newmtl mesh.refined_0\nKd 1 1 1\nmap_Kd mesh.refined_0.png\n"),
                           NamedFile("mesh.refined_0.png", self.png)]
        # Segments: a few per object, numbered as an over-segmentation would.
        segment = self.owner * 100 + rng.integers(0, 3, n) + 7
        rotation = self.matrix[:3, :3]
        groups = []
        for k, label in enumerate(self.labels):
            points = room_xyz[self.owner == k]
            centre, size, yaw = (points.min(0) + points.max(0)) / 2, points.max(0) - points.min(0), 0.0
            if k >= 5:
                _, centre, size, yaw = FURNITURE[k - 5]
            c, s = math.cos(yaw), math.sin(yaw)
            axes = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1.0]]) @ rotation.T  # rows: the box's axes, scanner frame
            groups.append({"id": k + 1, "objectId": k + 1, "label": label, "segments": sorted(set(
                segment[self.owner == k].tolist())), "obb": {
                    "centroid": transform(self.matrix, np.array([centre]))[0].tolist(),
                    "axesLengths": list(map(float, size)), "normalizedAxes": axes.ravel().tolist()}})
        self.files += [
            NamedFile("semseg.v2.json", json.dumps({"scan_id": SCAN_ID, "segGroups": groups}).encode()),
            NamedFile("mesh.refined.0.010000.segs.v2.json", json.dumps(
                {"sceneId": SCAN_ID, "segIndices": segment.tolist()}).encode()),
        ]


@pytest.mark.parametrize("textured", [False, True], ids=["vertex-colours", "texture"])
def test_a_3rscan_scan_imports_to_the_stored_form_of_a_scannet_scan(textured, django_capture_on_commit_callbacks):
    scan = RScan(textured)
    assert detect_scan_format(scan.files) == "3rscan"
    with django_capture_on_commit_callbacks(execute=True):
        scene = import_3rscan(BenchmarkFactory(family="hypo3d"), SCAN_ID, scan.files, caption="A living room.")

    assert scene.meta["source_format"] == "3rscan" and scene.meta["alignment"]["source"] == "estimated"
    cloud = scene.assets.get(role=AssetRole.POINT_CLOUD)
    assert cloud.meta["source_file"] == "mesh.refined.v2.obj" and "semseg.v2.json" in cloud.meta["source_files"]
    xyz, rgb, instance = read_ply(cloud.file.open("rb").read())
    assert np.array_equal(rgb, scan.rgb), "colours from the vertex lines or sampled from the texture"
    assert np.array_equal(instance, scan.owner + 1), "instance id = the 3RScan objectId"
    matrix = np.array(scene.meta["alignment"]["matrix"])
    assert np.abs(xyz - transform(matrix, scan.raw)).max() < 1e-4
    for k in range(1, 5):  # walls on the axes
        wall = xyz[scan.owner == k]
        assert wall[:, :2].std(axis=0).min() < 0.02

    objects = {o.instance_id: o for o in SceneObject.objects.filter(scene=scene)}
    assert [objects[i].label for i in sorted(objects)] == scan.labels
    for i in range(2, 6):
        wall = objects[i]
        assert min(wall.size_x, wall.size_y) < 0.3 and abs(wall.size_z - H) < 0.05
        assert quarter_offset_deg(wall.yaw) < 1.0
    sofa = objects[7]
    assert abs(math.degrees(math.remainder(sofa.yaw - SOFA_YAW, math.pi / 2))) < 1.0
    assert sorted([sofa.size_x, sofa.size_y]) == pytest.approx([0.9, 2.0], abs=1e-6), "the obb's own lengths"
    assert sofa.size_z == pytest.approx(0.8, abs=1e-6)
    # The box's centre is the obb centroid brought into the aligned frame.
    assert sofa.center == pytest.approx(transform(matrix, transform(scan.matrix, np.array([FURNITURE[1][1]])))[0],
                                        abs=1e-4)
    roles = set(scene.assets.values_list("role", flat=True))
    assert {AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC} <= roles


def test_an_obj_with_polygons_and_negative_indices_reads():
    obj = (b"v 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 1 1 0 0 0 1\nv 0 1 0 1 1 1\n"
           b"f -4 -3 -2 -1\n")
    xyz, rgb, faces = read_obj(obj)
    assert faces.tolist() == [[0, 1, 2], [0, 2, 3]] and rgb.tolist()[1] == [0, 255, 0] and xyz.shape == (4, 3)


def test_the_command_imports_a_3rscan_folder_and_a_hypo3d_item_file_finds_it(tmp_path, capsys):
    scan = RScan(textured=True)
    folder = tmp_path / SCAN_ID
    folder.mkdir()
    for file in scan.files:
        (folder / file.name).write_bytes(file.content)
    bench = BenchmarkFactory(family="hypo3d")
    call_command("import_scan", "--benchmark", bench.slug, str(folder), "--world-frame",
                 "The sofa was located at the front of the scene.")
    out = json.loads(capsys.readouterr().out)
    assert (out["scene"], out["format"], out["alignment"], out["objects"]) == (SCAN_ID, "3rscan", "estimated", 8)

    items = {SCAN_ID: [{"context_change": "The sofa has been moved next to the cabinet.",
                        "change_type": "Movement Change",
                        "questions_answers": [{"question_id": "3r-1", "question_type": "Direction",
                                               "question": "What is on the left of the sofa now?",
                                               "answer": "cabinet"}]}]}
    path = tmp_path / "hypo3d_3rscan.json"
    path.write_text(json.dumps(items))
    call_command("import_items", "--benchmark", bench.slug, str(path))
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["created"] == 1 and report["errors"] == []
    scene = Scene.objects.get(benchmark=bench, external_id=SCAN_ID)
    assert Item.objects.get(external_id="3r-1").scene == scene
    assert ContextChange.objects.get().scene == scene
    assert scene.world_frames.get().anchor.label == "sofa"


def test_missing_or_mismatched_files_are_named_and_nothing_is_written():
    scan = RScan(textured=False)
    bench = BenchmarkFactory(family="hypo3d")
    without_semseg = [f for f in scan.files if f.name != "semseg.v2.json"]
    with pytest.raises(MaterialError, match="missing semseg.v2.json"):
        import_3rscan(bench, SCAN_ID, without_semseg)
    short = [f if not f.name.endswith(".segs.v2.json") else NamedFile(f.name, json.dumps(
        {"segIndices": [1, 2, 3]}).encode()) for f in scan.files]
    with pytest.raises(MaterialError, match=r"mesh.refined.0.010000.segs.v2.json: 3 segment ids for \d+ vertices"):
        import_3rscan(bench, SCAN_ID, short)
    with pytest.raises(MaterialError, match=r"semseg.v2.json: it is for scene '095821f7"):
        import_3rscan(bench, "another-scan", scan.files)
    textured = RScan(textured=True)
    no_image = [f for f in textured.files if not f.name.endswith(".png")]
    with pytest.raises(MaterialError, match="mesh.refined.v2.obj: the mesh has no colours"):
        import_3rscan(bench, SCAN_ID, no_image)
    assert not Scene.objects.exists()
