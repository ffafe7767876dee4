"""The life of an assignment: a crowd worker, signed in from a platform link (crowd.services),
passes the campaign's quiz if it has one, leases a unit of work (a scene; an approved change to ask about; an item to
answer) within the per-worker cap, the per-unit quota and the blocklist, writes N context changes
that the server checks one by one into a server-side draft (or fills the form of another campaign
kind, see kinds.py), while autosave and heartbeat renew the lease, submits once, and leaves with a
completion code. Staff read progress and a payment report; a participant the platform says left
gives their open leases back. The description rules are in checks.py; model-drafted raw items in drafting.py."""

import json
from collections import Counter
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from benchmarks.models import Asset, AssetRole, ContextChange, Item, Side
from core.broadcast import send_to_group
from core.errors import Conflict, DomainError, Forbidden, NotFound
from core.sql import hold, locked
from core.validation import is_http_url
from crowd import services as crowd_services
from crowd.models import scope_key

from . import change_edits, families, screens, signals, sql
from .change_edits import after_state, check_text_against_edit, checked_edit, derive_answer, draft_questions  # noqa: F401 (review's)
from .checks import check_description
from .families import derived_question_type  # noqa: F401 (review edits tags by these rules)
from .family_tags import family_tags  # noqa: F401
from .kinds import SUBMITTERS, checked_choices, frame_text  # noqa: F401
from .models import Assignment, AssignmentDraft, Campaign, QuizAttempt

MAX_TEXT_CHARS = 2000
MAX_DRAFT_CHARS = 20000


def announce(campaign_id: int, what: str) -> None:
    """Tell open dashboards, once the transaction commits, that the campaign's progress changed."""

    transaction.on_commit(
        lambda: send_to_group(f"campaign-{campaign_id}", {"type": "campaign.changed", "what": what})
    )


# --- Qualification -------------------------------------------------------------------------------


def needs_quiz(campaign: Campaign, worker) -> bool:
    """A campaign with a quiz admits only workers who passed it."""
    return bool(campaign.quiz) and not campaign.quiz_attempts.filter(worker=worker, passed=True).exists()


@transaction.atomic
def take_quiz(campaign: Campaign, worker, answers) -> QuizAttempt:
    """Grade one attempt; every question must be answered right, within the campaign's attempts."""
    if not campaign.quiz:
        raise DomainError("This campaign has no quiz.", field="quiz")
    hold(f"quiz:{campaign.pk}:{worker.pk}")  # a worker's attempts queue: no two can take the last one
    attempts = campaign.quiz_attempts.filter(worker=worker)
    if attempts.filter(passed=True).exists():
        return attempts.filter(passed=True).first()
    if attempts.count() >= campaign.quiz_max_attempts:
        raise Forbidden(f"The quiz allows {campaign.quiz_max_attempts} attempts; none are left.", field="quiz")
    if not isinstance(answers, list) or len(answers) != len(campaign.quiz):
        raise DomainError(f"Answer all {len(campaign.quiz)} questions.", field="answers")
    try:
        answers = [int(a) for a in answers]
    except (TypeError, ValueError):
        raise DomainError("Each answer is the number of a choice.", field="answers") from None
    passed = all(a == q["answer"] for a, q in zip(answers, campaign.quiz, strict=True))
    return QuizAttempt.objects.create(campaign=campaign, worker=worker, answers=answers, passed=passed)


def quiz_attempts_left(campaign: Campaign, worker) -> int:
    return max(0, campaign.quiz_max_attempts - campaign.quiz_attempts.filter(worker=worker).count())


# --- Leasing -------------------------------------------------------------------------------------


def _lease_deadline(campaign: Campaign):
    return timezone.now() + timedelta(minutes=campaign.lease_minutes)


def expire_stale_leases(campaign: Campaign | None = None) -> int:
    """Leases past their expiry go back to the pool (their drafts stay with the worker)."""
    stale = Assignment.objects.filter(status=Assignment.Status.LEASED, lease_expires_at__lt=timezone.now())
    if campaign is not None:
        stale = stale.filter(campaign=campaign)
    return Assignment.move_all(stale, Assignment.Status.EXPIRED)


