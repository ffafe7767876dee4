"""The parts of bench/scale.py that each run in their own child process, so each peak resident size is
that part's alone: `python bench/_scale_parts.py scan|octree|dedup WORKDIR`. Each prints one JSON line
last, with its `peak_mb` (ru_maxrss of its own process: Python, Django and what the part holds)."""

import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OCTREE_POINTS = int(os.environ.get("SCALE_OCTREE_POINTS", 50_000_000))
BASE_POINTS = 2_000_000  # one sample of demo room 1; the scan is this jittered OCTREE_POINTS / BASE_POINTS times
JITTER_M = 0.004  # a scanner's range noise: each copy of the room moves each point by about 4 mm


def _django(work: Path) -> None:
    """Django set up over a throwaway SQLite (nothing here touches the database: the scan code imports models)."""
    os.environ.update({"DATABASE_URL": f"sqlite:///{work / 'unused.sqlite3'}", "MEDIA_ROOT": str(work / "media"),
                       "SECRET_KEY": "scale-bench".ljust(64, "k"), "DJANGO_SETTINGS_MODULE": "config.settings"})
    for variable in ("REDIS_URL", "S3_BUCKET"):
        os.environ.pop(variable, None)
    import django

    django.setup()


def write_scan(work: Path) -> dict:
    """scan.ply: OCTREE_POINTS points of demo room 1 as a binary PLY (17 bytes a point), written chunk
    by chunk: the room sampled once at BASE_POINTS and each copy jittered as a scanner's noise."""
    from demo.rooms import generate_room
    from scenes.scans import CANONICAL_DTYPE

    room = generate_room(0, points_per_room=BASE_POINTS)
    rng = np.random.default_rng(7)
    header = "\n".join(["ply", "format binary_little_endian 1.0", f"element vertex {OCTREE_POINTS}",
                        "property float x", "property float y", "property float z", "property uchar red",
                        "property uchar green", "property uchar blue", "property ushort instance", "end_header", ""])
    table = np.empty(BASE_POINTS, dtype=CANONICAL_DTYPE)
    with open(work / "scan.ply", "wb") as out:
        out.write(header.encode("ascii"))
        for _ in range(OCTREE_POINTS // BASE_POINTS):
            xyz = room.xyz + rng.normal(0, JITTER_M, room.xyz.shape).astype(np.float32)
            for axis, name in enumerate("xyz"):
                table[name] = xyz[:, axis]
            for channel, name in enumerate(("red", "green", "blue")):
                table[name] = room.rgb[:, channel]
            table["instance"] = room.instance
            out.write(table.tobytes())
    return {"scan_mb": round((work / "scan.ply").stat().st_size / 1e6)}


def build_octree(work: Path) -> dict:
    """The out-of-core octree of scan.ply, as process_scene builds it for a scan over its in-memory limit."""
    from scenes.octree_disk import build_octree_file
    from scenes.scans import ply_chunks

    started = time.perf_counter()
    meta = build_octree_file(ply_chunks(work / "scan.ply"), work / "scan.hlpc")
    return {"octree_points": meta["points"], "octree_s": round(time.perf_counter() - started, 1),
            "octree_nodes": meta["nodes"], "octree_depth": meta["depth"],
            "octree_mb": round((work / "scan.hlpc").stat().st_size / 1e6)}


def dedup(work: Path) -> dict:
    from bench._scale_dedup import measure_dedup

    return measure_dedup(work)


PARTS = {"scan": write_scan, "octree": build_octree, "dedup": dedup}


def main() -> None:
    part, work = sys.argv[1], Path(sys.argv[2])
    _django(work)
    result = PARTS[part](work)
    result["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
