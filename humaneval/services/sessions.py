"""A participant's timed session, start to finish: entry (from a crowd link or an invitation), the
plan drawn for them, consent (the session's clock starts then), the item on screen (its own clock
starts when it is first shown), answers timed by the server's clock, going back where the study
allows, and the finish with its completion code. The hot reads are humaneval.sql."""

import random
import re
from dataclasses import dataclass
from datetime import timedelta
from string import ascii_uppercase as LETTERS

from django.db import transaction
from django.utils import timezone

from benchmarks import option_text, protocols
from benchmarks.models import AssetRole, Item
from benchmarks.protocols import Protocol, Variant
from core.errors import Conflict, DomainError, Forbidden, NotFound
from core.validation import whole_number
from crowd import services as crowd_services
from crowd.models import scope_key

from .. import sql
from ..models import EvalSession, ItemRole, Response, SessionItem, Study, StudyItem
from ..sql import ShownItem
from . import invitations
from .design import is_contaminated

NOT_SURE = "Not sure"
MAX_ANSWER_CHARS = 500
# How long a participant may read the instructions before agreeing: until then the session holds its
# places (its provisional deadline is arrival + this + the session's time).
CONSENT_WINDOW = timedelta(minutes=30)


@dataclass(frozen=True)
class Current:
    """A session as its participant's page sees it now: the session (with its study and benchmark),
    the length of its plan, and the item on screen (None once the session is over)."""

    session: EvalSession
    n_items: int
    on_screen: ShownItem | None


@dataclass(frozen=True)
class Answered:
    """An answer stored (or an answered item gone back to): the session (with its study and
    benchmark), the length of its plan, the response and its plan entry."""

    session: EvalSession
    n_items: int
    response: Response
    entry: SessionItem


@dataclass(frozen=True)
class AnsweredThenNext:
    """answer_and_show_next's result: the answer stored and the item on screen after it (None when the
    session is over, or after a familiarisation item, whose feedback comes before the next clock)."""

    answered: Answered
    next_item: ShownItem | None


# --- the plan ------------------------------------------------------------------------------------


def study_variants(study: Study, item: Item, has_image: bool) -> list[Variant]:
    """The protocol variants a scored item may be shown in (benchmarks.protocols); no rotation of
    options its question spells otherwise than stored (benchmarks.option_text), as runs refuse them."""
    protocol = Protocol(circular=study.circular_variants, flip=study.flip_images)
    rotatable = len(item.choices) if option_text.reorderable(item.question, item.choices) else 1
    return protocols.variants(protocol, rotatable, protocols.flip_rule(item.tags), has_image)


def _variant_for(study: Study, item: Item, fill: int, has_image: bool) -> Variant:
    """Each new participant on an item gets its next variant, from a seeded start, so the variants
    are shown about equally often."""
    options = study_variants(study, item, has_image)
    start = random.Random(f"{study.sample_seed}:variant:{item.pk}").randrange(len(options))
    return options[(start + fill) % len(options)]


