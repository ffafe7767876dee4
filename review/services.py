"""Refinement of raw changes and items: a reviewer edits (a new revision; the raw text is kept),
approves or rejects with criteria (rejected changes go back to their author), and writes questions
with answers on approved changes. Every item and change keeps its full history."""

import difflib

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation import services as annotation_services
from benchmarks.counterfactual import checked_counterfactual, with_effect
from benchmarks.models import AnswerFormat, ContextChange, Item
from benchmarks.protocols import FLIP_DECISIONS
from benchmarks.services import question_types_of
from core.errors import Conflict, DomainError, Forbidden
from core.models import Job
from core.sql import locked
from scenes import dispatch as scene_dispatch
from scoring.engine import get_family

from . import dedup, families
from .dedup import texts_arrived
from .models import ChangeRevision, ItemDecision, ItemRevision, ReviewDecision

# Reviewers write questions on changes and judge them as Hypo3D did: its question criteria (a rejected
# item names the ones it fails) and question types are facts of scoring's Hypo3D family record.
# Each family's own (review/families.py): its criteria, and question types only where it has them.
QUESTION_CRITERIA = get_family("hypo3d").question_criteria
QUESTION_TYPES = get_family("hypo3d").question_types
ALL_QUESTION_CRITERIA = families.all_criteria()
# What a context change must meet; a rejected change goes back to its author with the ones it fails.
CHANGE_CRITERIA = {
    "unambiguous": "Names each object so that only one can be meant",
    "in_scene": "Refers only to objects that are in the scene",
    "one_change": "Describes exactly one change, of the campaign's type",
    "plausible": "Physically possible in this room (the object fits where it goes)",
    "clear": "Clear and complete: says what changes and where from and to",
}


def review_queue(reviewer, campaign_id=None):
    """Raw changes waiting for review, never the reviewer's own; optionally one campaign's."""
    queue = (
        ContextChange.objects.filter(status=ContextChange.Status.SUBMITTED)
        .exclude(author=reviewer)
        .select_related("scene__benchmark", "author")
        .order_by("created_at")
    )
    if campaign_id not in (None, ""):
        try:
            queue = queue.filter(provenance__campaign=int(campaign_id))
        except (TypeError, ValueError):
            raise DomainError("The campaign is a number.", field="campaign") from None
    return queue


def locked_change(change_id: int, reviewer, expected_version) -> ContextChange:
    # Not core.sql.locked: a missing change has always answered 400 here, not 404.
    change = ContextChange.objects.select_for_update().filter(pk=change_id).first()
    if change is None:
        raise DomainError("No such change.", field="change")
    if change.author_id == reviewer.pk:
        raise Forbidden("Nobody reviews their own work.", field="change")
    _check_version(change, expected_version, {"text": change.text, "status": change.status})
    return change


def bump(subject, fields: list[str]) -> None:
    """Save `fields` of a change or an item with its version one up (the optimistic lock's count); a
    field that stamps itself on save (a change's updated_at) is saved with them."""
    subject.version = F("version") + 1
    stamps = [f.name for f in subject._meta.concrete_fields if getattr(f, "auto_now", False)]
    subject.save(update_fields=[*fields, "version", *stamps])
    subject.refresh_from_db(fields=["version"])


def _decide(subject, reviewer, status: str, **decision) -> None:
    """Move a locked change or item to `status`, record the decision among its `decisions` and bump it."""
    subject.move_to(status)
    subject.decisions.create(reviewer=reviewer, **decision)
    bump(subject, ["status"])


MAX_NOTE_CHARS = 2000  # a reviewer's note is read beside the text in the author's list of rejections


def _reject(subject, reviewer, criteria, allowed: dict, note: str):
    """Reject a locked change or item for the criteria (keys of `allowed`) it fails."""
    criteria = _checked_criteria(criteria, allowed)
    note = (note or "").strip()
    if len(note) > MAX_NOTE_CHARS:
        raise DomainError(f"A note has at most {MAX_NOTE_CHARS} characters; this one has {len(note):,}.",
                          field="note")
    _decide(subject, reviewer, type(subject).Status.REJECTED, action=subject.decisions.model.Action.REJECT,
            criteria=criteria, note=note)
    return subject


