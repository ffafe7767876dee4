"""Refinement of raw changes: a reviewer edits (a new revision; the raw text is kept), approves
or rejects with criteria, and writes questions with answers on approved changes."""

from django.db import transaction
from django.db.models import F

from benchmarks.errors import Conflict, DomainError, Forbidden
from benchmarks.models import AnswerFormat, ContextChange, Item

from .models import ChangeRevision, ReviewDecision

HYPO3D_CRITERIA = {
    "needs_scene_and_change": "Answerable only by combining the scene and the change",
    "answer_affected": "The answer is affected by the change",
    "unambiguous": "Exactly one unambiguous answer",
    "not_common_sense": "Not answerable from common sense alone",
}
QUESTION_TYPES = ("Scale", "Direction", "Semantic")


def review_queue(reviewer):
    """Raw changes waiting for review, never the reviewer's own."""
    return (
        ContextChange.objects.filter(status=ContextChange.Status.SUBMITTED)
        .exclude(author=reviewer)
        .select_related("scene", "author")
        .order_by("created_at")
    )


def _locked_change(change_id: int, reviewer, expected_version) -> ContextChange:
    change = ContextChange.objects.select_for_update().filter(pk=change_id).first()
    if change is None:
        raise DomainError("No such change.", field="change")
    if change.author_id == reviewer.pk:
        raise Forbidden("Nobody reviews their own work.", field="change")
    try:
        expected = int(expected_version)
    except (TypeError, ValueError):
        raise DomainError("Send the version you edited (an integer).", field="version") from None
    if expected != change.version:
        raise Conflict(
            f"Someone saved this change after you opened it (your version {expected}, current {change.version}).",
            field="version",
            current={"version": change.version, "text": change.text, "status": change.status},
        )
    return change


def _bump(change: ContextChange, fields: list[str]) -> None:
    change.version = F("version") + 1
    change.save(update_fields=[*fields, "version", "updated_at"])
    change.refresh_from_db(fields=["version"])


@transaction.atomic
def refine_change(change_id: int, reviewer, text: str, expected_version) -> ContextChange:
    change = _locked_change(change_id, reviewer, expected_version)
    text = (text or "").strip()
    if len(text.split()) < 3:
        raise DomainError("The refined text is empty or too short to be a description.", field="text")
    if text == change.text:
        return change
    number = change.revisions.count() + 1
    ChangeRevision.objects.create(change=change, number=number, text=text, author=reviewer)
    change.refined_text = text
    _bump(change, ["refined_text"])
    return change


@transaction.atomic
def approve_change(change_id: int, reviewer, expected_version) -> ContextChange:
    change = _locked_change(change_id, reviewer, expected_version)
    change.move_to(ContextChange.Status.APPROVED)
    ReviewDecision.objects.create(change=change, reviewer=reviewer, action=ReviewDecision.Action.APPROVE)
    _bump(change, ["status"])
    return change


@transaction.atomic
def reject_change(change_id: int, reviewer, expected_version, criteria, note: str = "") -> ContextChange:
    change = _locked_change(change_id, reviewer, expected_version)
    criteria = list(criteria or [])
    unknown = [c for c in criteria if c not in HYPO3D_CRITERIA]
    if not criteria or unknown:
        raise DomainError(
            f"Pick one or more criteria from: {', '.join(HYPO3D_CRITERIA)}.", field="criteria"
        )
    change.move_to(ContextChange.Status.REJECTED)
    ReviewDecision.objects.create(
        change=change, reviewer=reviewer, action=ReviewDecision.Action.REJECT, criteria=criteria, note=note
    )
    _bump(change, ["status"])
    return change


@transaction.atomic
def author_question(change_id: int, reviewer, question: str, answer: str, question_types) -> Item:
    """A reviewer's question on an approved change, with its gold answer (approved on creation)."""
    change = ContextChange.objects.select_related("scene__benchmark").filter(pk=change_id).first()
    if change is None:
        raise DomainError("No such change.", field="change")
    if change.status != ContextChange.Status.APPROVED:
        raise DomainError("Questions can only be written on approved changes.", field="change")
    question = (question or "").strip()
    answer = (answer or "").strip()
    if len(question.split()) < 4:
        raise DomainError("Write the question as a full sentence (at least 4 words).", field="question")
    if not answer:
        raise DomainError("Give the answer (a short phrase).", field="answer")
    if len(answer.split()) > 10:
        raise DomainError("Answers are short phrases (at most 10 words).", field="answer")
    if isinstance(question_types, str):
        question_types = [question_types]
    question_types = [t for t in (question_types or []) if t]
    if not question_types or any(t not in QUESTION_TYPES for t in question_types):
        raise DomainError(f"Choose the question type(s) from {', '.join(QUESTION_TYPES)}.", field="question_type")
    item = Item(
        benchmark=change.scene.benchmark,
        scene=change.scene,
        change=change,
        question=question,
        answer_format=AnswerFormat.OPEN,
        answers=[answer],
        tags={"change_type": change.change_type, "question_type": question_types},
        provenance={"source": "reviewer", "change": change.pk},
        author=reviewer,
    )
    item.move_to(Item.Status.APPROVED)
    item.save()
    return item


def reviewers_of(change_ids) -> set[int]:
    """User ids who revised or decided on any of these changes (for the contamination rule)."""
    decided = ReviewDecision.objects.filter(change_id__in=change_ids, reviewer__isnull=False)
    revised = ChangeRevision.objects.filter(change_id__in=change_ids, author__isnull=False)
    return set(decided.values_list("reviewer_id", flat=True)) | set(revised.values_list("author_id", flat=True))
