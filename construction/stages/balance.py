"""3DSRBench-style balancing of a benchmark's approved items: per-type quotas, then complementary
items added beside the originals (the paper grows 2,100 questions to 2,625 this way), with the answer
distribution per type before and after.

params: `by` (the tag whose values are the types; items without it are the type "(untagged)", and
all items one type when no tag is named), `quota` (keep at most this many items per type), `seed` (of
the sample; 0 by default), `rewrite` (false adds no complementary items). A complementary item is a
generated draft for review (provenance: the balance stage, the rule, the original); the distribution
"after" counts the approved items and those drafts, as the benchmark stands once they are reviewed.
Quotas come first, so that a second run finds every type within its quota and its answers already
even, and does nothing."""

import random
import re
from collections import Counter, deque
from dataclasses import dataclass

from django.db import transaction

from benchmarks.models import AnswerFormat, Item
from core.errors import DomainError
from core.validation import whole_number
from review import selectors as review_selectors
from review import services as review_services

# 3DSRBench's rule-based augmentation ("given a question asking which object is higher ... we generate
# a question asking which is lower"): asking for the opposite relation flips a two-way answer.
OPPOSITES = (("higher", "lower"), ("left", "right"), ("closer to", "farther from"), ("closer", "farther"),
             ("above", "below"), ("in front of", "behind"))
_OPPOSITE = {a: b for a, b in OPPOSITES} | {b: a for a, b in OPPOSITES}
_RELATION = re.compile(r"\b(" + "|".join(sorted(_OPPOSITE, key=len, reverse=True)) + r")\b", re.IGNORECASE)
# each pair of answers that a rewrite turns into one another, evened separately
TWO_WAY_PAIRS = (("A", "B"), ("no", "yes"))
OPEN = "(open)"  # the distribution's key for any other open answer
ALL = "(all)"  # the one type when no tag is given
UNTAGGED = "(untagged)"
MAX_QUOTA = 1_000_000
GENERATOR = "balance"  # the provenance of the complementary items this stage adds
COMPLEMENT_SUFFIX = "~complement"


@dataclass(frozen=True)
class Params:
    by: str | None
    quota: int | None
    seed: int
    rewrite: bool


def checked_params(params: dict) -> Params:
    params = params or {}
    by = params.get("by")
    if by is not None and (not isinstance(by, str) or not by.strip()):
        raise DomainError("Name the tag whose values are the types (e.g. subtype).", field="by")
    quota = whole_number(params.get("quota"), "quota", 1, MAX_QUOTA, optional=True)
    seed = whole_number(params.get("seed", 0), "seed", 0, 2**31 - 1)
    rewrite = params.get("rewrite", True)
    if not isinstance(rewrite, bool):
        raise DomainError("Rewrite is true or false.", field="rewrite")
    return Params(by=by.strip() if by else None, quota=quota, seed=seed, rewrite=rewrite)


def type_of(item: Item, by: str | None) -> str:
    if by is None:
        return ALL
    value = (item.tags or {}).get(by)
    if value in (None, "", []):
        return UNTAGGED
    return "+".join(map(str, value)) if isinstance(value, list) else str(value)


def answer_key(item: Item) -> str:
    """What the distribution counts: the correct letter(s) of a choice item; yes or no, or OPEN, for
    an open one."""
    if item.answer_format != AnswerFormat.OPEN:
        return ",".join(item.answers)
    return review_selectors.yes_or_no(item) or OPEN


def complementary(question: str) -> tuple[str, str] | None:
    """(the question asking for the opposite relation, the rule used, e.g. 'higher -> lower'); None
    when it names no relation, or more than one (which one to turn would be a guess)."""
    found = _RELATION.findall(question)
    if len(found) != 1:
        return None
    word = found[0]
    opposite = _OPPOSITE[word.lower()]
    shown = opposite[0].upper() + opposite[1:] if word[0].isupper() else opposite
    return _RELATION.sub(shown, question, count=1), f"{word.lower()} -> {opposite}"


def distribution(items: list[Item], by: str | None) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter] = {}
    for item in items:
        counts.setdefault(type_of(item, by), Counter())[answer_key(item)] += 1
    return {kind: dict(sorted(counter.items())) for kind, counter in sorted(counts.items())}


def _rng(seed: int, kind: str, step: str) -> random.Random:
    # a string seed is hashed the same way in every process: the same params pick the same items
    return random.Random(f"{seed}:{step}:{kind}")


def evened_sample(items: list[Item], quota: int, rng: random.Random) -> list[Item]:
    """`quota` of the items, taken in turn from each answer's shuffled share, so that the answers
    kept are as even as the items allow."""
    shares: dict[str, list[Item]] = {}
    for item in sorted(items, key=lambda i: i.pk):
        shares.setdefault(answer_key(item), []).append(item)
    queues = []
    for key in sorted(shares):
        rng.shuffle(shares[key])
        queues.append(deque(shares[key]))
    kept: list[Item] = []
    while len(kept) < quota and any(queues):
        for queue in queues:
            if queue and len(kept) < quota:
                kept.append(queue.popleft())
    return kept


def _entry(item: Item, kind: str, **extra) -> dict:
    return {"item": item.pk, "id": item.scoring_id, "type": kind, "answer": answer_key(item), **extra}


