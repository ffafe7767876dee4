"""Release export speed: a 15,000-item release written as JSONL (+ manifest), JSON, CSV and Parquet.

Run: .venv/bin/python bench/export.py   (no arguments)
Makes a throwaway benchmark (100 scenes, 1,500 changes, 15,000 items) in a fresh PostgreSQL database
(hypolab_bench_export, dropped at the end), with files in a temporary folder,
times `export_release` (freezing the items, the JSONL and the manifest; the format task held back)
and each further format as that task writes it, then deletes it all. Prints one line per format and last
`export_s=N`, the slowest of them.
"""

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["MEDIA_ROOT"] = tempfile.mkdtemp(prefix="hypolab-export-bench-")
DB = "hypolab_bench_export"

from _database import drop_database, use_fresh_database  # noqa: E402 -- a sibling module of the benches

use_fresh_database(DB)

from benchmarks import services, tasks  # noqa: E402
from benchmarks.models import Benchmark, ContextChange, Item, Release, Scene, SceneObject, WorldFrame  # noqa: E402
from benchmarks.releases import life, lines, stream  # noqa: E402

N_ITEMS = 15_000
N_SCENES = 100
ITEMS_PER_CHANGE = 10


def make_benchmark() -> Benchmark:
    benchmark = Benchmark.objects.create(name=f"Export bench {os.getpid()}", slug=f"export-bench-{os.getpid()}",
                                         family="hypo3d")
    scenes = Scene.objects.bulk_create(
        [Scene(benchmark=benchmark, external_id=f"scene{i:04d}_00", caption="An office.") for i in range(N_SCENES)]
    )
    objects = SceneObject.objects.bulk_create([
        SceneObject(scene=s, instance_id=1, label="desk", center_x=1, center_y=1, center_z=0.5, size_x=1, size_y=1,
                    size_z=1) for s in scenes
    ])
    WorldFrame.objects.bulk_create([
        WorldFrame(scene=o.scene, anchor=o, side="left", text="The desk is to the left of the scene.") for o in objects
    ])
    changes = ContextChange.objects.bulk_create([
        ContextChange(scene=scenes[i % N_SCENES], change_type="movement", status="approved",
                      raw_text=f"The chair number {i} has been moved from the desk to the window.")
        for i in range(N_ITEMS // ITEMS_PER_CHANGE)
    ])
    Item.objects.bulk_create([
        Item(benchmark=benchmark, scene=changes[i // ITEMS_PER_CHANGE].scene, change=changes[i // ITEMS_PER_CHANGE],
             question=f"What is directly to the left of chair {i} now?", answers=["window"], status="approved",
             tags={"change_type": "movement", "question_type": ["Direction"]}, provenance={"source": "bench"})
        for i in range(N_ITEMS)
    ], batch_size=2000)
    return benchmark


def main() -> None:
    benchmark = make_benchmark()
    try:
        # The export's job is not sent: its freeze is timed alone, the other formats one by one below.
        with mock.patch.object(tasks.export_release, "delay"):
            start = time.perf_counter()
            release = life.export_release(benchmark, "1.0.0", None)
            release = life.freeze_release(release.pk)
            timings = {"jsonl": time.perf_counter() - start}
        released = lines.release_lines(release)
        for fmt in stream.FORMATS:
            start = time.perf_counter()
            content = stream.format_bytes(fmt, released)
            asset = services.store_asset(None, "export", f"bench.{fmt}", content)
            timings[fmt] = time.perf_counter() - start
            asset.file.delete(save=False)
            asset.delete()
        for fmt, seconds in timings.items():
            print(f"{fmt}: {seconds:.2f} s")
        print(f"items={release.items.count()} export_s={max(timings.values()):.2f}")
    finally:
        for release in Release.objects.filter(benchmark=benchmark):
            for asset in (release.items_file, release.manifest_file):
                asset.file.delete(save=False)
                asset.delete()
            release.delete()
        benchmark.delete()
        drop_database(DB)
        shutil.rmtree(os.environ["MEDIA_ROOT"], ignore_errors=True)


if __name__ == "__main__":
    main()