def _plan(study: Study, participant) -> list[tuple[Item, str, list[int], Variant]]:
    """Familiarisation first, then the least-filled scored items in a random order with the attention
    checks among them; each item with its role, its order of options and, for scored items, its
    protocol variant (rotated options replace the shuffle)."""
    # Reproducible per participant: the same study seed and participant give the same plan.
    rng = random.Random(f"{study.sample_seed}:participant:{participant.pk}")
    # (item id, role, position) rows in study order: no model instance for each of a large study's items
    entries = list(StudyItem.objects.filter(study=study).values_list("item_id", "role", "position"))
    # Places held or used: an abandoned session's unanswered items go back to the pool. Every starter
    # reads them under the study's lock.
    fills = sql.places_taken(study.pk)
    scored = [e for e in entries if e[1] == ItemRole.SCORED and fills[e[0]] < study.participants_per_item]
    if not scored:
        raise Forbidden("This study already has all the participants it needs.", field="study")
    tie_breaks = {item_id: rng.random() for item_id, _, _ in scored}
    scored.sort(key=lambda e: (fills[e[0]], tie_breaks[e[0]]))
    chosen = scored[: study.items_per_session or len(scored)]
    if study.shuffle_items:
        rng.shuffle(chosen)
    else:
        chosen.sort(key=lambda e: e[2])
    for entry in (e for e in entries if e[1] == ItemRole.ATTENTION):
        chosen.insert(rng.randint(0, len(chosen)), entry)
    plan = [e for e in entries if e[1] == ItemRole.FAMILIARISATION] + chosen
    # The plan's items only, and only what a plan reads of them
    items = Item.objects.only("question", "choices", "tags", "scene_id").in_bulk(
        [item_id for item_id, _, _ in plan])
    with_images = (
        set(study.benchmark.scenes.filter(assets__role=AssetRole.IMAGE).values_list("pk", flat=True))
        if study.flip_images else set()
    )
    planned = []
    for item_id, role, _ in plan:
        item = items[item_id]
        variant = (
            _variant_for(study, item, fills[item_id], item.scene_id in with_images)
            if role == ItemRole.SCORED else protocols.VANILLA
        )
        order = list(range(len(item.choices)))
        if study.circular_variants and role == ItemRole.SCORED:
            order = variant.order(len(order))
        elif study.shuffle_choices and option_text.reorderable(item.question, item.choices):
            rng.shuffle(order)  # the question's own options are rewritten in this order, or never shuffled
        planned.append((item, role, order, variant))
    return planned


# --- entry and consent ---------------------------------------------------------------------------


@transaction.atomic
def start_session(study: Study, participant, new_account: bool = False) -> EvalSession:
    """Start, or resume, the participant's one session of this study. new_account: the participant's
    account was created by the link they came in on, so they have written and reviewed nothing."""
    if crowd_services.is_blocked(participant, scope_key("study", study.pk)):
        raise Forbidden("You are not eligible for this study.", field="participant")
    # Read before the lock (who wrote or reviewed the items does not depend on other starters), so
    # starters queue on the study row only for the places.
    contaminated = not new_account and is_contaminated(study, participant)
    # One starter at a time per study, so two newcomers never both take the last free places.
    study = Study.objects.select_for_update().get(pk=study.pk)
    existing = None if new_account else EvalSession.objects.filter(study=study, participant=participant).first()
    if existing:
        if existing.status == EvalSession.Status.FINISHED:
            raise Forbidden("You have already taken this study.", field="study")
        return existing
    if not study.is_open:
        raise DomainError("This study is closed.", field="study")
    if contaminated:
        raise Forbidden(
            "You helped write or review items in this study (as an author, reviewer or consensus "
            "answerer), so you cannot be evaluated on them.",
            field="study",
        )
    plan = _plan(study, participant)
    now = timezone.now()
    # The clock starts at consent (consent_to_session); until then the session holds its places for
    # the reading time and a whole session after it.
    session = EvalSession.objects.create(
        study=study,
        participant=participant,
        started_at=now,
        deadline=now + CONSENT_WINDOW + timedelta(seconds=study.seconds_per_session),
    )
    SessionItem.objects.bulk_create(
        SessionItem(session=session, item=item, position=position, role=role, choice_order=order,
                    variant=variant.name)
        for position, (item, role, order, variant) in enumerate(plan)
    )
    return session


def study_for_entry(study_id) -> Study:
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        raise NotFound("No such study.", field="study")
    return study


def entry_ids(study_id, params) -> tuple[Study, dict]:
    """The study and its crowd link's ids under the study's entry rule (crowd.services.entry_rule: the
    platform it recruits on, its Prolific STUDY_ID): what a GET of the link checks, writing nothing."""
    study = study_for_entry(study_id)
    rule = crowd_services.entry_rule(scope_key("study", study.pk), study.platform)
    return study, crowd_services.check_link(params, rule)


