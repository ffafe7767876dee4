"""Orchestration overhead per item: the random baseline (no model cost) over 10,000 items,
fanned out to a real Celery worker on Redis, written to PostgreSQL.

Needs no arguments; creates its own database (hypolab_bench), starts and stops its workers.
Last line: ms_per_item=N (goal: under 5)."""

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
N_ITEMS = 10_000
DB = "hypolab_bench"

os.environ.update({
    "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB}",
    "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
    "REDIS_KEY_PREFIX": f"bench-{os.getpid()}-",
    "DJANGO_SETTINGS_MODULE": "config.settings",
    "MEDIA_ROOT": "/tmp/hypolab-bench-media",
})
sys.path.insert(0, str(ROOT))

from _database import use_fresh_database  # noqa: E402 -- a sibling module of the benches


def main():
    use_fresh_database(DB)
    from benchmarks.models import Benchmark, Item, Scene
    from config.celery import app as celery_app
    from modeleval import services
    from modeleval.models import Run

    benchmark = Benchmark.objects.create(name="bench", slug="bench", family="hypo3d")
    scene = Scene.objects.create(benchmark=benchmark, external_id="scene0000_00")
    Item.objects.bulk_create(
        Item(benchmark=benchmark, scene=scene, question=f"Question {i}?", answers=["chair" if i % 2 else "desk"],
             status="approved", tags={"change_type": "movement"})
        for i in range(N_ITEMS)
    )
    celery_app.control.purge()
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu,default", "--pool", "solo",
         "--hostname", "bench@local", "--loglevel", "WARNING", "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(3)  # worker start-up is not orchestration overhead
        started = time.perf_counter()
        run = services.launch_run(services.ensure_baseline_model().pk, benchmark, None, batch_size=200)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            run.refresh_from_db()
            if run.status in (Run.Status.FINISHED, Run.Status.FAILED):
                break
            time.sleep(0.1)
        elapsed = time.perf_counter() - started
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert run.status == Run.Status.FINISHED, run.status
    assert run.predictions.count() == N_ITEMS
    print(f"items={N_ITEMS} elapsed_s={elapsed:.2f} status={run.status}")
    print(f"ms_per_item={elapsed * 1000 / N_ITEMS:.3f}")


if __name__ == "__main__":
    main()