def open_lease(campaign: Campaign, worker) -> Assignment | None:
    """The worker's lease on this campaign that has not run out, if any: a read, for a page's GET."""
    return (campaign.assignments.filter(worker=worker, status=Assignment.Status.LEASED,
                                        lease_expires_at__gte=timezone.now()).order_by("-id").first())


def _unit_field(campaign: Campaign) -> str:
    """What one assignment is about: a scene, an approved change (questions) or an item (answers)."""
    return {Campaign.Kind.QUESTION_ANSWER: "change", Campaign.Kind.ANSWER_ONLY: "item"}.get(campaign.kind, "scene")


def _units_with_room(campaign: Campaign, worker):
    """Units under their quota that this worker has not already submitted (nor written themselves),
    least filled first."""
    field = _unit_field(campaign)
    pool = campaign.scenes.all()
    if field == "scene":
        units, assignments = pool, "assignments"
    else:
        model = ContextChange if field == "change" else Item
        units = model.objects.filter(scene__in=pool, status="approved").exclude(author=worker)
        assignments = "crowd_assignments"
    holding = Q(**{f"{assignments}__campaign": campaign,
                   f"{assignments}__status__in": [Assignment.Status.LEASED, Assignment.Status.SUBMITTED]})
    units = units.annotate(filled=Count(assignments, filter=holding)).exclude(
        pk__in=campaign.assignments.filter(worker=worker, status=Assignment.Status.SUBMITTED).values(field)
    )
    if campaign.assignments_per_scene is not None:
        units = units.filter(filled__lt=campaign.assignments_per_scene)
    return units.order_by("filled", "id")


def lease_assignment(campaign: Campaign, worker, new_account: bool = False) -> Assignment:
    """Resume the worker's open lease; else go back to the scene of their expired draft; else lease
    the least-filled scene with room. Refuses blocked workers, a reached cap, an unpassed quiz.
    Leasers lock only the unit they take (others skip it), so arrivals do not queue on the campaign.
    new_account: the account was made by the crowd link this request came in on, so it holds no
    assignment to read (a lease another browser took for it since is met by the one-open-lease
    constraint and resumed, as for any two leases at once)."""
    if not campaign.is_active:
        raise DomainError("This campaign is closed.", field="campaign")
    if crowd_services.is_blocked(worker, scope_key("campaign", campaign.pk)):
        raise Forbidden("You are not eligible for this campaign.", field="worker")
    if needs_quiz(campaign, worker):
        raise Forbidden("Pass the qualification quiz first.", field="quiz")
    expire_stale_leases(campaign)
    try:
        with transaction.atomic():
            return _lease(campaign, worker, new_account)
    except IntegrityError:
        # The same worker leased in another request at the same moment: resume that lease.
        return campaign.assignments.get(worker=worker, status=Assignment.Status.LEASED)


def _lease(campaign: Campaign, worker, new_account: bool = False) -> Assignment:
    mine = [] if new_account else list(
        campaign.assignments.filter(worker=worker).exclude(status=Assignment.Status.RELEASED)
        .select_related("draft").order_by("-id"))
    open_lease = next((a for a in mine if a.status == Assignment.Status.LEASED), None)
    if open_lease:
        return open_lease
    held = sum(a.status == Assignment.Status.SUBMITTED for a in mine)
    if campaign.max_assignments_per_worker is not None and held >= campaign.max_assignments_per_worker:
        raise Forbidden(
            f"You have done the most assignments this campaign allows per worker "
            f"({campaign.max_assignments_per_worker}).", field="worker",
        )
    field = _unit_field(campaign)
    drafted = [a for a in mine if a.status == Assignment.Status.EXPIRED and _has_work(a)]
    unit = _lock_unit_with_room(campaign, worker, [getattr(a, f"{field}_id") for a in drafted])
    if unit is None:
        raise DomainError(f"Every {field} of this campaign has all the assignments it needs, or you have done "
                          "them all.", field="campaign")
    unfinished = next((a for a in drafted if getattr(a, f"{field}_id") == unit.pk), None)
    assignment = Assignment.objects.create(
        campaign=campaign, worker=worker, lease_expires_at=_lease_deadline(campaign),
        **({"scene": unit} if field == "scene" else {field: unit, "scene_id": unit.scene_id}),
    )
    # The draft row exists from the start (the unfinished one's work carried over), so every autosave
    # takes save_draft's one-statement path.
    carried = unfinished.draft if unfinished else None
    AssignmentDraft.objects.create(assignment=assignment, **({
        "descriptions": carried.descriptions, "text": carried.text, "content": carried.content
    } if carried else {}))
    announce(campaign.pk, "leased")
    return assignment