@transaction.atomic
def refine_change(change_id: int, reviewer, text: str, expected_version) -> ContextChange:
    change = locked_change(change_id, reviewer, expected_version)
    text = (text or "").strip()
    if len(text.split()) < 3:
        raise DomainError("The refined text is empty or too short to be a description.", field="text")
    if text == change.text:
        return change
    annotation_services.check_text_against_edit(change, text)  # a change with an edit: the words still fit it
    number = change.revisions.count() + 1
    ChangeRevision.objects.create(change=change, number=number, text=text, author=reviewer)
    change.refined_text = text
    bump(change, ["refined_text"])
    texts_arrived(change_ids=[change.pk])  # embedded for near-duplicate search (review/dedup.py)
    return change


@transaction.atomic
def approve_change(change_id: int, reviewer, expected_version) -> ContextChange:
    change = locked_change(change_id, reviewer, expected_version)
    _decide(change, reviewer, ContextChange.Status.APPROVED, action=ReviewDecision.Action.APPROVE)
    if change.edit:  # the scene after the change (scenes/after_state.py), once this commits
        transaction.on_commit(lambda: scene_dispatch.send_after_state(change.pk, reviewer))
    return change


def _checked_criteria(criteria, allowed: dict) -> list[str]:
    criteria = list(criteria or [])
    unknown = [c for c in criteria if c not in allowed]
    if not criteria or unknown:
        # people read the criteria in words; an API client sends the keys, listed beside them
        raise DomainError(f"Pick one or more criteria from: {'; '.join(allowed.values())}.", field="criteria",
                          allowed_criteria=list(allowed))
    return criteria


@transaction.atomic
def reject_change(change_id: int, reviewer, expected_version, criteria, note: str = "") -> ContextChange:
    return _reject(locked_change(change_id, reviewer, expected_version), reviewer, criteria, CHANGE_CRITERIA, note)


def _checked_question(question: str) -> str:
    question = (question or "").strip()
    if len(question.split()) < 4:
        raise DomainError("Write the question as a full sentence (at least 4 words).", field="question")
    return question


def _checked_answers(answers, field: str = "answer") -> list[str]:
    if isinstance(answers, str):
        answers = [answers]
    answers = [a.strip() for a in (answers or []) if isinstance(a, str) and a.strip()]
    if not answers:
        raise DomainError("Give the answer (a short phrase).", field=field)
    if any(len(a.split()) > 10 for a in answers):
        raise DomainError("Answers are short phrases (at most 10 words).", field=field)
    return answers


def _checked_question_types(question_types, allowed=QUESTION_TYPES) -> list[str]:
    if isinstance(question_types, str):
        question_types = [question_types]
    question_types = [t for t in (question_types or []) if t]
    if not allowed:
        raise DomainError("This family's items have no question types to pick; their tags place them.",
                          field="question_type")
    if not question_types or any(t not in allowed for t in question_types):
        raise DomainError(f"Choose the question type(s) from {', '.join(allowed)}.", field="question_type")
    return question_types


@transaction.atomic
def author_question(change_id: int, reviewer, question: str, answer: str, question_types, unchanged_answer=None,
                    irrelevant_change=None) -> Item:
    """A reviewer's question on an approved change, with its gold answer (and, for Hypo3D Tables 3-4,
    the answer on the unchanged scene and whether the change is irrelevant to it). It waits as a draft
    for a second reviewer's approval (nobody approves their own work), unless the benchmark allows
    self-approval, where it is approved at once with the author's decision recorded."""
    # The change's row is locked so that the same question sent twice at once (a double click, two
    # tabs) is written once: the second finds the first and answers 409 with its id.
    change = (ContextChange.objects.select_for_update(no_key=True, of=("self",))
              .select_related("scene__benchmark").filter(pk=change_id).first())
    if change is None:
        raise DomainError("No such change.", field="change")
    if change.status != ContextChange.Status.APPROVED:
        raise DomainError("Questions can only be written on approved changes.", field="change")
    question = _checked_question(question)
    same = (Item.objects.filter(change=change, question__iexact=question).exclude(status=Item.Status.REJECTED)
            .values_list("pk", flat=True).first())
    if same is not None:
        raise Conflict(f"This change already has this question (item #{same}).", field="question", item=same)
    answers = _checked_answers((answer or "").strip())
    question_types = _checked_question_types(question_types)
    unchanged, effect = checked_counterfactual(answers, unchanged_answer, irrelevant_change)
    item = Item(
        benchmark=change.scene.benchmark,
        scene=change.scene,
        change=change,
        question=question,
        answer_format=AnswerFormat.OPEN,
        answers=answers,
        unchanged_answers=unchanged,
        tags=with_effect({"change_type": change.change_type, "question_type": question_types}, effect),
        provenance={"source": "reviewer", "change": change.pk},
        author=reviewer,
    )
    self_approved = change.scene.benchmark.allow_self_approval
    if self_approved:
        item.move_to(Item.Status.APPROVED)
    item.save()
    if self_approved:
        ItemDecision.objects.create(item=item, reviewer=reviewer, action=ItemDecision.Action.APPROVE,
                                    note="self-approved (the benchmark allows it)")
    texts_arrived(item_ids=[item.pk])
    return item


