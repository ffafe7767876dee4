"""The export part of bench/scale.py (#33): a release of N synthetic items written by the streaming export
(benchmarks/releases/stream.py), and the peak memory of the process that writes it.

    from _export_scale import measure_export      # bench/ is on sys.path for the benches
    measure_export(500_000) -> {"export_items": 500000, "export_peak_mb": ..., "export_s": ..., "fill_s": ...}

Both steps run in child processes (this file run as a script), so the caller's own memory (and whether it
has set Django up) does not matter: `fill` makes a fresh PostgreSQL database and COPYs the items in;
`export` freezes the release (JSONL + manifest, items read by a server-side cursor) and writes its JSON,
CSV and Parquet and card (the formats task, called in the same process), then prints its peak resident
memory (ru_maxrss: the whole process, Django and pyarrow included). Files go to a temporary folder;
the database and the folder are dropped at the end.

By hand: .venv/bin/python bench/_export_scale.py 500000
"""

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DB = os.environ.get("HYPOLAB_SCALE_EXPORT_DB") or "hypolab_bench_scale_export"  # the children get the call's own
N_SCENES = 100
ITEMS_PER_CHANGE = 100


def _child(step: str, *args: str, media: str) -> dict:
    env = {**os.environ, "MEDIA_ROOT": media, "SECRET_KEY": os.environ.get("SECRET_KEY") or "scale-export-bench".ljust(64, "k"),
           "HYPOLAB_SCALE_EXPORT_DB": f"hypolab_bench_scale_export_{os.getpid()}"}  # two runs never share one
    for variable in ("REDIS_URL", "S3_BUCKET", "PYTEST_XDIST_WORKER"):
        env.pop(variable, None)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), step, *args], env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"bench/_export_scale.py {step} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_export(n_items: int = 500_000) -> dict:
    media = tempfile.mkdtemp(prefix="hypolab-scale-export-")
    try:
        filled = _child("fill", str(n_items), media=media)
        exported = _child("export", media=media)
    finally:
        _child("drop", media=media)
        shutil.rmtree(media, ignore_errors=True)
    return {"export_items": exported["items"], "export_peak_mb": exported["peak_mb"],
            "export_s": exported["seconds"], "fill_s": filled["seconds"]}


def fill(n_items: int) -> dict:
    """N approved Hypo3D-like items over 100 scenes, one change per 100 items: COPY, 20k rows a second or more."""
    sys.path.insert(0, str(HERE.parent))
    sys.path.insert(0, str(HERE))
    from _database import use_fresh_database

    start = time.perf_counter()
    use_fresh_database(DB)
    from django.db import connection

    from benchmarks.models import Benchmark, ContextChange, Item, Scene, SceneObject, WorldFrame

    benchmark = Benchmark.objects.create(name="Scale export bench", slug="scale-export-bench", family="hypo3d")
    scenes = Scene.objects.bulk_create(
        [Scene(benchmark=benchmark, external_id=f"scene{i:04d}_00", caption="An office.") for i in range(N_SCENES)])
    objects = SceneObject.objects.bulk_create([
        SceneObject(scene=s, instance_id=1, label="desk", center_x=1, center_y=1, center_z=0.5, size_x=1, size_y=1,
                    size_z=1) for s in scenes])
    WorldFrame.objects.bulk_create([
        WorldFrame(scene=o.scene, anchor=o, side="left", text="The desk is to the left of the scene.") for o in objects])
    n_changes = max(1, -(-n_items // ITEMS_PER_CHANGE))
    changes = ContextChange.objects.bulk_create([
        ContextChange(scene=scenes[i % N_SCENES], change_type="movement", status="approved",
                      raw_text=f"The chair number {i} has been moved from the desk to the window.")
        for i in range(n_changes)], batch_size=5000)
    # One item built as Django would save it gives every column's value (fields other sessions add included);
    # the rows vary only in question, scene and change.
    template = Item(benchmark=benchmark, scene=scenes[0], change=changes[0], question="", answers=["window"],
                    status="approved", tags={"change_type": "movement", "question_type": ["Direction"]},
                    provenance={"source": "bench"})
    fields = [f for f in Item._meta.concrete_fields if not f.primary_key]
    values = [f.get_db_prep_save(f.pre_save(template, add=True), connection) for f in fields]
    index = {f.attname: k for k, f in enumerate(fields)}
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {Item._meta.db_table} ({columns}) FROM STDIN") as copy:
            for i in range(n_items):
                change = changes[i // ITEMS_PER_CHANGE]
                row = list(values)
                row[index["question"]] = f"What is directly to the left of chair {i} now?"
                row[index["change_id"]], row[index["scene_id"]] = change.pk, change.scene_id
                copy.write_row(row)
    return {"items": Item.objects.filter(benchmark=benchmark).count(), "seconds": round(time.perf_counter() - start, 1)}


def export() -> dict:
    sys.path.insert(0, str(HERE.parent))
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{DB}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from benchmarks.models import Benchmark
    from benchmarks.releases import life

    benchmark = Benchmark.objects.get(slug="scale-export-bench")
    start = time.perf_counter()
    # the whole export (its job) is run here, not in a worker
    release = life.export_release(benchmark, f"1.{benchmark.releases.count()}.0", None, inline=True)
    seconds = time.perf_counter() - start
    files = life.release_files(release)
    return {"items": release.items.count(), "seconds": round(seconds, 1),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "files": {fmt: asset.size for fmt, asset in files.items()},
            "not_written": sorted(release.card.get("not_written", {}))}


def drop() -> dict:
    sys.path.insert(0, str(HERE))
    import psycopg
    from _database import ADMIN_URL

    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB}" WITH (FORCE)')
    return {}


if __name__ == "__main__":
    step = sys.argv[1] if len(sys.argv) > 1 else "500000"
    if step == "fill":
        print(json.dumps(fill(int(sys.argv[2]))))
    elif step == "export":
        print(json.dumps(export()))
    elif step == "drop":
        print(json.dumps(drop()))
    else:
        result = measure_export(int(step))
        print(" ".join(f"{k}={v}" for k, v in result.items()))