def _has_work(assignment: Assignment) -> bool:
    draft = getattr(assignment, "draft", None)
    return draft is not None and bool(draft.text or draft.descriptions or draft.content)


def _lock_unit_with_room(campaign: Campaign, worker, drafted_ids: list[int], candidates: int = 8):
    """Row-lock a unit with room, skipping units other leasers hold locked right now: the unit of
    the worker's newest expired draft if it still has room, else the least filled. The quota is
    counted again under the lock, since the first count ran before it. None when no unit has room."""
    units = _units_with_room(campaign, worker)
    ranked = []
    if drafted_ids:
        with_room = set(units.filter(pk__in=drafted_ids).values_list("pk", flat=True))
        ranked = [pk for pk in drafted_ids if pk in with_room]
    ranked += [pk for pk in units.values_list("pk", flat=True)[:candidates] if pk not in ranked]
    if not ranked:
        return None
    # NO KEY: rows that only point at the unit (a submitted change's scene) need not wait for it.
    rows = units.model.objects.select_for_update(skip_locked=True, no_key=True).filter(pk__in=ranked)
    locked = {u.pk: u for u in rows}
    if not locked:  # all taken by leasers right now: wait for the first rather than refuse
        locked = {u.pk: u for u in units.model.objects.select_for_update(no_key=True).filter(pk=ranked[0])}
    quota, field = campaign.assignments_per_scene, _unit_field(campaign)
    for pk in ranked:
        unit = locked.get(pk)
        if unit is None:
            continue
        if quota is not None and campaign.assignments.filter(
            **{field: unit}, status__in=[Assignment.Status.LEASED, Assignment.Status.SUBMITTED]
        ).count() >= quota:
            continue
        return unit
    return None


def assignment_for_worker(assignment_id: int, worker) -> Assignment:
    """A worker reaches only their own assignments: 404 for none, 403 for someone else's."""
    assignment = Assignment.objects.select_related("campaign", "scene", "draft").filter(pk=assignment_id).first()
    if assignment is None:
        raise NotFound("No such assignment.", field="assignment")
    if assignment.worker_id != worker.pk:
        raise Forbidden("This assignment belongs to another worker.", field="assignment")
    return assignment


def _locked_assignment(assignment_id: int, worker) -> Assignment:
    """The worker's assignment, row-locked (another worker's is locked only as long as it takes to
    refuse it)."""
    assignment = (Assignment.objects.select_for_update(of=("self",)).select_related("campaign", "scene")
                  .filter(pk=assignment_id).first())
    if assignment is None:
        raise NotFound("No such assignment.", field="assignment")
    if assignment.worker_id != worker.pk:
        raise Forbidden("This assignment belongs to another worker.", field="assignment")
    assignment.worker = worker
    return assignment


def _locked_open_assignment(assignment_id: int, worker) -> Assignment:
    """The worker's assignment, row-locked, still leased and within its lease."""
    assignment = _locked_assignment(assignment_id, worker)
    if assignment.status == Assignment.Status.SUBMITTED:
        raise Conflict("This assignment was already submitted.", field="assignment",
                       completion_code=assignment.completion_code)
    if assignment.status != Assignment.Status.LEASED or assignment.lease_expires_at < timezone.now():
        raise Conflict("The lease on this assignment expired; open the link again to continue your draft.",
                       field="assignment")
    return assignment


def _renew(assignment: Assignment) -> None:
    assignment.lease_expires_at = _lease_deadline(assignment.campaign)
    assignment.save(update_fields=["lease_expires_at"])


