"""A change's geometry in review: the reviewer replaces a change's edit (checked against its text as a
crowd write is), sees for each of the change's questions the answer the geometry after the change derives
beside the written one (agreeing when scoring/hypo3d.py's normalisation makes them equal), and drafts
questions whose answers the geometry decides, saved only when asked (then as any reviewer's question).
The geometry itself is annotation's (annotation/change_edits.py, reached through its services)."""

from django.db import transaction

from annotation import services as annotation_services
from benchmarks.models import ContextChange
from core.errors import DomainError, NotFound
from scenes import dispatch as scene_dispatch
from scoring.hypo3d import normalize_answer

from . import services


def _change(change_id: int) -> ContextChange:
    change = ContextChange.objects.select_related("scene").filter(pk=change_id).first()
    if change is None:
        raise NotFound("No such change.", field="change")
    return change


@transaction.atomic
def edit_change_geometry(change_id: int, reviewer, edit, expected_version) -> ContextChange:
    """Replace (or, with None, clear) the change's edit; a stale version is a 409, a bad edit a 400 on `edit`."""
    change = services.locked_change(change_id, reviewer, expected_version)
    change.edit = annotation_services.checked_edit(change.scene, change.text, change.change_type, edit)
    services.bump(change, ["edit"])
    if change.status == ContextChange.Status.APPROVED and change.edit:  # its after-state follows the new edit
        transaction.on_commit(lambda: scene_dispatch.send_after_state(change.pk, reviewer))
    return change


def agrees(derived: str | None, written: list[str]) -> bool | None:
    """The derived answer equals one of the written ones, both normalised as Hypo3D scores them; None when
    the geometry derives no answer."""
    if derived is None:
        return None
    return normalize_answer(derived) in {normalize_answer(str(a)) for a in written}


def derived_answers(change: ContextChange | int) -> list[dict]:
    """For each of the change's questions (its items, by id): the written answers, the derived answer (None
    where no template fits) and whether they agree."""
    change = _change(change) if isinstance(change, int) else change
    state = annotation_services.after_state(change)
    rows = []
    for item in change.items.exclude(status="rejected").order_by("id"):
        derived = annotation_services.derive_answer(change, item.question, state)
        rows.append({"item": item.pk, "question": item.question, "answers": list(item.answers),
                     "derived": derived, "agrees": agrees(derived, item.answers)})
    return rows


@transaction.atomic
def generate_questions(change: ContextChange | int, reviewer=None, save: bool = False, limit: int = 8) -> list[dict]:
    """Questions for the change whose answers the geometry after it decides, each {question, answer,
    question_type, item}; `item` is None unless `save`, which writes each as the reviewer's question (an
    approved change only; one it already has is left as it is; all or none are written)."""
    change = _change(change) if isinstance(change, int) else change
    drafts = [{**d, "item": None} for d in annotation_services.draft_questions(change, limit)]
    if not save:
        return drafts
    if reviewer is None:
        raise DomainError("Saving drafted questions needs the reviewer who writes them.", field="save")
    existing = {q.lower(): pk for pk, q in change.items.exclude(status="rejected").values_list("pk", "question")}
    for draft in drafts:
        draft["item"] = existing.get(draft["question"].lower()) or services.author_question(
            change.pk, reviewer, draft["question"], draft["answer"], draft["question_type"]).pk
    return drafts
