"""A near-duplicate index per benchmark and text kind that grows as texts arrive (Hypo3D's SBERT
cosine > 0.8 filter past 10⁵ texts, where the exact pairwise search in similarity.py turns quadratic).

One folder per (benchmark, kind) under DEDUP_INDEX_DIR (default MEDIA_ROOT/dedup_index; a path every
worker shares), three parts:

- `base.faiss`: an inverted-file index (faiss IVF, 8-bit scalar-quantised unit vectors, inner product
  = cosine), opened memory-mapped and read only, so opening it costs nothing and a search reads only
  the `nprobe` lists it probes; trained once, when the texts first pass EXACT_MAX, and never again;
- `delta.f32` + `delta.ids`: the vectors added since the base was last written, appended as they
  arrive (a 100-text add writes 150 kB whatever the base holds) and searched exactly;
- `meta.json`: dimension and counts.

Below EXACT_MAX vectors there is no base: a matrix product over the delta is faster than an index
(20k texts: 2.7 s exact against 18 s to build an HNSW index). When the delta passes DELTA_MAX it is
merged into the base (the base's lists grow; nothing is retrained) and written anew beside the old one,
then renamed over it. Writers hold a file lock on the folder; readers need none (renames are atomic).

`add` returns each new text's neighbours above the threshold among everything indexed before it and
the texts of its own batch; `search` the same for vectors not added. Recall against exact search is
measured by bench/scale.py (docs/PERFORMANCE.md).
"""

import fcntl
import json
import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np

EXACT_MAX = 50_000  # below this many vectors exact search wins; at it, the base is trained
DELTA_MAX = 20_000  # appended vectors searched exactly before a merge into the base
NPROBE = 16  # inverted lists probed per query (of 1,024 at 10⁶; bench/scale.py sweeps 8-64 for recall)
FACTORY = "IVF{nlist},SQ8"
TRAIN_SAMPLE = 60_000


def index_root() -> Path:
    from django.conf import settings

    configured = getattr(settings, "DEDUP_INDEX_DIR", None)
    return Path(configured) if configured else Path(settings.MEDIA_ROOT) / "dedup_index"


def _faiss():
    import faiss

    return faiss


def _unit(vectors) -> np.ndarray:
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