@transaction.atomic
def heartbeat(assignment_id: int, worker) -> Assignment:
    """The open page says it is still there: the lease runs for another lease period."""
    assignment = _locked_open_assignment(assignment_id, worker)
    _renew(assignment)
    return assignment


@transaction.atomic
def release_assignment(assignment_id: int, worker) -> Assignment:
    """The worker gives the scene back to the pool. Their draft stays with the released assignment
    (the campaign's record of work begun and given back; it is never offered to them again), and the
    result says so."""
    assignment = _locked_open_assignment(assignment_id, worker)
    draft = AssignmentDraft.objects.filter(assignment=assignment).first()
    assignment.move_to(Assignment.Status.RELEASED)
    assignment.result = {"given_back": True, "draft_kept": bool(draft and (draft.text or draft.descriptions
                                                                               or draft.content))}
    assignment.save(update_fields=["status", "result"])
    announce(assignment.campaign_id, "released")
    return assignment


def return_url(assignment: Assignment) -> str | None:
    """Where a crowd worker who gave the work back goes: the campaign's return URL (with its return
    code), else on Prolific the platform's completion URL with the campaign's return code. None for
    workers who did not come from a platform, and for campaigns with neither."""
    campaign = assignment.campaign
    identity = crowd_services.identity_of(assignment.worker)
    if identity is None:
        return None
    if campaign.return_url:
        return campaign.return_url.replace("{code}", campaign.return_code)
    if campaign.return_code:
        return crowd_services.platform_completion_url(identity, campaign.return_code)
    return None


def task_of(assignment: Assignment) -> dict:
    """What the worker needs to do the assignment; gold answers of existing items never appear."""
    campaign = assignment.campaign
    kind = campaign.kind
    if kind == Campaign.Kind.CONTEXT_CHANGE:
        return {"change_type": campaign.change_type, "descriptions_needed": campaign.descriptions_per_assignment,
                "min_words": campaign.min_words}
    if kind == Campaign.Kind.WORLD_FRAME:
        objects = list(assignment.scene.scene_objects.order_by("instance_id"))
        counts = Counter(o.label for o in objects)
        return {"anchors": [{"instance_id": o.instance_id, "label": o.label} for o in objects if counts[o.label] == 1],
                "sides": list(Side.values), "template": frame_text("{label}", "{side}")}
    if kind == Campaign.Kind.ANSWER_ONLY:
        item = assignment.item
        return {"question": item.question, "choices": item.choices, "answer_format": item.answer_format,
                "change": item.change.text if item.change else ""}
    task = {"question_types": list(campaign.question_types)}
    if kind == Campaign.Kind.QUESTION_ANSWER:
        task |= {"change": assignment.change.text, "change_type": assignment.change.change_type}
    else:
        role = AssetRole.IMAGE if kind == Campaign.Kind.CHOICE_IMAGE else AssetRole.VIDEO
        assets = list(Asset.objects.filter(scene=assignment.scene, role=role).order_by("id"))
        task["media"] = [a.file.url for a in assets]
        task["videos"] = screens.paired_videos(assets) if kind == Campaign.Kind.CHOICE_VIDEO else None
    return task


# --- Drafts --------------------------------------------------------------------------------------


def draft_of(assignment: Assignment) -> AssignmentDraft:
    # Read with the assignment when it was selected with its draft (assignment_for_worker).
    return getattr(assignment, "draft", None) or AssignmentDraft(assignment=assignment)


def save_draft(assignment_id: int, worker, text: str = "", revision=None, content=None) -> AssignmentDraft:
    """Autosave what is being written (the description, or the form of the other kinds) and renew
    the lease. Kept even when the lease has lapsed, so the worker's return resumes it. A save based
    on an older revision than the stored one (another tab or device saved since) gets 409.
    The hot path (every few seconds per worker) is one UPDATE that checks ownership itself; the
    first save, and every refusal, take the locked path that says why."""
    text = text or ""
    if len(text) > MAX_TEXT_CHARS:
        raise DomainError(f"A description has at most {MAX_TEXT_CHARS} characters.", field="text")
    if content is not None and (not isinstance(content, dict) or len(json.dumps(content)) > MAX_DRAFT_CHARS):
        raise DomainError(f"The draft is a JSON object of at most {MAX_DRAFT_CHARS} characters.", field="content")
    draft = _update_own_draft(assignment_id, worker, text, revision, content)
    return draft if draft is not None else _save_draft_locked(assignment_id, worker, text, revision, content)


