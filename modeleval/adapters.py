"""Model adapters: turn an item into a raw output string. Loaded once per worker process."""

import random
from functools import lru_cache

from benchmarks.models import Benchmark, Item, SceneObject


class RandomBaseline:
    """Seeded random answer over the benchmark's answer vocabulary.

    The draw depends only on (seed, item id), so a retried or redelivered batch gives the
    same output and a rerun of the run reproduces it exactly."""

    def __init__(self, seed: int, vocabulary: list[str]):
        self.seed = seed
        self.vocabulary = vocabulary

    def answer(self, item: Item) -> str:
        rng = random.Random(f"{self.seed}:{item.pk}")
        if item.choices:
            return chr(ord("A") + rng.randrange(len(item.choices)))
        if not self.vocabulary:
            return ""
        return rng.choice(self.vocabulary)


def answer_vocabulary(benchmark: Benchmark) -> list[str]:
    """Every distinct gold answer of the benchmark's approved open items and every object label of
    its scenes (Hypo3D answers are mostly object names), sorted."""
    answers = set(SceneObject.objects.filter(scene__benchmark=benchmark).values_list("label", flat=True))
    for values in Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).values_list(
        "answers", flat=True
    ):
        answers.update(a for a in values if isinstance(a, str) and a)
    return sorted(answers)


@lru_cache(maxsize=8)
def load_adapter(adapter: str, seed: int, benchmark_id: int):
    """Cached per process: the expensive part of a real model (weights) is paid once per worker."""
    if adapter == "random_baseline":
        return RandomBaseline(seed, answer_vocabulary(Benchmark.objects.get(pk=benchmark_id)))
    raise ValueError(f"Unknown adapter {adapter!r}")