def awaiting_second_review(item: Item) -> bool:
    """A reviewer's own question that waits for another reviewer's approval."""
    return item.status == Item.Status.DRAFT and (item.provenance or {}).get("source") == "reviewer"


# --- Work routed back to its author ------------------------------------------------------------


def returned_work(author):
    """The author's rejected changes, each with the criteria and note of its latest rejection."""
    changes = ContextChange.objects.filter(author=author, status=ContextChange.Status.REJECTED).select_related("scene")
    returned = []
    for change in changes:
        decision = change.decisions.filter(action=ReviewDecision.Action.REJECT).order_by("-created_at").first()
        returned.append({
            "change": change,
            "criteria": [CHANGE_CRITERIA.get(c, QUESTION_CRITERIA.get(c, c))
                         for c in (decision.criteria if decision else [])],
            "note": decision.note if decision else "",
        })
    return returned


@transaction.atomic
def resubmit_change(change_id: int, author, text: str, expected_version) -> ContextChange:
    """The author revises a rejected change (a new revision) and sends it back to the queue."""
    change = locked(ContextChange, change_id, "change")
    if change.author_id != author.pk:
        raise Forbidden("Only the author can revise a returned change.", field="change")
    _check_version(change, expected_version, {"text": change.text, "status": change.status})
    text = (text or "").strip()
    if len(text.split()) < 3:
        raise DomainError("The revised text is empty or too short to be a description.", field="text")
    annotation_services.check_text_against_edit(change, text)
    change.move_to(ContextChange.Status.SUBMITTED)
    ChangeRevision.objects.create(change=change, number=change.revisions.count() + 1, text=text, author=author)
    change.refined_text = text
    bump(change, ["status", "refined_text"])
    texts_arrived(change_ids=[change.pk])
    return change


def _check_version(obj, expected_version, current: dict) -> None:
    try:
        expected = int(expected_version)
    except (TypeError, ValueError):
        raise DomainError("Send the version you edited (an integer).", field="version") from None
    if expected != obj.version:
        raise Conflict(
            f"Someone saved this after you opened it (your version {expected}, current {obj.version}).",
            field="version",
            current={"version": obj.version, **current},
        )


# --- Items: edit with optimistic locking, approve, reject --------------------------------------


def item_state(item: Item) -> dict:
    return {"question": item.question, "answers": item.answers, "tags": item.tags, "status": item.status}


def lock_item_for_review(item_id: int, reviewer, expected_version) -> Item:
    item = locked(Item, item_id, "item")
    if item.author_id == reviewer.pk:
        raise Forbidden("Nobody reviews their own work.", field="item")
    _check_version(item, expected_version, item_state(item))
    return item


def _record_item_revision(item: Item, author, note: str = "") -> ItemRevision:
    """Snapshot the item's current content; the first edit also keeps the original as revision 1."""
    if not item.revisions.exists():
        ItemRevision.objects.create(item=item, number=1, question=item.question, answers=item.answers,
                                    tags=item.tags, author=item.author, created_at=item.created_at, note="original")
    return ItemRevision(item=item, number=item.revisions.count() + 1, author=author, note=note)


def save_item_content(item: Item, author, question: str, answers: list, tags: dict, note: str = "") -> Item:
    """Store new content as a revision and bump the version; the caller holds the row lock."""
    if (question, answers, tags) == (item.question, item.answers, item.tags):
        return item
    revision = _record_item_revision(item, author, note)
    revision.question, revision.answers, revision.tags = question, answers, tags
    revision.save()
    item.question, item.answers, item.tags = question, answers, tags
    bump(item, ["question", "answers", "tags"])
    texts_arrived(item_ids=[item.pk])
    return item