PLATFORMS = ("", "prolific", "generic")


@transaction.atomic
def set_entry_rule(study_id: int, platform: str, prolific_study_id: str = "") -> Study:
    """The admin says where the study recruits (`platform`: "" automatic, "prolific", "generic") and, for
    Prolific, which Prolific study it is (its STUDY_ID: crowd.services.link_prolific_study)."""
    study = Study.objects.select_for_update().filter(pk=study_id).first()
    if study is None:
        raise NotFound("No such study.", field="study")
    if platform not in PLATFORMS:
        raise DomainError("Pick automatic, Prolific or another platform.", field="platform")
    prolific_study_id = (prolific_study_id or "").strip()
    if prolific_study_id:
        if platform == "generic":
            raise DomainError("A study run on another platform has no Prolific study id.", field="prolific_study_id")
        crowd_services.link_prolific_study(scope_key("study", study.pk), prolific_study_id)
    study.platform = platform
    study.save(update_fields=["platform"])
    return study


def enter_study_from_crowd_link(study_id: int, params, signed_in=None, ask_prolific: bool = True) -> tuple:
    """The crowd entry under the study's one entry rule (crowd.services.entry_rule: that platform's
    parameters only, its STUDY_ID, Prolific's API where configured, asked before the transaction), then
    the account (crowd.services.enter_checked: session-bound, never in place of a signed-in staff account)
    and the participant's session in one transaction: the same link opened twice at once waits on the
    entry's lock and then finds the session the first one started. `ask_prolific=False`: the demo's
    made-up participants, seeded whether or not a token is set, are not asked of Prolific."""
    study = study_for_entry(study_id)
    scope = scope_key("study", study.pk)
    rule = crowd_services.entry_rule(scope, study.platform)
    ids = crowd_services.check_link(params, rule)
    verified = ask_prolific and crowd_services.verify_link(ids, rule)  # a network call: before the transaction
    with transaction.atomic():
        user, created = crowd_services.enter_checked(ids, params, role="evaluator", signed_in=signed_in,
                                                     scope=scope, verified=verified)
        return user, start_session(study, user, new_account=created)


def end_taken_over_sessions(user_id: int, reason: str, **signal) -> int:
    """crowd.signals.entry_taken_over: the detached account's sessions are ended (their places go back)
    and flagged (left out of the human row)."""
    now = timezone.now()
    EvalSession.objects.filter(participant_id=user_id, status=EvalSession.Status.ACTIVE,
                               deadline__gt=now).update(deadline=now)
    return EvalSession.objects.filter(participant_id=user_id, flagged="").update(flagged=reason[:200])


def may_start(study_id, user) -> tuple[Study, EvalSession | None]:
    """Read-only check of the start page (invitations.may_see): the study and the user's session of
    it, if any. A crowd account starts only the studies it entered by their own link, so it cannot
    take another study's practice items (their answers are feedback) as an answer oracle; another
    evaluator only the studies they were invited to."""
    study = study_for_entry(study_id)
    if not invitations.may_see(study, user):
        if crowd_services.is_crowd_worker(user):
            raise Forbidden("Open this study from its link on your crowd platform.", field="study")
        raise Forbidden("You are not invited to this study; ask the researchers for an invitation.", field="study")
    return study, EvalSession.objects.filter(study=study, participant=user).first()


def start_invited_session(study_id: int, user) -> EvalSession:
    """Invited evaluators and admins with an account start from the study page instead of a crowd
    link (may_start decides who)."""
    study, _ = may_start(study_id, user)
    return start_session(study, user)


def needs_consent(study: Study) -> bool:
    """A study with a consent text starts no item before the participant agreed (consent_to_session).
    One without starts its clock when its first item is asked for; its page still asks for consent."""
    return bool(study.consent_text.strip())


