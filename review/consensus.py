"""Consensus: N people answer each item independently; items on which they do not agree (or agree
on something other than the gold answer) are flagged and stay out of releases until a reviewer
adjudicates them. Agreement is reported per question type and per benchmark."""

from django.db import transaction

from benchmarks.models import Benchmark, Item
from benchmarks.services import question_types_of
from core.errors import Conflict, DomainError, Forbidden, NotFound

from . import agreement
from .models import IndependentAnswer
from .services import checked_item_answers, lock_item_for_review, save_item_content

ANSWERS_NEEDED = 3  # independent answers before consensus is decided
MIN_SHARE = 2 / 3  # the majority answer's share needed for consensus


def _gold_labels(item: Item) -> set[str]:
    return {agreement.normalise_answer(a) for a in item.answers}


def decide_consensus(item: Item) -> None:
    """Recompute the item's agreement and, once enough answers are in, its consensus."""
    labels = [agreement.normalise_answer(a) for a in item.independent_answers.values_list("answer", flat=True)]
    _, rows = agreement.count_table([labels])
    item.agreement = agreement.item_agreement(rows[0]) if rows else None
    if item.consensus != Item.Consensus.ADJUDICATED and len(labels) >= ANSWERS_NEEDED:
        majority = max(set(labels), key=labels.count)
        agreed = agreement.consensus_reached(labels, MIN_SHARE) and majority in _gold_labels(item)
        item.consensus = Item.Consensus.REACHED if agreed else Item.Consensus.FLAGGED
    item.save(update_fields=["agreement", "consensus"])


@transaction.atomic
def record_independent_answer(item_id: int, answerer, answer: str) -> IndependentAnswer:
    item = Item.objects.select_for_update().filter(pk=item_id).first()
    if item is None:
        raise NotFound("No such item.", field="item")
    if item.author_id == answerer.pk:
        raise Forbidden("Authors do not answer their own questions.", field="item")
    answer = (answer or "").strip()
    if not answer or len(answer) > 200:
        raise DomainError("Give a short answer (1 to 200 characters).", field="answer")
    if item.independent_answers.filter(answerer=answerer).exists():
        raise Conflict("You have already answered this item.", field="item")
    recorded = IndependentAnswer.objects.create(item=item, answerer=answerer, answer=answer)
    decide_consensus(item)
    return recorded


@transaction.atomic
def adjudicate_item(item_id: int, reviewer, expected_version, answers) -> Item:
    """A reviewer settles a flagged item's gold answer; it may then be released."""
    item = lock_item_for_review(item_id, reviewer, expected_version)
    if item.consensus != Item.Consensus.FLAGGED:
        raise DomainError("Only items flagged for lack of consensus are adjudicated.", field="item")
    answers = checked_item_answers(item, answers)
    item.consensus = Item.Consensus.ADJUDICATED
    item.save(update_fields=["consensus"])
    save_item_content(item, reviewer, item.question, answers, item.tags, note="adjudicated")
    return item


def agreement_report(benchmark: Benchmark) -> dict:
    """Percent agreement and Fleiss' kappa over the benchmark and per question type."""
    labels_by_item: dict[int, list[str]] = {}
    for item_id, answer in IndependentAnswer.objects.filter(item__benchmark=benchmark).values_list(
        "item_id", "answer"
    ):
        labels_by_item.setdefault(item_id, []).append(agreement.normalise_answer(answer))
    types_by_item = dict(Item.objects.filter(pk__in=labels_by_item).values_list("pk", "tags"))
    by_type: dict[str, list[list[str]]] = {}
    for item_id, labels in labels_by_item.items():
        for qtype in question_types_of(types_by_item[item_id]) or ["(untyped)"]:
            by_type.setdefault(qtype, []).append(labels)
    items = Item.objects.filter(benchmark=benchmark)
    return {
        "benchmark": agreement.agreement_summary(list(labels_by_item.values())),
        "by_question_type": {t: agreement.agreement_summary(v) for t, v in sorted(by_type.items())},
        "flagged": items.filter(consensus=Item.Consensus.FLAGGED).count(),
        "adjudicated": items.filter(consensus=Item.Consensus.ADJUDICATED).count(),
    }