def checked_item_answers(item: Item, answers) -> list[str]:
    answers = _checked_answers(answers, field="answers")
    if item.answer_format != AnswerFormat.OPEN:
        letters = [chr(ord("A") + i) for i in range(len(item.choices))]
        if any(a not in letters for a in answers):
            raise DomainError(f"Choice items take letters from {', '.join(letters)}.", field="answers")
        if item.answer_format == AnswerFormat.SINGLE and len(answers) != 1:
            raise DomainError("A single-choice item has exactly one correct letter.", field="answers")
    return answers


def _edited_choices(item: Item, choices, answers, tags: dict) -> tuple[list[str], dict, str]:
    """A choice item's choices and correct letters by the annotators' rules (annotation/kinds.py: 2-7
    distinct choices, 'Not sure' never correct), its format following how many are correct."""
    choices, answers, not_sure = annotation_services.checked_choices(choices, answers)
    tags = {key: value for key, value in tags.items() if key != "not_sure"}
    if not_sure:
        tags["not_sure"] = not_sure
    answer_format = AnswerFormat.MULTI if len(answers) > 1 else AnswerFormat.SINGLE
    if (item.choices, item.answer_format) == (choices, answer_format):
        return answers, tags, ""
    note = "choices: " + " | ".join(choices) if item.choices != choices else ""
    item.choices, item.answer_format = choices, answer_format
    bump(item, ["choices", "answer_format"])
    return answers, tags, note


def _edited_family_tags(item: Item, family_tags, tags: dict) -> dict:
    """The family's tags by the annotators' rules (annotation/family_tags.py); an item whose question
    type stands for a family tag follows it."""
    family = item.benchmark.family
    checked = annotation_services.family_tags(family, family_tags)
    tags = {**tags, **checked}
    if isinstance(family_tags, dict) and "flip" in family_tags:  # 3DSRBench's flip decision
        if family_tags["flip"] not in FLIP_DECISIONS:
            raise DomainError(f"The flip decision is one of {', '.join(FLIP_DECISIONS)}.", field="tags")
        tags["flip"] = family_tags["flip"]
    if "fine_question_type" not in tags and (derived := annotation_services.derived_question_type(family, tags)):
        tags["question_type"] = derived
    return tags


@transaction.atomic
def edit_item(item_id: int, reviewer, expected_version, question: str, answers, question_types=None,
              counterfactual: dict | None = None, choices=None, family_tags=None) -> Item:
    """A reviewer corrects an item's question, answers or question types (a new revision), and, when
    `counterfactual` is given ({unchanged_answers, irrelevant_change}), its answer on the unchanged
    scene and whether the change is irrelevant (Hypo3D Tables 3-4). On a choice item `choices` edits the
    choices and `family_tags` the family's tags, with the same rules as the annotators' form."""
    item = lock_item_for_review(item_id, reviewer, expected_version)
    question = _checked_question(question)
    tags, note = dict(item.tags), ""
    if choices is not None and item.answer_format != AnswerFormat.OPEN:
        answers, tags, note = _edited_choices(item, choices, answers, tags)
    answers = checked_item_answers(item, answers)
    if family_tags is not None:
        tags = _edited_family_tags(item, family_tags, tags)
    if question_types is not None:
        tags["question_type"] = _checked_question_types(question_types, families.question_types(item.benchmark.family))
    if counterfactual is not None:
        unchanged, effect = checked_counterfactual(answers, counterfactual.get("unchanged_answers"),
                                                   counterfactual.get("irrelevant_change"),
                                                   unchanged_field="unchanged_answers")
        tags = with_effect(tags, effect)
        if unchanged != item.unchanged_answers:
            item.unchanged_answers = unchanged
            bump(item, ["unchanged_answers"])
    return save_item_content(item, reviewer, question, answers, tags, note=note[:200])


def _answered(item: Item, reviewer, answers) -> None:
    """The answer a reviewer gives when approving (stored as a revision); an item still without one
    cannot be approved (model drafts in Hypo3D's shape come without answers)."""
    if answers:
        save_item_content(item, reviewer, item.question, checked_item_answers(item, answers), item.tags,
                          note="answered on approval")
    if not item.answers:
        raise DomainError("This item has no answer yet; give the answer to approve it.", field="answers")


