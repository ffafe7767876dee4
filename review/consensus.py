"""Consensus: N people answer each item independently (reviewers here, and crowd workers of answer-only
campaigns in annotation); items on which they do not agree (or agree on something other than the gold
answer) are flagged and stay out of releases until a reviewer adjudicates them. Agreement (Fleiss'
kappa) is reported per question type and per benchmark over all of them. Deciding is idempotent: it
reads every answer again, so deciding twice gives the same result."""

from collections import Counter

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation import selectors as annotation_selectors
from benchmarks.models import Benchmark, Item
from benchmarks.services import question_types_of
from core.errors import Conflict, DomainError, Forbidden
from core.sql import locked

from . import agreement
from .models import IndependentAnswer
from .services import checked_item_answers, lock_item_for_review, save_item_content

ANSWERS_NEEDED = 3  # independent answers before consensus is decided
MIN_SHARE = 2 / 3  # the majority answer's share needed for consensus


def answers_by_person(item_ids) -> dict[tuple[int, int], object]:
    """{(item id, person id): answer}: reviewers' and answer-only campaigns' independent answers (a
    reviewer who also answered in a campaign counts once, by the reviewer's answer)."""
    by_person: dict[tuple[int, int], object] = {}
    for row in annotation_selectors.crowd_answers(item_ids):
        by_person[(row.item_id, row.worker_id)] = row.answer
    for item_id, answerer_id, answer in IndependentAnswer.objects.filter(item_id__in=item_ids).order_by(
        "item_id", "pk"
    ).values_list("item_id", "answerer_id", "answer"):
        by_person[(item_id, answerer_id)] = answer
    return by_person


def grouped_by_item(by_person: dict[tuple[int, int], object]) -> dict[int, list]:
    answers: dict[int, list] = {}
    for (item_id, _), answer in sorted(by_person.items(), key=lambda entry: entry[0]):
        answers.setdefault(item_id, []).append(answer)
    return answers


def answers_by_item(item_ids) -> dict[int, list]:
    """Each item's independent answers, one per person (`answers_by_person`)."""
    return grouped_by_item(answers_by_person(item_ids))


def agreement_by_answerer(items, by_person: dict[tuple[int, int], object]) -> list[dict]:
    """Each answerer's agreement with the others' consensus on the items they answered with others."""
    choice = {item.pk: bool(item.choices) for item in items}
    labels: dict[int, dict[int, str]] = {}
    for (item_id, person), answer in by_person.items():
        if item_id in choice:
            labels.setdefault(item_id, {})[person] = agreement.answer_label(answer, choice[item_id])
    found = agreement.consensus_agreement(list(labels.values()))
    names = dict(get_user_model().objects.filter(pk__in=list(found)).values_list("pk", "username"))
    return [{"answerer": names.get(person, str(person)), **summary} for person, summary in found.items()]


def answer_overlap(by_person: dict[tuple[int, int], object]) -> dict:
    """How far the independent answers overlap, for the agreement page to say what it still needs: agreement
    is measured only on items that two or more people answered."""
    per_item = Counter(item_id for item_id, _ in by_person)
    return {"n_answers": len(by_person), "n_answerers": len({person for _, person in by_person}),
            "n_items_answered": len(per_item), "n_items_overlapping": sum(n >= 2 for n in per_item.values()),
            "answers_needed": ANSWERS_NEEDED}


def labels_of(item: Item, answers: list) -> list[str]:
    return [agreement.answer_label(a, bool(item.choices)) for a in answers]


def _gold_labels(item: Item) -> set[str]:
    if item.choices:
        return {agreement.answer_label(item.answers, True)}
    return {agreement.answer_label(a, False) for a in item.answers}


def _decide(item: Item, answers: list) -> None:
    """Set the item's agreement and, once enough answers are in, its consensus (not yet saved)."""
    labels = labels_of(item, answers)
    _, rows = agreement.count_table([labels])
    item.agreement = agreement.item_agreement(rows[0]) if rows else None
    if item.consensus != Item.Consensus.ADJUDICATED and len(labels) >= ANSWERS_NEEDED:
        majority = max(sorted(set(labels)), key=labels.count)
        agreed = agreement.consensus_reached(labels, MIN_SHARE) and majority in _gold_labels(item)
        item.consensus = Item.Consensus.REACHED if agreed else Item.Consensus.FLAGGED


def decide_consensus(item: Item) -> None:
    """Recompute the item's agreement and, once enough answers are in, its consensus."""
    _decide(item, answers_by_item([item.pk]).get(item.pk, []))
    item.save(update_fields=["agreement", "consensus"])


@transaction.atomic
def crowd_answer_arrived(item_id: int) -> None:
    """An answer-only campaign's answer arrived (annotation.signals.crowd_answered): decide again,
    the item locked so that answers submitted at once are all counted by the last to decide."""
    item = Item.objects.select_for_update().filter(pk=item_id).first()
    if item is not None:
        decide_consensus(item)


@transaction.atomic
def refresh_consensus(benchmark: Benchmark) -> dict[str, int]:
    """Decide again every answered item of the benchmark (answers collected before a rule changed);
    returns the items per consensus."""
    items = list(Item.objects.select_for_update().filter(benchmark=benchmark).order_by("pk"))
    answers = answers_by_item(Item.objects.filter(benchmark=benchmark).values("pk"))
    answered = [i for i in items if i.pk in answers]
    for item in answered:
        _decide(item, answers[item.pk])
    Item.objects.bulk_update(answered, ["agreement", "consensus"])
    counts = dict.fromkeys(Item.Consensus.values, 0)
    for item in items:
        counts[item.consensus] += 1
    return counts


@transaction.atomic
def record_independent_answer(item_id: int, answerer, answer: str) -> IndependentAnswer:
    item = locked(Item, item_id, "item")
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
    """Percent agreement and Fleiss' kappa over the benchmark and per question type, reviewers and
    crowd workers of answer-only campaigns counted alike."""
    item_ids = Item.objects.filter(benchmark=benchmark).values("pk")
    by_person = answers_by_person(item_ids)
    answers = grouped_by_item(by_person)
    items = Item.objects.filter(pk__in=answers).only("pk", "tags", "choices")
    labels_by_item = {item.pk: labels_of(item, answers[item.pk]) for item in items}
    by_type: dict[str, list[list[str]]] = {}
    for item in items:
        for qtype in question_types_of(item.tags) or ["(untyped)"]:
            by_type.setdefault(qtype, []).append(labels_by_item[item.pk])
    benchmark_items = Item.objects.filter(benchmark=benchmark)
    return {
        "benchmark": agreement.agreement_summary(list(labels_by_item.values())),
        "by_question_type": {t: agreement.agreement_summary(v) for t, v in sorted(by_type.items())},
        "by_answerer": agreement_by_answerer(items, by_person),
        "overlap": answer_overlap(by_person),
        "flagged": benchmark_items.filter(consensus=Item.Consensus.FLAGGED).count(),
        "adjudicated": benchmark_items.filter(consensus=Item.Consensus.ADJUDICATED).count(),
    }


def release_agreement(items) -> dict:
    """The dataset card's agreement (`benchmarks.releases.life.release_card_extras`): over the release's items
    with two or more independent answers, percent agreement, Fleiss' kappa and Krippendorff's alpha with
    its 95 % bootstrap interval (ordinal too where every answer is a number)."""
    item_ids = items.order_by().values("pk")
    answers = grouped_by_item(answers_by_person(item_ids))
    chosen = Item.objects.filter(pk__in=answers).only("pk", "choices")
    return {"agreement": agreement.agreement_summary([labels_of(item, answers[item.pk]) for item in chosen])}
