"""The demo's independent answers: the two demo reviewers each answer every approved item of the
finished benchmarks they did not write, mostly right, so that each agreement page has items answered by two
people and shows Krippendorff's alpha. Two answers an item stay below the three consensus is decided at
(`review.consensus.ANSWERS_NEEDED`), so no item is flagged and the released items stay as released.
Recorded through `review.consensus.record_independent_answer`, as the API records a reviewer's answer;
a benchmark that already has independent answers is skipped, so a second seed writes nothing."""

import random

from benchmarks.models import Benchmark, Item
from demo.files import seeded_rng
from review import consensus
from review.models import IndependentAnswer

ACCURACY = 0.85  # each reviewer's share of right answers: enough disagreement for alpha to measure
LETTERS = "ABCDEFGHIJ"


def reviewer_answer(item: Item, rng: random.Random, wrong_answers: list[str]) -> str:
    """A reviewer's answer to one item: its gold answer, or another option or answer of the benchmark."""
    right = rng.random() < ACCURACY
    if item.choices:
        gold = ", ".join(item.answers)
        others = [LETTERS[i] for i in range(len(item.choices)) if LETTERS[i] not in item.answers]
        return gold if right or not others else rng.choice(others)
    gold = str(item.answers[0])
    others = [answer for answer in wrong_answers if answer != gold]
    return gold if right or not others else rng.choice(others)


def seed_independent_answers(slugs, reviewers, log=print) -> int:
    """Each reviewer's answers on each benchmark's approved items where the benchmark has none yet; how
    many were recorded."""
    recorded = 0
    for benchmark in Benchmark.objects.filter(slug__in=slugs).order_by("pk"):
        if IndependentAnswer.objects.filter(item__benchmark=benchmark).exists():
            continue
        items = list(benchmark.items.filter(status=Item.Status.APPROVED).order_by("pk"))
        open_answers = sorted({str(item.answers[0]) for item in items if not item.choices and item.answers})
        for reviewer in reviewers:
            rng = seeded_rng(benchmark.slug, "independent answers", reviewer.username)
            for item in items:
                if item.author_id != reviewer.pk:  # authors do not answer their own items
                    consensus.record_independent_answer(item.pk, reviewer, reviewer_answer(item, rng, open_answers))
                    recorded += 1
        log(f"  {benchmark.slug}: independent answers by {', '.join(r.username for r in reviewers)}")
    return recorded