@transaction.atomic
def approve_item(item_id: int, reviewer, expected_version, answers=None) -> Item:
    """Approve, giving the answer if the item has none (or correcting it)."""
    item = lock_item_for_review(item_id, reviewer, expected_version)
    _answered(item, reviewer, answers)
    _decide(item, reviewer, Item.Status.APPROVED, action=ItemDecision.Action.APPROVE)
    return item


@transaction.atomic
def reject_item(item_id: int, reviewer, expected_version, criteria, note: str = "") -> Item:
    item = lock_item_for_review(item_id, reviewer, expected_version)
    return _reject(item, reviewer, criteria, families.question_criteria(item.benchmark.family), note)


# --- Bulk filtering of model-drafted questions -------------------------------------------------


def filtering_queue(reviewer):
    """Draft questions (model-drafted or imported) waiting to be kept or dropped, never one's own."""
    return Item.objects.filter(status=Item.Status.DRAFT).exclude(author=reviewer).order_by("id")


@transaction.atomic
def filter_question(item_id: int, reviewer, action: str, expected_version, reason: str = "",
                    question: str | None = None, answers=None) -> Item:
    """Keep (optionally with an edited question, and with the answer if it has none) or drop with a
    reason."""
    item = lock_item_for_review(item_id, reviewer, expected_version)
    if item.status != Item.Status.DRAFT:
        raise DomainError("Only draft questions are filtered.", field="item")
    reason = (reason or "").strip()
    if action == ItemDecision.Action.KEEP:
        if question is not None and question.strip() != item.question:
            save_item_content(item, reviewer, _checked_question(question), item.answers, item.tags)
        _answered(item, reviewer, answers)
        status = Item.Status.APPROVED
    elif action == ItemDecision.Action.DROP:
        if not reason:
            raise DomainError("Say why the question is dropped.", field="reason")
        status = Item.Status.REJECTED
    else:
        raise DomainError("The action is 'keep' or 'drop'.", field="action")
    _decide(item, reviewer, status, action=action, note=reason)
    return item


def keep_rates(benchmark) -> dict[str, dict]:
    """Per question type: how many filtered questions were kept and dropped, and the keep rate."""
    decisions = ItemDecision.objects.filter(
        item__benchmark=benchmark, action__in=[ItemDecision.Action.KEEP, ItemDecision.Action.DROP]
    ).values_list("action", "item__tags")
    rates: dict[str, dict] = {}
    for action, tags in decisions:
        for qtype in question_types_of(tags) or ["(untyped)"]:
            row = rates.setdefault(qtype, {"kept": 0, "dropped": 0})
            row["kept" if action == ItemDecision.Action.KEEP else "dropped"] += 1
    for row in rates.values():
        row["keep_rate"] = round(row["kept"] / (row["kept"] + row["dropped"]), 4)
    return dict(sorted(rates.items()))


# --- What construction's pipeline stages ask of review (construction/; review does not import it) -----


@transaction.atomic
def stage_verdict(item_id: int, expected_version: int, drop: bool, note: str, criteria=()) -> Item | None:
    """A pipeline stage's keep or drop of an item (construction/stages/), recorded as a filtering decision
    without a reviewer; a drop rejects the item, which takes it out of runs and releases. None when
    the item was edited or rejected since the stage read it: the stage judges it again next time."""
    item = Item.objects.select_for_update().filter(pk=item_id, version=expected_version).first()
    if item is None or item.status == Item.Status.REJECTED:
        return None
    if drop:
        item.move_to(Item.Status.REJECTED)
        bump(item, ["status"])
    action = ItemDecision.Action.DROP if drop else ItemDecision.Action.KEEP
    ItemDecision.objects.create(item=item, action=action, criteria=list(criteria), note=note)
    return item


def dedup_threshold(threshold) -> float:
    """A near-duplicate search's threshold, checked (DomainError naming `threshold`)."""
    return dedup.checked_threshold(threshold)


def search_duplicates(benchmark, user, threshold: float, progress) -> dict:
    """A near-duplicate search run here and now (the filter_duplicates stage, itself a job) reporting
    through `progress` and its own job: what it found; DomainError with the reason when its job failed.
    When the stage stops (cancelled) or breaks, the run's job fails with the reason and the error goes on."""
    run = dedup.run_dedup(dedup.new_dedup_run(benchmark, user, threshold).pk, progress)
    if run.job.status != Job.Status.DONE:
        raise DomainError(run.job.message, field="dedup")
    return dedup.run_report(run)