def _start_clock(session: EvalSession, now) -> None:
    session.consented_at = now
    session.deadline = now + timedelta(seconds=session.study.seconds_per_session)
    session.save(update_fields=["consented_at", "deadline"])


@transaction.atomic
def consent_to_session(session_id: int, participant) -> EvalSession:
    """The participant read the instructions and agreed: the session's clock starts now (the first
    item's clock when it is first shown). Agreeing again changes nothing."""
    session = session_for(session_id, participant, for_update=True)
    if session.consented_at is None:
        if session.status != EvalSession.Status.ACTIVE:
            raise Conflict("This session is over.", field="session")
        _start_clock(session, timezone.now())
    return session


# --- the participant's own session ---------------------------------------------------------------


def _db_id(value) -> int | None:
    """`value` as a primary key the database can compare with, or None (nothing has that id)."""
    text = str(value)
    return int(text) if text.isascii() and text.isdigit() and 0 < int(text) < 2**63 else None


def _own_session(session_id, participant, for_update: bool) -> sql.SessionRow:
    """The participant's own session with its study, benchmark and plan's length in one read (404 for
    none, 403 for someone else's). for_update: row-locked (another participant's only as long as it
    takes to refuse it)."""
    db_id = _db_id(session_id)
    found = sql.session_row(db_id, for_update) if db_id else None
    if found is None:
        raise NotFound("No such session.", field="session")
    if found.session.participant_id != participant.pk:
        raise Forbidden("This session belongs to another participant.", field="session")
    return found


def session_for(session_id, participant, for_update: bool = False) -> EvalSession:
    """The participant's own session, with its study and benchmark (see _own_session)."""
    return _own_session(session_id, participant, for_update).session


def plan_entry(session: EvalSession, item_id) -> SessionItem:
    db_id = _db_id(item_id)
    found = sql.plan_entry(session.pk, db_id) if db_id else None
    if found is None:
        raise SessionItem.DoesNotExist(f"Item {item_id} is not in session {session.pk}'s plan.")
    return found


# --- the item on screen --------------------------------------------------------------------------


@transaction.atomic
def current_item(session_id, participant) -> Current:
    """The item on screen now; shows the next one (starting its clock) when none is open.
    A reload lands here too, so the clock of an open item keeps running."""
    session, n_items = _own_session(session_id, participant, for_update=True)
    return Current(session, n_items, _on_screen(session))


def _on_screen(session: EvalSession) -> ShownItem | None:
    """current_item's work on a session whose row the caller has locked."""
    if session.status == EvalSession.Status.FINISHED:
        return None
    now = timezone.now()
    if session.consented_at is None:
        if needs_consent(session.study):
            raise Conflict("Read the instructions and agree to take part first: the clock starts then.",
                           field="consent")
        _start_clock(session, now)
    open_item = sql.open_item(session.pk)
    if open_item and open_item.response.deadline <= now:
        open_item.response.timed_out = True
        open_item.response.save(update_fields=["timed_out"])
        open_item = None
    if open_item:
        return open_item
    return _show_next(session, sql.first_unshown_entry(session.pk))


def _show_next(session: EvalSession, next_entry: SessionItem | None) -> ShownItem | None:
    """Start the clock of the plan's next entry on a session whose row the caller has locked; the
    session finishes when no entry is left or its time is up."""
    now = timezone.now()
    if next_entry is None or session.deadline <= now:
        _finish(session)
        return None
    deadline = min(now + timedelta(seconds=session.study.seconds_per_item), session.deadline)
    response = Response.objects.create(session=session, item=next_entry.item, shown_at=now, deadline=deadline)
    return ShownItem(response, next_entry)


def _finish(session: EvalSession) -> None:
    session.move_to(EvalSession.Status.FINISHED)
    session.finished_at = timezone.now()
    session.completion_code = crowd_services.new_completion_code()
    session.save(update_fields=["status", "finished_at", "completion_code"])


