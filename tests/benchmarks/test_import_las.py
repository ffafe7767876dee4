"""Survey clouds: LAS and LAZ scans import as scenes, with survey coordinates moved to a local origin."""

import io
import json

import laspy
import numpy as np
import pytest

from benchmarks.models import AssetRole
from scenes.scans import read_ply
from scenes.services import MaterialError, NamedFile, detect_scan_format, import_scan, import_scan_files
from tests.factories import BenchmarkFactory

pytestmark = pytest.mark.django_db

# A table and a chair on a floor, placed at UTM-like survey coordinates (float32 alone would lose centimetres).
ORIGIN = np.array([512_345.25, 5_402_117.5, 231.0])
RNG = np.random.default_rng(11)
FLOOR = np.c_[RNG.uniform(0, 4, (400, 2)), np.full(400, -0.05)]
TABLE = RNG.uniform([1.0, 1.0, 0.0], [2.0, 1.6, 0.8], (300, 3))
CHAIR = RNG.uniform([3.0, 2.5, 0.0], [3.5, 3.0, 0.9], (200, 3))
LOCAL = np.vstack([FLOOR, TABLE, CHAIR])
RGB8 = RNG.integers(0, 256, (len(LOCAL), 3)).astype(np.uint16)
# Boxes as a surveyor writes them: in the cloud's own coordinates.
BOXES = [{"label": "table", "center": (ORIGIN + [1.5, 1.3, 0.4]).tolist(), "size": [1.02, 0.62, 0.82]},
         {"label": "chair", "center": (ORIGIN + [3.25, 2.75, 0.45]).tolist(), "size": [0.52, 0.52, 0.92]}]


def las_bytes(compressed: bool = False, colour: bool = True) -> bytes:
    header = laspy.LasHeader(point_format=3 if colour else 1, version="1.4")
    header.scales = [0.001, 0.001, 0.001]
    header.offsets = ORIGIN.round()
    cloud = laspy.LasData(header)
    xyz = LOCAL + ORIGIN
    cloud.x, cloud.y, cloud.z = xyz[:, 0], xyz[:, 1], xyz[:, 2]
    if colour:
        cloud.red, cloud.green, cloud.blue = RGB8[:, 0] * 257, RGB8[:, 1] * 257, RGB8[:, 2] * 257  # 16-bit colour
    out = io.BytesIO()
    cloud.write(out, do_compress=compressed)
    return out.getvalue()


@pytest.mark.parametrize("suffix", [".las", ".laz"])
def test_a_survey_cloud_imports_with_its_objects_at_a_local_origin(suffix):
    benchmark = BenchmarkFactory()
    data = las_bytes(compressed=suffix == ".laz")
    scene = import_scan(benchmark, "site_a", NamedFile(f"site_a{suffix}", data),
                        boxes=NamedFile("boxes.json", json.dumps(BOXES).encode()), align=False)
    assert scene.meta["source_format"] == "las"
    assert scene.meta["origin"] == pytest.approx((LOCAL + ORIGIN).min(axis=0), abs=1e-3)
    stored = scene.assets.get(role=AssetRole.POINT_CLOUD)
    xyz, rgb, instance = read_ply(stored.file.read())
    assert len(xyz) == len(LOCAL)
    # millimetre survey resolution survives: the local coordinates match the points as placed
    assert np.abs(xyz - (LOCAL - LOCAL.min(axis=0))).max() < 2e-3
    assert (rgb == RGB8).all()  # 16-bit colour back to 8 bits
    labels = {o.label: o for o in scene.scene_objects.all()}
    assert set(labels) == {"table", "chair"}
    assert (instance == labels["chair"].instance_id).sum() == 200


def test_a_folder_with_a_laz_file_is_told_apart_and_imports():
    files = [NamedFile("site_b/site_b.laz", las_bytes(compressed=True)),
             NamedFile("site_b/boxes.json", json.dumps(BOXES).encode())]
    assert detect_scan_format(files) == "las"
    scene = import_scan_files(BenchmarkFactory(), "site_b", files, align=False)
    assert scene.scene_objects.count() == 2


def test_a_cloud_without_colour_is_grey_and_a_broken_file_is_refused_by_name():
    scene = import_scan(BenchmarkFactory(), "site_c", NamedFile("site_c.las", las_bytes(colour=False)),
                        boxes=NamedFile("boxes.json", json.dumps(BOXES).encode()), align=False)
    _, rgb, _ = read_ply(scene.assets.get(role=AssetRole.POINT_CLOUD).file.read())
    assert (rgb == 128).all()
    with pytest.raises(MaterialError, match="broken.laz: not a readable LAS/LAZ file"):
        import_scan(BenchmarkFactory(), "site_d", NamedFile("broken.laz", b"LASF" + b"\0" * 50),
                    boxes=NamedFile("boxes.json", json.dumps(BOXES).encode()), align=False)