def _update_own_draft(assignment_id: int, worker, text: str, revision, content) -> AssignmentDraft | None:
    """The hot path: one statement that checks ownership itself (sql.update_own_draft). None when
    nothing matched, and on databases other than PostgreSQL."""
    now = timezone.now()
    saved = sql.update_own_draft(assignment_id, worker.pk, text, revision, content, now)
    if saved is None:
        return None
    return AssignmentDraft(id=saved.id, assignment_id=assignment_id, text=text, revision=saved.revision,
                           descriptions=saved.descriptions, content=saved.content, updated_at=now)


@transaction.atomic
def _save_draft_locked(assignment_id: int, worker, text: str, revision, content) -> AssignmentDraft:
    assignment = _locked_assignment(assignment_id, worker)
    if assignment.status == Assignment.Status.SUBMITTED:
        raise Conflict("This assignment was already submitted.", field="assignment",
                       completion_code=assignment.completion_code)
    draft, _ = AssignmentDraft.objects.select_for_update().get_or_create(assignment=assignment)
    if revision is not None and revision != draft.revision:
        raise Conflict(
            "This draft was saved from another tab or device; reload to continue from it.", field="revision",
            current={"revision": draft.revision, "text": draft.text, "descriptions": draft.descriptions,
                     "content": draft.content},
        )
    draft.text = text
    if content is not None:
        draft.content = content
    draft.revision += 1
    draft.save()
    if assignment.status == Assignment.Status.LEASED:
        _renew(assignment)
    return draft


def _earlier_texts(worker) -> list[str]:
    """The worker's own earlier descriptions, newest first (bounded: the check must stay cheap)."""
    submitted = ContextChange.objects.filter(author=worker).order_by("-id").values_list("raw_text", flat=True)
    return list(submitted[:300])


@transaction.atomic
def add_description(assignment_id: int, worker, text: str, edit=None):
    """Check one description (and its geometric edit, change_edits) against every rule and accept it into
    the draft. Returns (draft, warnings); a broken rule raises with the rule named, nothing written."""
    assignment = _locked_open_assignment(assignment_id, worker)
    if assignment.campaign.kind != Campaign.Kind.CONTEXT_CHANGE:
        raise DomainError("This campaign's assignments take no descriptions.", field="text")
    draft, _ = AssignmentDraft.objects.select_for_update().get_or_create(assignment=assignment)
    needed = assignment.campaign.descriptions_per_assignment
    if len(draft.descriptions) >= needed:
        raise DomainError(f"This assignment takes {needed} descriptions; submit it.", field="descriptions")
    text = (text or "").strip()
    result = check_description(
        assignment.scene, text, assignment.campaign.change_type, assignment.campaign.min_words,
        others=[d["text"] for d in draft.descriptions],
        earlier=_earlier_texts(worker),
    )
    change_edits.checked_edit(assignment.scene, text, assignment.campaign.change_type, edit)
    draft.descriptions = [*draft.descriptions, {"text": text, "warnings": result.warnings, **({"edit": edit} if edit else {})}]
    draft.text = ""
    draft.revision += 1
    draft.save()
    _renew(assignment)
    return draft, result.warnings


@transaction.atomic
def remove_description(assignment_id: int, worker, index: int) -> AssignmentDraft:
    """Take an accepted description out of the draft (to rewrite it); it becomes the text being written."""
    assignment = _locked_open_assignment(assignment_id, worker)
    draft, _ = AssignmentDraft.objects.select_for_update().get_or_create(assignment=assignment)
    if not 0 <= index < len(draft.descriptions):
        raise NotFound(f"There is no description {index + 1} in this draft.", field="index")
    removed = draft.descriptions[index]
    draft.descriptions = draft.descriptions[:index] + draft.descriptions[index + 1:]
    draft.text = removed["text"]
    draft.revision += 1
    draft.save()
    return draft


