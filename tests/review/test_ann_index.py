"""The growing near-duplicate index (review/ann_index.py): exact below EXACT_MAX, an IVF base past it
whose recall against exact search holds, kept on disk so a new process finds it, grown by appends
that never rewrite the base, merged without retraining; and texts indexed per benchmark as they arrive."""

import numpy as np
import pytest

from review import ann_index, dedup
from review.ann_index import GrowingIndex
from review.models import DuplicatePair
from review.similarity import unit_rows
from tests.factories import ChangeFactory, ItemFactory

DIM = 32
THRESHOLD = 0.8


def clustered(n: int, seed: int = 0, clusters: int = 200) -> np.ndarray:
    """Unit vectors around `clusters` centres, as sentence embeddings cluster by topic."""
    rng = np.random.default_rng(seed)
    centres = unit_rows(rng.standard_normal((clusters, DIM)))
    return unit_rows(centres[rng.integers(0, clusters, n)] + rng.standard_normal((n, DIM)) * 0.12)


def exact(queries: np.ndarray, vectors: np.ndarray, ids: np.ndarray) -> list[set]:
    scores = unit_rows(queries) @ vectors.T
    return [set(ids[np.flatnonzero(row > THRESHOLD)].tolist()) for row in scores]


def recall(found: list[list[tuple[int, float]]], truth: list[set]) -> float:
    hits = sum(len({i for i, _ in f} & t) for f, t in zip(found, truth, strict=True))
    return hits / max(sum(len(t) for t in truth), 1)


def test_below_exact_max_search_is_exact_and_finds_the_batch_itself(tmp_path):
    vectors = clustered(3_000)
    index = GrowingIndex(tmp_path / "idx")
    index.add(np.arange(3_000), vectors)
    queries = clustered(50, seed=1)

    found = index.search(queries, THRESHOLD)
    assert [{i for i, _ in hits} for hits in found] == exact(queries, vectors, np.arange(3_000))
    assert not (tmp_path / "idx" / "base.faiss").exists(), "no index below EXACT_MAX"
    # An add returns the new vectors' neighbours among the indexed texts and within its own batch.
    twin = queries[:1] + 0.01
    neighbours = index.add([10_001, 10_002], np.vstack([twin, twin]), THRESHOLD)
    assert 10_002 in {i for i, _ in neighbours[0]} and 10_001 in {i for i, _ in neighbours[1]}
    assert {i for i, _ in neighbours[0]} - {10_002} == exact(twin, vectors, np.arange(3_000))[0]


def test_past_exact_max_the_ivf_base_keeps_recall_against_exact_search(tmp_path, monkeypatch):
    monkeypatch.setattr(ann_index, "EXACT_MAX", 8_000)
    monkeypatch.setattr(ann_index, "DELTA_MAX", 4_000)
    vectors = clustered(20_000)
    index = GrowingIndex(tmp_path / "idx")
    for start in range(0, 20_000, 1_000):
        index.add(np.arange(start, start + 1_000), vectors[start:start + 1_000])
    assert (tmp_path / "idx" / "base.faiss").exists() and len(index) == 20_000
    assert index.meta["delta"] <= 4_000

    queries = unit_rows(vectors[::400] + np.random.default_rng(2).standard_normal((50, DIM)) * 0.03)
    truth = exact(queries, vectors, np.arange(20_000))
    assert sum(len(t) for t in truth) > 200
    assert recall(index.search(queries, THRESHOLD), truth) >= 0.95


def test_the_index_persists_and_grows_without_rewriting_its_base(tmp_path, monkeypatch):
    monkeypatch.setattr(ann_index, "DELTA_MAX", 1_500)
    vectors = clustered(12_000)
    train = vectors[:5_000]
    GrowingIndex.build(tmp_path / "idx", [(np.arange(10_000), vectors[:10_000])], DIM, nlist=64, train=train)
    base = tmp_path / "idx" / "base.faiss"
    stamp = base.stat().st_mtime_ns

    reopened = GrowingIndex(tmp_path / "idx")  # a new worker: everything from disk
    assert len(reopened) == 10_000
    reopened.add(np.arange(10_000, 11_000), vectors[10_000:11_000])
    assert base.stat().st_mtime_ns == stamp, "an add appends; the base is not rewritten"
    again = GrowingIndex(tmp_path / "idx")
    assert len(again) == 11_000 and again.meta["delta"] == 1_000
    hits = again.search(vectors[10_500:10_501], 0.99)[0]
    assert hits and hits[0][0] == 10_500

    import faiss

    before = faiss.read_index(str(base))  # kept: the quantizer below is a view into it
    centroids = faiss.extract_index_ivf(before).quantizer.reconstruct_n(0, 64)
    again.add(np.arange(11_000, 12_000), vectors[11_000:12_000])  # past DELTA_MAX: merged
    merged = faiss.read_index(str(base))
    assert merged.ntotal == 12_000 and again.meta == {"dim": DIM, "base": 12_000, "delta": 0}
    assert np.array_equal(faiss.extract_index_ivf(merged).quantizer.reconstruct_n(0, 64), centroids), \
        "grown, not retrained"
    assert again.search(vectors[11_500:11_501], 0.99)[0][0][0] == 11_500


def test_a_cut_off_append_is_ignored(tmp_path):
    index = GrowingIndex(tmp_path / "idx")
    index.add([1, 2], clustered(2))
    with open(tmp_path / "idx" / "delta.f32", "ab") as out:
        out.write(b"\0" * 40)  # a worker died mid-write: the meta still counts two
    assert len(GrowingIndex(tmp_path / "idx").delta()[0]) == 2
    index.add([3], clustered(1, seed=4))
    assert GrowingIndex(tmp_path / "idx").delta()[1].tolist() == [1, 2, 3]


@pytest.mark.django_db
def test_arrived_texts_go_into_their_benchmarks_index_with_their_neighbours(settings, tmp_path):
    settings.DEDUP_INDEX_DIR = str(tmp_path / "indexes")
    first = ChangeFactory(raw_text="The chair has been moved to the window.")
    second = ChangeFactory(scene=first.scene, raw_text="The chair was moved to the window.")
    other = ChangeFactory(raw_text="The lamp is red.")  # another benchmark
    item = ItemFactory(change=first, question="What is left of the chair?")
    vectors = clustered(3, seed=5)
    dedup.store_vectors(dedup.encoder_version(), {
        dedup.text_sha(first.raw_text): vectors[0], dedup.text_sha(second.raw_text): vectors[0] + 0.01,
        dedup.text_sha(other.raw_text): vectors[1], dedup.text_sha(item.question): vectors[2]})

    found = dedup.index_arrived([first.pk, second.pk, other.pk], [item.pk])
    assert found == 2  # the two chairs, each the other's neighbour
    changes = GrowingIndex.for_benchmark(first.scene.benchmark_id, DuplicatePair.Kind.CHANGE)
    assert sorted(changes.delta()[1].tolist()) == sorted([first.pk, second.pk])
    assert GrowingIndex.for_benchmark(first.scene.benchmark_id, DuplicatePair.Kind.QUESTION).delta()[1].tolist() \
        == [item.pk]
    assert GrowingIndex.for_benchmark(other.scene.benchmark_id, DuplicatePair.Kind.CHANGE).delta()[1].tolist() \
        == [other.pk]
