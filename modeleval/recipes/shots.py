"""In-context shots drawn from the benchmark's own items, for a recipe whose run names them as
{"from_items": N, "seed": S} (Hypo3D Table 13's three-shot ICL: the paper states neither how its shots
were chosen nor their format). N approved items (of the run's subset) are sampled with the seed, in
row order; each becomes {question, answer} as modeleval.prompting.prompts.with_examples puts it before the prompt:
the context change and the question as the paper's prompt writes them, and the first gold answer. The
shots are held out of the scored items of every run of the recipe for that model, zero-shot included,
so the rows compare the same items (an item shown with its answer is not a test of it)."""

import random

from benchmarks.models import Benchmark, Item
from core.errors import DomainError

from ..runs import run_options

MAX_SHOTS = run_options.MAX_EXAMPLES


def resolved(examples, benchmark: Benchmark, subset: dict | None = None) -> tuple[list, list[int]]:
    """(examples, the items they were drawn from): a list as given (none drawn); {"from_items", "seed"}
    as that many of the benchmark's items."""
    if not isinstance(examples, dict):
        return examples, []
    count, seed = examples.get("from_items"), examples.get("seed", 0)
    if set(examples) - {"from_items", "seed"} or type(count) is not int or not 1 <= count <= MAX_SHOTS \
            or type(seed) is not int:
        raise DomainError(f'Shots from items are {{"from_items": 1-{MAX_SHOTS}, "seed": S}}.', field="examples")
    items = run_options.subset_filter(
        Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).exclude(answers=[]),
        run_options.checked_subset(subset)).select_related("change").order_by("pk")
    pks = list(items.values_list("pk", flat=True))
    if len(pks) < count:
        raise DomainError(f"{count} shots asked for; the benchmark has {len(pks)} approved items to draw them from.",
                          field="examples")
    chosen = sorted(random.Random(seed).sample(pks, count))
    shots = []
    for item in items.filter(pk__in=chosen):
        question = f"Context Change: {item.change.text} Question: {item.question}" if item.change else item.question
        shots.append({"question": question, "answer": str(item.answers[0])})
    return shots, chosen