def word_diff(before: str, after: str) -> str:
    """A word-level diff: removed words as [-...-], added words as {+...+}."""
    old, new = (before or "").split(), (after or "").split()
    parts = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append(" ".join(old[i1:i2]))
            continue
        if i2 > i1:
            parts.append("[-" + " ".join(old[i1:i2]) + "-]")
        if j2 > j1:
            parts.append("{+" + " ".join(new[j1:j2]) + "+}")
    return " ".join(parts)


def _user(user) -> str | None:
    return user.username if user else None


def change_history(change: ContextChange) -> list[dict]:
    """The raw text, every revision (with a diff against the text before it) and every decision."""
    entries = [{"kind": "raw", "number": 0, "text": change.raw_text, "author": _user(change.author),
                "at": change.created_at, "diff": ""}]
    previous = change.raw_text
    by_model = {p.revision_id: f"model: {p.model.name if p.model else 'deleted'}"
                for p in change.polishes.exclude(revision=None).select_related("model")}
    for revision in change.revisions.select_related("author"):
        entries.append({"kind": "revision", "number": revision.number, "text": revision.text,
                        "author": _user(revision.author) or by_model.get(revision.pk), "at": revision.created_at,
                        "diff": word_diff(previous, revision.text)})
        previous = revision.text
    for decision in change.decisions.select_related("reviewer"):
        entries.append({"kind": "decision", "action": decision.action, "criteria": decision.criteria,
                        "note": decision.note, "author": _user(decision.reviewer), "at": decision.created_at})
    return sorted(entries, key=lambda e: e["at"])


def item_history(item: Item) -> list[dict]:
    """Every revision of the item (question diff, answers and tags before/after) and every decision."""
    entries, previous = [], None
    for revision in item.revisions.select_related("author"):
        entry = {"kind": "revision", "number": revision.number, "question": revision.question,
                 "answers": revision.answers, "tags": revision.tags, "note": revision.note,
                 "author": _user(revision.author), "at": revision.created_at, "diff": ""}
        if previous is not None:
            entry["diff"] = word_diff(previous.question, revision.question)
            entry["answers_before"] = previous.answers
            entry["tags_before"] = previous.tags
        entries.append(entry)
        previous = revision
    if not entries:
        entries.append({"kind": "revision", "number": 1, "question": item.question, "answers": item.answers,
                        "tags": item.tags, "note": "original", "author": _user(item.author),
                        "at": item.created_at, "diff": ""})
    for decision in item.decisions.select_related("reviewer"):
        entries.append({"kind": "decision", "action": decision.action, "criteria": decision.criteria,
                        "note": decision.note, "author": _user(decision.reviewer), "at": decision.created_at})
    return sorted(entries, key=lambda e: e["at"])


# --- Items sent back for review from the item analysis --------------------------------------

REREVIEW_FLAGS = ("all_right", "none_right", "humans_over_models", "models_over_humans")


@transaction.atomic
def send_to_rereview(item_id: int, reviewer, flags, note: str = "") -> Item:
    """An approved item the item analysis flags goes back to the draft queue (`filtering_queue`), out of
    runs, studies' new samples and releases until a reviewer keeps or drops it again; why is kept in
    its provenance (`rereview`: the flags, the note, who and when)."""
    item = locked(Item, item_id, "item")
    flags = [flags] if isinstance(flags, str) else list(flags or [])
    unknown = [flag for flag in flags if flag not in REREVIEW_FLAGS]
    if not flags or unknown:
        raise DomainError(f"Name the flags that call for review: {', '.join(REREVIEW_FLAGS)}.", field="flags")
    if item.status != Item.Status.APPROVED:
        raise DomainError("Only an approved item is sent back for review (a draft already waits there).",
                          field="item")
    item.move_to(Item.Status.DRAFT)
    requests = list((item.provenance or {}).get("rereview", []))
    requests.append({"flags": flags, "note": (note or "").strip()[:2000], "by": _user(reviewer),
                     "at": timezone.now().isoformat()})
    item.provenance = {**(item.provenance or {}), "rereview": requests}
    bump(item, ["status", "provenance"])
    return item