class GrowingIndex:
    """The index kept in `folder`; see the module docstring."""

    def __init__(self, folder: Path, dim: int | None = None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        meta = self.folder / "meta.json"
        self.meta = json.loads(meta.read_text()) if meta.exists() else {"dim": dim, "base": 0, "delta": 0}
        if self.meta["dim"] is None:
            self.meta["dim"] = dim
        self._base = None
        self._base_mtime = None

    @classmethod
    def for_benchmark(cls, benchmark_id: int, kind: str, dim: int | None = None) -> "GrowingIndex":
        return cls(index_root() / str(int(benchmark_id)) / kind, dim)

    def __len__(self) -> int:
        return self.meta["base"] + self.meta["delta"]

    # --- storage ---------------------------------------------------------------------------------

    @contextmanager
    def _locked(self):
        with open(self.folder / "lock", "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                meta = self.folder / "meta.json"  # another writer may have grown it since we opened it
                if meta.exists():
                    self.meta = json.loads(meta.read_text())
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _write_meta(self) -> None:
        tmp = self.folder / "meta.json.tmp"
        tmp.write_text(json.dumps(self.meta))
        os.replace(tmp, self.folder / "meta.json")

    def base(self):
        """The base index memory-mapped read only (None below EXACT_MAX), reopened when merged anew."""
        path = self.folder / "base.faiss"
        if not path.exists():
            return None
        mtime = path.stat().st_mtime_ns
        if self._base is None or mtime != self._base_mtime:
            faiss = _faiss()
            self._base = faiss.read_index(str(path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
            self._base.nprobe = NPROBE
            self._base_mtime = mtime
        return self._base

    def delta(self) -> tuple[np.ndarray, np.ndarray]:
        """The appended (vectors, ids), as many as the meta counts (a write cut off is ignored)."""
        n, dim = self.meta["delta"], self.meta["dim"]
        if not n:
            return np.zeros((0, dim or 0), np.float32), np.zeros(0, np.int64)
        vectors = np.fromfile(self.folder / "delta.f32", dtype=np.float32, count=n * dim).reshape(n, dim)
        ids = np.fromfile(self.folder / "delta.ids", dtype=np.int64, count=n)
        return vectors, ids

    # --- search ----------------------------------------------------------------------------------

    def search(self, vectors, threshold: float) -> list[list[tuple[int, float]]]:
        """Per query vector, the indexed (id, cosine) above `threshold`, most similar first."""
        queries = _unit(vectors)
        found = [dict() for _ in range(len(queries))]
        base = self.base()
        if base is not None and len(queries):
            limits, scores, ids = base.range_search(queries, float(threshold))
            for q in range(len(queries)):
                for i, s in zip(ids[limits[q]:limits[q + 1]].tolist(), scores[limits[q]:limits[q + 1]].tolist(),
                                strict=True):
                    found[q][i] = s
        delta, delta_ids = self.delta()
        if len(delta) and len(queries):
            scores = queries @ delta.T
            rows, cols = np.nonzero(scores > threshold)
            for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
                found[r][int(delta_ids[c])] = float(scores[r, c])
        return [sorted(hits.items(), key=lambda hit: (-hit[1], hit[0])) for hits in found]

    def add(self, ids, vectors, threshold: float | None = None) -> list[list[tuple[int, float]]]:
        """Append (ids, vectors); when `threshold` is given, first search each new vector's neighbours
        above it among what was indexed and the batch itself (returned as `search` gives them)."""
        ids = np.asarray(ids, dtype=np.int64)
        vectors = _unit(vectors)
        if len(ids) != len(vectors):
            raise ValueError("One id per vector.")
        with self._locked():
            if self.meta["dim"] is None:
                self.meta["dim"] = vectors.shape[1]
            if vectors.shape[1] != self.meta["dim"]:
                raise ValueError(f"Vectors of {vectors.shape[1]} dimensions for an index of {self.meta['dim']}.")
            neighbours = None
            if threshold is not None:
                neighbours = self.search(vectors, threshold)
                scores = vectors @ vectors.T
                for r in range(len(ids)):
                    batch = [(int(ids[c]), float(scores[r, c])) for c in np.flatnonzero(scores[r] > threshold)
                             if c != r]
                    neighbours[r] = sorted(neighbours[r] + batch, key=lambda hit: (-hit[1], hit[0]))
            with open(self.folder / "delta.f32", "ab") as out:
                out.truncate(self.meta["delta"] * self.meta["dim"] * 4)  # drop a write cut off before
                out.write(vectors.tobytes())
            with open(self.folder / "delta.ids", "ab") as out:
                out.truncate(self.meta["delta"] * 8)
                out.write(ids.tobytes())
            self.meta["delta"] += len(ids)
            self._write_meta()
            if self.meta["delta"] > DELTA_MAX if self.meta["base"] else self.meta["delta"] >= EXACT_MAX:
                self._merge()
        return neighbours

    def _merge(self) -> None:
        """Move the delta into the base: trained on the first merge (from the delta), grown after."""
        faiss = _faiss()
        vectors, ids = self.delta()
        path = self.folder / "base.faiss"
        if path.exists():
            index = faiss.read_index(str(path))
        else:
            nlist = max(16, min(4096, int(4 * np.sqrt(max(len(vectors), 1)))))
            index = faiss.index_factory(vectors.shape[1], FACTORY.format(nlist=nlist), faiss.METRIC_INNER_PRODUCT)
            sample = vectors[np.random.default_rng(0).permutation(len(vectors))[:TRAIN_SAMPLE]]
            index.train(sample)
        index.add_with_ids(vectors, ids)
        tmp = self.folder / "base.faiss.tmp"
        faiss.write_index(index, str(tmp))
        os.replace(tmp, path)
        self.meta["base"] += len(ids)
        self.meta["delta"] = 0
        self._write_meta()
        for name in ("delta.f32", "delta.ids"):
            (self.folder / name).unlink(missing_ok=True)
        self._base = None

    @classmethod
    def build(cls, folder: Path, batches, dim: int, nlist: int | None = None, train=None) -> "GrowingIndex":
        """A base index from (ids, vectors) batches of any total size without holding them all in float32
        (bulk load; bench/scale.py builds its 10⁶-vector index this way): trained on `train` (a sample
        of vectors) and filled batch by batch."""
        faiss = _faiss()
        index = faiss.index_factory(dim, FACTORY.format(nlist=nlist or 1024), faiss.METRIC_INNER_PRODUCT)
        index.train(_unit(train))
        n = 0
        for ids, vectors in batches:
            index.add_with_ids(_unit(vectors), np.asarray(ids, dtype=np.int64))
            n += len(ids)
        grown = cls(folder, dim)
        with grown._locked():
            faiss.write_index(index, str(grown.folder / "base.faiss"))
            grown.meta = {"dim": dim, "base": n, "delta": 0}
            grown._write_meta()
        return grown