# --- Submission ----------------------------------------------------------------------------------

@transaction.atomic
def submit_assignment(assignment_id: int, worker, text: str = "", answer: dict | None = None, edit=None) -> Assignment:
    """Submit the work, checked in full: context changes from the draft's descriptions (plus `text`,
    the one being written), the other kinds from `answer` (or the autosaved form). A second submit
    is a 409 carrying the completion code; nothing is written twice."""
    assignment = _locked_open_assignment(assignment_id, worker)
    draft = draft_of(assignment)
    if assignment.campaign.kind == Campaign.Kind.CONTEXT_CHANGE:
        result = _create_changes(assignment, worker, draft, text, edit)
    else:
        answer = answer if answer is not None else draft.content
        if not isinstance(answer, dict):
            raise DomainError("The answer is a JSON object.", field="answer")
        result = SUBMITTERS[assignment.campaign.kind](assignment, worker, answer)
    assignment.move_to(Assignment.Status.SUBMITTED)
    assignment.submitted_at = timezone.now()
    assignment.completion_code = crowd_services.new_completion_code()
    assignment.result = result
    assignment.save(update_fields=["status", "submitted_at", "completion_code", "result"])
    AssignmentDraft.objects.filter(assignment=assignment).delete()
    announce(assignment.campaign_id, "submitted")
    # sent inside this transaction: what the receivers write commits with the submission (signals.py)
    signals.texts_submitted.send(Assignment, change_ids=result.get("changes", []),
                                 item_ids=result.get("items", []))
    if "crowd_answer" in result:
        signals.crowd_answered.send(Assignment, item_id=assignment.item_id)
    return assignment


def _create_changes(assignment: Assignment, worker, draft: AssignmentDraft, text: str, edit=None) -> dict:
    """Each description of the assignment (and its edit), all rules checked again, as a raw change."""
    texts, edits = [d["text"] for d in draft.descriptions], [d.get("edit") for d in draft.descriptions]
    text = (text or "").strip()
    if text:
        texts.append(text)
        edits.append(edit)
    campaign = assignment.campaign
    needed = campaign.descriptions_per_assignment
    if len(texts) != needed:
        raise DomainError(
            f"This assignment takes {needed} descriptions; you have {len(texts)}.",
            field="text" if len(texts) < needed else "descriptions",
        )
    earlier = _earlier_texts(worker)
    checked, stored = [], []
    for number, description in enumerate(texts, start=1):
        try:
            checked.append(check_description(
                assignment.scene, description, campaign.change_type, campaign.min_words,
                others=texts[:number - 1], earlier=earlier,
            ))
            stored.append(change_edits.checked_edit(assignment.scene, description, campaign.change_type, edits[number - 1]))
        except DomainError as exc:
            if needed == 1:
                raise
            raise DomainError(f"Description {number}: {exc.message}", field="descriptions") from None
    changes = ContextChange.objects.bulk_create([
        ContextChange(
            scene=assignment.scene,
            change_type=campaign.change_type,
            raw_text=description,
            author=worker,
            edit=edit,
            provenance={
                "source": "crowd",
                "campaign": campaign.pk,
                "assignment": assignment.pk,
                "named_objects": result.objects,
                "changed_object": result.changed_object,
                "warnings": result.warnings,
            },
        )
        for description, result, edit in zip(texts, checked, stored, strict=True)
    ])
    return {"changes": [change.pk for change in changes]}


def assignment_completion_url(assignment: Assignment) -> str | None:
    """The campaign's own return URL if it has one, else the platform's."""
    if not assignment.completion_code:
        return None
    if assignment.campaign.completion_url:
        return assignment.campaign.completion_url.replace("{code}", assignment.completion_code)
    return crowd_services.completion_url(assignment.worker, assignment.completion_code)


# --- Campaigns (staff) ---------------------------------------------------------------------------