# --- answers -------------------------------------------------------------------------------------


def native_not_sure_index(item: Item) -> int | None:
    lowered = [c.strip().rstrip(".").lower() for c in item.choices]
    return lowered.index("not sure") if "not sure" in lowered else None


def offers_not_sure(study: Study, item: Item) -> bool:
    """A 'Not sure' button beside the options, unless the item has its own not-sure option."""
    return study.offer_not_sure and bool(item.choices) and native_not_sure_index(item) is None


_LETTER_SPLIT = re.compile(r"[\s,;]+")


def answer_letters(answer_text: str) -> list[str]:
    """The option letters of a choice answer as written ('B', 'A, C', 'a c')."""
    return [part for part in _LETTER_SPLIT.split(answer_text) if part]


def clean_answer(study: Study, entry: SessionItem, answer_text) -> str:
    """The answer as stored: shown option letters ('B', 'A, C'), 'Not sure', or the open text."""
    answer_text = (answer_text or "").strip()
    if not answer_text:
        raise DomainError("Give an answer before submitting.", field="answer")
    item = entry.item
    if not item.choices:
        if len(answer_text) > MAX_ANSWER_CHARS:
            raise DomainError(f"Answers are at most {MAX_ANSWER_CHARS} characters.", field="answer")
        return answer_text
    if answer_text.lower() == NOT_SURE.lower() and offers_not_sure(study, item):
        return NOT_SURE
    letters = [letter.upper() for letter in answer_letters(answer_text)]
    shown = LETTERS[: len(entry.choice_order)]
    if not letters or any(letter not in shown for letter in letters) or len(set(letters)) != len(letters):
        raise DomainError(
            f"Answer with the letters of the options shown ({', '.join(shown)}).", field="answer"
        )
    if item.answer_format != "multi" and len(letters) != 1:
        raise DomainError("Pick exactly one option.", field="answer")
    return ", ".join(sorted(letters))


@dataclass(frozen=True)
class _Stored:
    """What storing an answer did, for the verbs that go on under the same lock."""

    answered: Answered
    next_entry: SessionItem | None  # the first plan entry not shown yet
    revised: bool  # an earlier answer changed (going back)
    late: bool  # after the item's deadline: marked timed out, what was typed kept but not scored


def answer_item(session_id, participant, item_id, answer_text: str, client_latency_ms=None,
                focus_losses=0) -> Answered:
    """Store the answer to the item on screen, timed by the server's clock. An answer after the item's
    deadline is not scored: the item is marked timed out, whatever the client says, and what was typed is
    kept beside it (the page sends it when the time runs out)."""
    with transaction.atomic():
        stored = _store_answer(session_id, participant, item_id, answer_text, client_latency_ms, focus_losses)
    _refuse_if_late(stored)
    return stored.answered


def answer_and_show_next(session_id, participant, item_id, answer_text: str, client_latency_ms=None,
                         focus_losses=0) -> AnsweredThenNext:
    """answer_item, and after a scored or attention item also current_item's work under the same lock
    of the session: the answer request, a few a minute per participant, reads the session once.
    After a familiarisation item the next clock waits until the participant has read the feedback."""
    with transaction.atomic():
        stored = _store_answer(session_id, participant, item_id, answer_text, client_latency_ms, focus_losses)
        answered, next_item = stored.answered, None
        if not stored.late and answered.entry.role != ItemRole.FAMILIARISATION:
            # Going back leaves the item on screen open; else none is open now (there is never more than one).
            next_item = (_on_screen(answered.session) if stored.revised
                         else _show_next(answered.session, stored.next_entry))
    _refuse_if_late(stored)
    return AnsweredThenNext(answered, next_item)


