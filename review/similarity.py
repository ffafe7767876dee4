"""Near-duplicate search over sentence embeddings, in blocks so memory stays bounded (pure numpy).

Encoding is the cost (about 10 ms of one CPU core per short text with all-MiniLM-L6-v2), so each
distinct text is encoded once, and vectors already known (cached by text sha256) are not encoded
again; the pair search is a few seconds of matrix products.
"""

import hashlib
from collections.abc import Callable

import numpy as np

ENCODE_CHUNK = 1024  # texts per progress step
# Measured on this 2-core machine under load: 128 texts a batch cost the same CPU as 512 but ran
# 1.4x faster in wall time (smaller matrices stay in cache when other processes share it).
ENCODE_BATCH = 128


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def encode_texts(encoder, texts: list[str], known: dict[str, np.ndarray],
                 on_progress: Callable[[int, int], None]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Unit-length embeddings, one row per text, and the newly encoded vectors by text sha256.

    Texts whose sha256 is in `known` and repeats of a text are not encoded; the rest are encoded
    shortest first (similar lengths share a batch, so little padding) in chunks, calling
    on_progress(n_encoded, n_to_encode) after each.
    """
    shas = [text_sha(t) for t in texts]
    todo = sorted({sha: text for sha, text in zip(shas, texts, strict=True) if sha not in known}.items(),
                  key=lambda pair: len(pair[1]))
    new = {}
    for start in range(0, len(todo), ENCODE_CHUNK):
        chunk = todo[start:start + ENCODE_CHUNK]
        vectors = encoder([text for _, text in chunk], batch_size=ENCODE_BATCH, normalize_embeddings=True,
                          convert_to_numpy=True, show_progress_bar=False)
        new.update(zip((sha for sha, _ in chunk), np.asarray(vectors, dtype=np.float32), strict=True))
        on_progress(start + len(chunk), len(todo))
    vectors = {**known, **new}
    matrix = np.stack([vectors[sha] for sha in shas]) if shas else np.zeros((0, 0), dtype=np.float32)
    return matrix, new


def unit_rows(embeddings) -> np.ndarray:
    matrix = np.asarray(embeddings, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def similar_pairs(embeddings, threshold: float, block: int = 2048) -> list[tuple[int, int, float]]:
    """Index pairs (i < j) whose cosine similarity exceeds `threshold`, most similar first.

    Compares one block of rows with itself and every later row, so each pair is computed once and
    at most block x n similarities are held at a time.
    """
    unit = unit_rows(embeddings)
    firsts, seconds, scores = [], [], []
    for start in range(0, len(unit), block):
        block_scores = unit[start:start + block] @ unit[start:].T
        rows, cols = np.nonzero(block_scores > threshold)
        # the upper triangle only: column offset c is row start + c, so c > r means i < j (filtered after
        # the threshold: few entries pass it, where masking the triangle first wrote millions)
        upper = cols > rows
        rows, cols = rows[upper], cols[upper]
        firsts.append(rows + start)
        seconds.append(cols + start)
        scores.append(block_scores[rows, cols])
    if not scores:
        return []
    firsts, seconds, scores = np.concatenate(firsts), np.concatenate(seconds), np.concatenate(scores)
    order = np.lexsort((seconds, firsts, -scores))  # most similar first; ties by index
    return list(zip(firsts[order].tolist(), seconds[order].tolist(), scores[order].astype(float).tolist(),
                    strict=True))