@transaction.atomic
def create_campaign(benchmark, name: str, change_type: str, scenes, guidelines: str = "", min_words: int = 10,
                    lease_minutes: int = 30, descriptions_per_assignment: int = 1, **options) -> Campaign:
    """A context-change campaign on a pool of the benchmark's scenes. The default of one description
    per assignment keeps existing callers (the demo) as they are; the admin and API default to five."""
    options.setdefault("kind", families.default_kind(benchmark.family, change_type))
    change_type = families.checked_kind(benchmark.family, options["kind"], change_type)
    options.setdefault("question_types", families.family_question_types(benchmark.family))
    scenes = list(scenes)
    if not scenes or any(s.benchmark_id != benchmark.pk for s in scenes):
        raise DomainError("Pick one or more scenes of this benchmark.", field="scenes")
    if descriptions_per_assignment < 1:
        raise DomainError("An assignment takes at least one description.", field="descriptions_per_assignment")
    _check_quiz(options.get("quiz") or [])
    _check_urls(options)
    if not (name or "").strip():
        raise DomainError("Give the campaign a name.", field="name")
    campaign = Campaign.objects.create(
        benchmark=benchmark, name=name, change_type=change_type, guidelines=guidelines, min_words=min_words,
        lease_minutes=lease_minutes, descriptions_per_assignment=descriptions_per_assignment, **options,
    )
    campaign.scenes.set(scenes)
    return campaign


CAMPAIGN_FIELDS = (
    "name", "kind", "change_type", "guidelines", "min_words", "descriptions_per_assignment", "lease_minutes",
    "max_assignments_per_worker", "assignments_per_scene", "pay_cents", "pay_unit", "question_types", "quiz",
    "quiz_max_attempts", "completion_url", "return_code", "return_url", "is_active",
)


@transaction.atomic
def update_campaign(campaign_id: int, scenes=None, **fields) -> Campaign:
    """Staff edit a campaign's settings (CAMPAIGN_FIELDS) and its pool of scenes, checked as on creation."""
    campaign = locked(Campaign, campaign_id, "campaign")
    unknown = set(fields) - set(CAMPAIGN_FIELDS)
    if unknown:
        raise DomainError(f"Not a campaign setting: {', '.join(sorted(unknown))}.", field=sorted(unknown)[0])
    if "name" in fields and not (fields["name"] or "").strip():
        raise DomainError("Give the campaign a name.", field="name")
    stored = families.checked_kind(campaign.benchmark.family, fields.get("kind", campaign.kind),
                                   fields.get("change_type", campaign.change_type))
    if "kind" in fields or "change_type" in fields:
        fields["change_type"] = stored
    if fields.get("descriptions_per_assignment", 1) < 1:
        raise DomainError("An assignment takes at least one description.", field="descriptions_per_assignment")
    _check_quiz(fields.get("quiz") or [])
    _check_urls(fields)
    if scenes is not None:
        scenes = list(scenes)
        if not scenes or any(s.benchmark_id != campaign.benchmark_id for s in scenes):
            raise DomainError("Pick one or more scenes of this benchmark.", field="scenes")
    for field, value in fields.items():
        setattr(campaign, field, value.strip() if isinstance(value, str) else value)
    campaign.save(update_fields=list(fields) or None)
    if scenes is not None:
        campaign.scenes.set(scenes)
    announce(campaign.pk, "settings")
    return campaign


def _check_urls(fields: dict) -> None:
    for field in ("completion_url", "return_url"):
        if fields.get(field) and not is_http_url(fields[field]):
            raise DomainError("Enter an http:// or https:// URL.", field=field)


def _check_quiz(quiz) -> None:
    for number, question in enumerate(quiz, start=1):
        choices = question.get("choices") if isinstance(question, dict) else None
        if not isinstance(choices, list) or len(choices) < 2 or not question.get("question"):
            raise DomainError(f"Quiz question {number} needs a question and two or more choices.", field="quiz")
        if not isinstance(question.get("answer"), int) or not 0 <= question["answer"] < len(choices):
            raise DomainError(f"Quiz question {number}'s answer must be the index of one choice.", field="quiz")