def _store_answer(session_id, participant, item_id, answer_text, client_latency_ms, focus_losses) -> _Stored:
    """The work of both answer verbs, in the caller's transaction: the session locked, the answer
    checked and stored (or the item marked timed out)."""
    session, n_items = _own_session(session_id, participant, for_update=True)
    client_latency_ms = whole_number(client_latency_ms, "client_latency_ms", 0, 2**31 - 1, optional=True)
    focus_losses = whole_number(focus_losses, "focus_losses", 0, 100_000)
    db_id = _db_id(item_id)
    response = sql.locked_response(session.pk, db_id) if db_id else None
    if response is None:
        raise DomainError("This item is not the one on your screen.", field="item")
    entry, next_entry = sql.answered_and_next_entry(session.pk, response.item_id)
    response.session, response.item = session, entry.item  # already read: no second look-up
    now = timezone.now()
    revised = response.answered_at is not None
    late = not revised and (response.timed_out or response.deadline <= now)
    if revised:
        _revise(session, entry, response, answer_text, now)
    elif late:
        # Committed before the refusal (_refuse_if_late), so the timeout stands whatever the client sends next.
        # The typed text is kept as sent (bounded), never scored: answered_at stays empty.
        response.timed_out = True
        if not response.answer_text:
            response.answer_text = str(answer_text or "").strip()[:MAX_ANSWER_CHARS]
        response.save(update_fields=["timed_out", "answer_text"])
    else:
        response.answer_text = clean_answer(session.study, entry, answer_text)
        response.answered_at = now
        response.client_latency_ms = client_latency_ms
        response.focus_losses = focus_losses
        response.save(update_fields=["answer_text", "answered_at", "client_latency_ms", "focus_losses"])
    return _Stored(Answered(session, n_items, response, entry), next_entry, revised, late)


def _refuse_if_late(stored: _Stored) -> None:
    if stored.late:
        deadline = stored.answered.response.deadline
        kept = stored.answered.response.answer_text
        raise DomainError(
            f"Time for this item ran out at {deadline:%H:%M:%S} UTC; "
            + ("what you typed was kept, marked late, and is not scored." if kept else "no answer was recorded."),
            field="answer",
        )


def _revise(session: EvalSession, entry: SessionItem, response: Response, answer_text, now) -> None:
    """Going back: a scored or attention answer may change while the session lasts, if the study allows,
    and only within the item's own time (its deadline holds for every write, or a late change would
    keep the first answer's latency)."""
    study = session.study
    if not study.allow_going_back or entry.role == ItemRole.FAMILIARISATION:
        raise Conflict("This item was already answered.", field="item")
    if session.status != EvalSession.Status.ACTIVE or session.deadline <= now:
        raise Conflict("The session is over; answers can no longer change.", field="item")
    if response.deadline <= now:
        raise Conflict(f"Time for this item ran out at {response.deadline:%H:%M:%S} UTC; its answer can no "
                       "longer change.", field="item")
    response.answer_text = clean_answer(study, entry, answer_text)
    response.revised_at = now
    response.save(update_fields=["answer_text", "revised_at"])


# --- going back ----------------------------------------------------------------------------------


def answered_items(session: EvalSession) -> list[dict]:
    """What a participant may go back to: answered scored and attention items, in plan order."""
    answered = set(session.responses.exclude(answered_at=None).values_list("item_id", flat=True))
    return [
        {"id": entry.item_id, "number": entry.position + 1}
        for entry in session.plan.exclude(role=ItemRole.FAMILIARISATION)
        if entry.item_id in answered
    ]


def answered_item(session_id, participant, item_id) -> Answered:
    """An item the participant answered, with their answer, to go back to (when the study allows)."""
    session, n_items = _own_session(session_id, participant, for_update=False)
    if not session.study.allow_going_back:
        raise Forbidden("This study does not allow going back.", field="item")
    response = (
        session.responses.filter(item_id=item_id).exclude(answered_at=None).select_related("item").first()
    )
    if response is None:
        raise NotFound("You have not answered this item.", field="item")
    return Answered(session, n_items, response, plan_entry(session, item_id))