def apply_quotas(stage, items: list[Item], params: Params) -> tuple[list[Item], list[dict]]:
    """(the items kept, the exclusions): each type over its quota keeps an evened seeded sample; the
    others are dropped from the benchmark with the reason."""
    by_type: dict[str, list[Item]] = {}
    for item in items:
        by_type.setdefault(type_of(item, params.by), []).append(item)
    kept, excluded = [], []
    for kind, members in sorted(by_type.items()):
        if len(members) <= params.quota:
            kept.extend(members)
            continue
        chosen = evened_sample(members, params.quota, _rng(params.seed, kind, "quota"))
        chosen_ids = {item.pk for item in chosen}
        kept.extend(chosen)
        for item in members:
            if item.pk in chosen_ids:
                continue
            reason = f"over the quota of {params.quota} for {params.by or 'the benchmark'}={kind} (seed {params.seed})"
            note = f"balance stage {stage.pk}: {reason}"
            if review_services.stage_verdict(item.pk, item.version, drop=True, note=note, criteria=["quota"]) is None:
                kept.append(item)  # edited meanwhile: judged again on the next run
            else:
                excluded.append(_entry(item, kind, reason=reason))
    return sorted(kept, key=lambda i: i.pk), excluded


def complements(benchmark, rejected: bool = False) -> dict[int, Item]:
    """The complementary items this stage added (and nobody rejected), by the original they turn."""
    found = Item.objects.filter(benchmark=benchmark, provenance__generator=GENERATOR)
    if not rejected:
        found = found.exclude(status=Item.Status.REJECTED)
    return {item.provenance.get("complement_of"): item for item in found}


def _complement(stage, item: Item, question: str, answers: list[str], rule: str, seed: int) -> Item:
    external_id = f"{item.external_id}{COMPLEMENT_SUFFIX}" if item.external_id else ""
    return Item.objects.create(
        benchmark=item.benchmark, scene=item.scene, change=item.change, external_id=external_id[:100],
        question=question, answer_format=item.answer_format, choices=list(item.choices), answers=answers,
        tags=dict(item.tags), status=Item.Status.DRAFT, complement_of=item,
        provenance={"source": "generated", "generator": GENERATOR, "version": "1", "stage": stage.pk,
                    "seed": seed, "rule": rule, "complement_of": item.pk},
    )


def even_answers(stage, items: list[Item], params: Params) -> tuple[list[dict], dict[str, dict]]:
    """(the complementary items added, the types left uneven for lack of a rule): within each type,
    each two-way pair's majority side gets complements on the other side until the two are even,
    the originals to turn chosen by the seed among those not turned yet."""
    added, uneven = [], {}
    pending = complements(stage.benchmark)
    turned = set(complements(stage.benchmark, rejected=True))  # a rejected complement is not made again
    by_type: dict[str, list[Item]] = {}
    for item in [*items, *pending.values()]:
        if review_selectors.flipped_answers(item) is not None:
            by_type.setdefault(type_of(item, params.by), []).append(item)
    for kind, members in sorted(by_type.items()):
        counts = Counter(answer_key(item) for item in members)
        for pair in TWO_WAY_PAIRS:
            more, fewer = sorted(pair, key=lambda key: -counts[key])
            needed = counts[more] - counts[fewer]
            if not needed:
                continue
            candidates = [item for item in members if answer_key(item) == more and item.pk not in turned
                          and item.status == Item.Status.APPROVED and complementary(item.question)]
            _rng(params.seed, kind, f"rewrite {more}").shuffle(candidates)
            with transaction.atomic():
                for item in candidates[:needed]:
                    question, rule = complementary(item.question)
                    answers = review_selectors.flipped_answers(item)
                    made = _complement(stage, item, question, answers, rule, params.seed)
                    added.append(_entry(item, kind, rule=rule, complement=made.pk,
                                        after={"question": question, "answers": made.answers}))
            left = needed - min(needed, len(candidates))
            if left > 1:  # a difference of one is as even as an odd count gets
                uneven.setdefault(kind, {})[f"{more} over {fewer}"] = left
    return added, uneven


def approved_items(benchmark) -> list[Item]:
    return list(Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).order_by("pk"))


def balance_stage(stage, progress) -> dict:
    params = checked_params(stage.params)
    items = approved_items(stage.benchmark)
    total = len(items)
    before = distribution([*items, *complements(stage.benchmark).values()], params.by)
    progress(0, total, f"{total} approved items")
    excluded: list[dict] = []
    if params.quota is not None:
        items, excluded = apply_quotas(stage, items, params)
        progress(total // 2, total, f"{len(excluded)} over their quota")
    added, uneven = [], {}
    if params.rewrite:
        added, uneven = even_answers(stage, items, params)
    after_items = approved_items(stage.benchmark) + list(complements(stage.benchmark).values())
    progress(total, total, f"{len(excluded)} excluded, {len(added)} complementary items added")
    return {
        "stage": "balance",
        "params": {"by": params.by, "quota": params.quota, "seed": params.seed, "rewrite": params.rewrite},
        "items": {"before": total, "after": len(after_items)},
        "distribution": {"before": before, "after": distribution(after_items, params.by)},
        "kept": len(after_items),
        "excluded": excluded,
        "added": added,
        "uneven": uneven,
    }
