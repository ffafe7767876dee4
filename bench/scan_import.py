"""Scan import speed: a 1,000,000-vertex ScanNet-style scan imported and processed for the viewer.

Run: .venv/bin/python bench/scan_import.py   (no arguments)
Writes, into a temporary folder, a binary little-endian PLY mesh of a furnished 8 x 6 m room
(x y z float, red green blue alpha uchar, 2,000,000 triangle faces) with 32 objects (floor, walls
and 30 pieces of furniture) as a ScanNet `*.aggregation.json` + `*_vh_clean_2.0.010000.segs.json`
pair. Then, in this process, with Celery tasks run eagerly on a throwaway SQLite database
(DATABASE_URL=postgres://.../hypolab_bench_scan to use PostgreSQL instead), times from reading the
files to the viewer assets being written: `import_scan` (parse, objects, canonical PLY, rows) and
the `process_scene` task it enqueues on commit (viewer levels and both top views).
Last line: `read_s=N import_db_s=N processing_s=N import_s=N` (import_s = everything).
"""

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
WORK = Path(tempfile.mkdtemp(prefix="hypolab-scan-bench-"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{WORK / 'db.sqlite3'}")
os.environ["MEDIA_ROOT"] = str(WORK / "media")
os.environ.pop("REDIS_URL", None)  # tasks run in this process (CELERY_TASK_ALWAYS_EAGER)

from _database import bench_key  # noqa: E402 -- a sibling module of the benches

os.environ["SECRET_KEY"] = bench_key()

import django  # noqa: E402 -- needs the repository root on the path first

django.setup()

from django.core.management import call_command  # noqa: E402

from benchmarks.models import AssetRole, Benchmark  # noqa: E402
from demo.files import ply_bytes  # noqa: E402
from scenes import tasks  # noqa: E402
from scenes.services import (  # noqa: E402
    NamedFile,
    import_scan,
    processing,  # noqa: E402
)

N_POINTS = 1_000_000
N_FURNITURE = 30
ROOM = (8.0, 6.0, 2.8)
LABELS = ["chair", "table", "desk", "bed", "sofa", "cabinet", "bookshelf", "lamp", "plant", "tv"]
SCENE = "scene0999_00"


def furnished_room(rng) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
    """Points on the floor, two walls and the top and sides of 30 boxes; a segment id per point
    (ScanNet over-segments surfaces: here 0.4 m cells per object) and the segment groups."""
    sizes = rng.uniform([0.4, 0.4, 0.4], [1.6, 1.2, 1.8], (N_FURNITURE, 3))
    corners = rng.uniform([0.1, 0.1, 0.0], [ROOM[0] - 1.7, ROOM[1] - 1.3, 0.0], (N_FURNITURE, 3))
    n_structure = N_POINTS // 3
    n_each = (N_POINTS - n_structure) // N_FURNITURE
    n_structure = N_POINTS - n_each * N_FURNITURE
    floor = rng.uniform([0, 0, 0], [ROOM[0], ROOM[1], 0], (n_structure // 2, 3))
    wall = rng.uniform([0, ROOM[1], 0], [ROOM[0], ROOM[1], ROOM[2]], (n_structure - len(floor), 3))
    parts, owners = [floor, wall], [np.zeros(len(floor), int), np.ones(len(wall), int)]
    for k in range(N_FURNITURE):
        points = rng.uniform(0, 1, (n_each, 3))
        face = rng.integers(0, 5, n_each)  # top, -x, +x, -y, +y
        points[face == 0, 2] = 1.0
        points[face == 1, 0], points[face == 2, 0] = 0.0, 1.0
        points[face == 3, 1], points[face == 4, 1] = 0.0, 1.0
        parts.append(corners[k] + points * sizes[k])
        owners.append(np.full(n_each, k + 2))
    xyz = np.vstack(parts).astype(np.float32)
    owner = np.concatenate(owners)
    rgb = (rng.integers(60, 200, (N_FURNITURE + 2, 3))[owner] + rng.integers(-20, 20, (len(xyz), 3))).clip(0, 255)
    cells = np.floor(xyz / 0.4).astype(np.int64)
    cell_key = (owner * 1_000_000 + cells[:, 0] * 10_000 + cells[:, 1] * 100 + cells[:, 2])
    _, segments = np.unique(cell_key, return_inverse=True)
    groups = []
    for object_id in range(N_FURNITURE + 2):
        label = "floor" if object_id == 0 else "wall" if object_id == 1 else LABELS[object_id % len(LABELS)]
        groups.append({"id": object_id, "objectId": object_id, "label": label,
                       "segments": np.unique(segments[owner == object_id]).tolist()})
    return xyz, rgb.astype(np.uint8), segments, groups


def write_inputs(rng) -> dict[str, Path]:
    xyz, rgb, segments, groups = furnished_room(rng)
    faces = rng.integers(0, len(xyz), (2 * len(xyz), 3))
    paths = {"ply": WORK / f"{SCENE}_vh_clean_2.ply", "aggregation": WORK / f"{SCENE}.aggregation.json",
             "segments": WORK / f"{SCENE}_vh_clean_2.0.010000.segs.json"}
    paths["ply"].write_bytes(ply_bytes(xyz, rgb, faces))
    paths["aggregation"].write_text(json.dumps({"sceneId": SCENE, "appId": "Aggregator.v2",
                                                "segmentsFile": paths["segments"].name, "segGroups": groups}))
    paths["segments"].write_text(json.dumps({"sceneId": SCENE, "params": {}, "segIndices": segments.tolist()}))
    return paths


def main() -> None:
    call_command("migrate", verbosity=0)
    paths = write_inputs(np.random.default_rng(0))
    slug = f"scan-bench-{os.getpid()}"
    benchmark = Benchmark.objects.create(name=f"Scan bench {os.getpid()}", slug=slug, family="hypo3d")
    timed = {"processing_s": 0.0}
    build = processing.build_viewer_assets

    def timed_build(*args, **kwargs):
        started = time.perf_counter()
        try:
            return build(*args, **kwargs)
        finally:
            timed["processing_s"] += time.perf_counter() - started

    tasks.build_viewer_assets = timed_build
    try:
        started = time.perf_counter()
        inputs = {key: NamedFile(path.name, path.read_bytes()) for key, path in paths.items()}
        timed["read_s"] = time.perf_counter() - started
        scene = import_scan(benchmark, SCENE, inputs.pop("ply"), caption="A furnished room.", **inputs)
        total = time.perf_counter() - started
        roles = set(scene.assets.values_list("role", flat=True))
        assert AssetRole.VIEWER_POINTS in roles and AssetRole.TOPVIEW_SEMANTIC in roles, roles
        print(f"points={N_POINTS} objects={scene.scene_objects.count()} ply_mb={paths['ply'].stat().st_size / 1e6:.1f}")
    finally:
        tasks.build_viewer_assets = build
        Benchmark.objects.filter(slug=slug).delete()
    import_db = total - timed["read_s"] - timed["processing_s"]
    print(f"read_s={timed['read_s']:.2f} import_db_s={import_db:.2f} processing_s={timed['processing_s']:.2f} "
          f"import_s={total:.2f}")


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
