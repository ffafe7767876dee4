"""The human baseline: a study designed on approved items (stratified sample, familiarisation,
attention checks), eligibility, timed sessions whose clock the server owns, and results graded by
the same scorer as the models."""

import random
import re
import secrets
import statistics
from collections import Counter
from datetime import timedelta
from functools import cache, reduce
from itertools import combinations
from operator import or_
from string import ascii_uppercase as LETTERS

from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

import scoring
from annotation import services as annotation_services
from benchmarks import protocols
from benchmarks.models import AssetRole, Benchmark, ContextChange, Item, Scene
from benchmarks.protocols import Protocol, Variant
from benchmarks.reads import columns, instances, lock_clause
from benchmarks.services import gold_row
from core.errors import Conflict, DomainError, Forbidden, NotFound
from core.validation import whole_number
from scoring.hypo3d import normalize_answer
from scoring.tables import breakdowns, family_record

from .models import EvalSession, ItemRole, Response, SessionItem, Study, StudyItem

NOT_SURE = "Not sure"
MAX_ANSWER_CHARS = 500
MAX_STUDY_TEXT_CHARS = 20_000
# How long a participant may read the instructions before agreeing: until then the session holds its
# places (its provisional deadline is arrival + this + the session's time).
CONSENT_WINDOW = timedelta(minutes=30)
# --- study design -------------------------------------------------------------------------------


def stratum_label(value) -> str | None:
    """The stratum an item's tag value puts it in; a list (several question types) is one stratum."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, list):
        return "+".join(sorted(map(str, value)))
    return str(value)


def stratified_sample(
    tagged_ids: list[tuple[int, object]], per_stratum: int, seed: int
) -> list[tuple[int, str]]:
    """`per_stratum` item ids drawn from every stratum, reproducible from the seed: the same pool and
    seed always give the same sample. Items without the tag are in no stratum."""
    strata: dict[str, list[int]] = {}
    for item_id, value in sorted(tagged_ids, key=lambda pair: pair[0]):
        label = stratum_label(value)
        if label is not None:
            strata.setdefault(label, []).append(item_id)
    if not strata:
        raise DomainError("No item of the pool has this tag.", field="stratify_by")
    rng = random.Random(seed)
    sample = []
    for label in sorted(strata):
        if len(strata[label]) < per_stratum:
            raise DomainError(
                f"Stratum '{label}' has only {len(strata[label])} items; asked for {per_stratum}.",
                field="per_stratum",
            )
        sample += [(item_id, label) for item_id in sorted(rng.sample(strata[label], per_stratum))]
    return sample


def _approved_items(benchmark: Benchmark, item_ids, field: str) -> list[Item]:
    try:
        wanted = {int(i) for i in item_ids or []}
    except (TypeError, ValueError):
        raise DomainError("Item ids are whole numbers.", field=field) from None
    items = list(Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED, pk__in=wanted))
    missing = wanted - {i.pk for i in items}
    if missing:
        raise DomainError(f"Not approved items of this benchmark: {sorted(missing)}.", field=field)
    return items


@transaction.atomic
def create_study(
    benchmark: Benchmark,
    name: str,
    item_ids,
    created_by,
    seconds_per_item=120,
    seconds_per_session=1800,
    *,
    stratify_by: str = "",
    per_stratum=None,
    seed=None,
    familiarisation_count=0,
    attention_ids=(),
    attention_failures_allowed=0,
    participants_per_item=3,
    items_per_session=None,
    allow_going_back=False,
    shuffle_items=False,
    shuffle_choices=True,
    offer_not_sure=False,
    circular_variants=False,
    flip_images=False,
    instructions: str = "",
    consent_text: str = "",
) -> Study:
    """A study over approved items. `item_ids` are the scored items, or with `stratify_by` the pool
    that `per_stratum` items of each tag value are drawn from. Familiarisation items are drawn from
    the benchmark's other approved items; attention checks are named. Draws use `seed` (a fresh one
    when None), which is recorded."""
    name = (name or "").strip()
    if not name:
        raise DomainError("Give the study a name.", field="name")
    seconds_per_item = whole_number(seconds_per_item, "seconds_per_item", 5, 3600)
    seconds_per_session = whole_number(seconds_per_session, "seconds_per_session", 5, 24 * 3600)
    if seconds_per_session < seconds_per_item:
        raise DomainError("A session must last at least one item's time.", field="seconds_per_session")
    seed = secrets.randbelow(2**31) if seed in (None, "") else whole_number(seed, "seed", 0, 2**62)
    familiarisation_count = whole_number(familiarisation_count, "familiarisation_count", 0, 100)
    attention_failures_allowed = whole_number(
        attention_failures_allowed, "attention_failures_allowed", 0, 100
    )
    participants_per_item = whole_number(participants_per_item, "participants_per_item", 1, 1000)
    items_per_session = whole_number(items_per_session, "items_per_session", 1, 10_000, optional=True)
    stratify_by = (stratify_by or "").strip()
    instructions, consent_text = _study_text(instructions, "instructions"), _study_text(consent_text, "consent_text")

    attention = _approved_items(benchmark, attention_ids, "attention_ids")
    attention_pks = {i.pk for i in attention}
    pool = [i for i in _approved_items(benchmark, item_ids, "items") if i.pk not in attention_pks]
    if not pool:
        raise DomainError("Pick at least one approved item of this benchmark.", field="items")
    if stratify_by:
        per_stratum = whole_number(per_stratum, "per_stratum", 1, 10_000)
        scored = stratified_sample([(i.pk, i.tags.get(stratify_by)) for i in pool], per_stratum, seed)
    else:
        per_stratum = None
        scored = [(i.pk, "") for i in sorted(pool, key=lambda i: i.pk)]
    if items_per_session and items_per_session > len(scored):
        raise DomainError(f"The study has only {len(scored)} scored items.", field="items_per_session")

    taken = attention_pks | {pk for pk, _ in scored}
    spare = sorted(
        Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED)
        .exclude(pk__in=taken)
        .values_list("pk", flat=True)
    )
    if familiarisation_count > len(spare):
        raise DomainError(
            f"Only {len(spare)} approved items are left outside the sample for familiarisation.",
            field="familiarisation_count",
        )
    familiarisation = sorted(random.Random(f"{seed}:familiarisation").sample(spare, familiarisation_count))

    study = Study.objects.create(
        benchmark=benchmark,
        name=name,
        seconds_per_item=seconds_per_item,
        seconds_per_session=seconds_per_session,
        created_by=created_by,
        sample_seed=seed,
        stratify_by=stratify_by,
        per_stratum=per_stratum,
        participants_per_item=participants_per_item,
        items_per_session=items_per_session,
        attention_failures_allowed=attention_failures_allowed,
        allow_going_back=bool(allow_going_back),
        shuffle_items=bool(shuffle_items),
        shuffle_choices=bool(shuffle_choices),
        offer_not_sure=bool(offer_not_sure),
        circular_variants=bool(circular_variants),
        flip_images=bool(flip_images),
        instructions=instructions,
        consent_text=consent_text,
    )
    if study.flip_images:
        _store_flipped_images([pk for pk, _ in scored])
    entries = [(pk, ItemRole.FAMILIARISATION, "") for pk in familiarisation]
    entries += [(pk, ItemRole.SCORED, stratum) for pk, stratum in scored]
    entries += [(i.pk, ItemRole.ATTENTION, "") for i in sorted(attention, key=lambda i: i.pk)]
    StudyItem.objects.bulk_create(
        StudyItem(study=study, item_id=pk, role=role, stratum=stratum, position=position)
        for position, (pk, role, stratum) in enumerate(entries)
    )
    return study


def _study_text(value, field: str) -> str:
    value = (value or "").strip()
    if len(value) > MAX_STUDY_TEXT_CHARS:
        raise DomainError(f"At most {MAX_STUDY_TEXT_CHARS} characters.", field=field)
    return value


@transaction.atomic
def update_study(study_id: int, name: str, instructions: str = "", consent_text: str = "", is_open=True) -> Study:
    """What may change once a study exists: its name, the texts participants read first, and whether
    it takes new participants. The sample and the timing are the design, fixed at creation."""
    study = Study.objects.select_for_update().filter(pk=study_id).first()
    if study is None:
        raise NotFound("No such study.", field="study")
    name = (name or "").strip()
    if not name:
        raise DomainError("Give the study a name.", field="name")
    study.name = name
    study.instructions = _study_text(instructions, "instructions")
    study.consent_text = _study_text(consent_text, "consent_text")
    study.is_open = bool(is_open)
    study.save(update_fields=["name", "instructions", "consent_text", "is_open"])
    return study


def _store_flipped_images(item_ids: list[int]) -> None:
    """Mirrored twins of the images of every flip-tagged item, so participants' pages can show them."""
    items = Item.objects.filter(pk__in=item_ids).exclude(scene=None).select_related("scene")
    scenes = {item.scene for item in items if protocols.flip_rule(item.tags)}
    for scene in scenes:
        for asset in scene.assets.filter(role=AssetRole.IMAGE):
            protocols.ensure_flipped_twin(asset)


def study_design(study: Study) -> dict:
    """The design as recorded, for the admin and the export."""
    entries = StudyItem.objects.filter(study=study)
    roles = Counter(entries.values_list("role", flat=True))
    return {
        "seed": study.sample_seed,
        "stratify_by": study.stratify_by or None,
        "per_stratum": study.per_stratum,
        "strata": dict(
            Counter(
                entries.filter(role=ItemRole.SCORED).exclude(stratum="").values_list("stratum", flat=True)
            )
        ),
        "scored_items": roles[ItemRole.SCORED],
        "familiarisation_items": roles[ItemRole.FAMILIARISATION],
        "attention_items": roles[ItemRole.ATTENTION],
        "attention_failures_allowed": study.attention_failures_allowed,
        "participants_per_item": study.participants_per_item,
        "items_per_session": study.items_per_session,
        "seconds_per_item": study.seconds_per_item,
        "seconds_per_session": study.seconds_per_session,
        "allow_going_back": study.allow_going_back,
        "shuffle_items": study.shuffle_items,
        "shuffle_choices": study.shuffle_choices,
        "offer_not_sure": study.offer_not_sure,
        "circular_variants": study.circular_variants,
        "flip_images": study.flip_images,
    }


# --- eligibility and sessions --------------------------------------------------------------------


# Who has seen an item's answer before the study, as paths from the item: its author, revisers and
# reviewers, whoever answered it for consensus (a reviewer's independent answer or an answer-only
# campaign's crowd answer), and the author, revisers and reviewers of the change it rests on.
_ITEM_HELPERS = (
    "author",
    "revisions__author",
    "decisions__reviewer",
    "independent_answers__answerer",
    "crowd_answers__worker",
    "change__author",
    "change__revisions__author",
    "change__decisions__reviewer",
)


def is_contaminated(study: Study, user) -> bool:
    """Whether the user wrote, reviewed or answered for consensus any item of the study, or wrote or
    reviewed the change it rests on. One query for the one user entering, whatever the study's size;
    each path is its own EXISTS so that joining them never multiplies rows."""
    helped = [Exists(Item.objects.filter(pk=OuterRef("pk"), **{path: user})) for path in _ITEM_HELPERS]
    return Item.objects.filter(studies=study).filter(reduce(or_, helped)).exists()


def _participant_rng(study: Study, participant) -> random.Random:
    # Reproducible per participant: the same study seed and participant give the same plan.
    return random.Random(f"{study.sample_seed}:participant:{participant.pk}")


def places_taken(study: Study) -> Counter:
    """Item id -> participants holding or having used a place on it: scored items planned in a session
    that is still running, or answered (or timed out) in one that is over. An abandoned session's
    unanswered items go back to the pool. Counted by the database (one row per item), in SQL written
    once: every starter reads it under the study's lock."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(_places_sql(), [study.pk, ItemRole.SCORED, EvalSession.Status.ACTIVE, now, True])
        return Counter(dict(cursor.fetchall()))


@cache
def _places_sql() -> str:
    return (
        f"SELECT p.item_id, COUNT(*) FROM {SessionItem._meta.db_table} p "
        f"JOIN {EvalSession._meta.db_table} s ON s.id = p.session_id "
        "WHERE s.study_id = %s AND p.role = %s AND ((s.status = %s AND s.deadline > %s) OR EXISTS ("
        f"SELECT 1 FROM {Response._meta.db_table} r WHERE r.session_id = p.session_id AND r.item_id = p.item_id "
        "AND (r.answered_at IS NOT NULL OR r.timed_out = %s))) GROUP BY p.item_id"
    )


def study_variants(study: Study, item: Item, has_image: bool) -> list[Variant]:
    """The protocol variants a scored item may be shown in (benchmarks.protocols)."""
    protocol = Protocol(circular=study.circular_variants, flip=study.flip_images)
    return protocols.variants(protocol, len(item.choices), protocols.flip_rule(item.tags), has_image)


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
    rng = _participant_rng(study, participant)
    # (item id, role, position) rows in study order: no model instance for each of a large study's items
    entries = list(StudyItem.objects.filter(study=study).values_list("item_id", "role", "position"))
    fills = places_taken(study)
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
    items = Item.objects.in_bulk([item_id for item_id, _, _ in plan])  # the plan's items only
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
        elif study.shuffle_choices:
            rng.shuffle(order)
        planned.append((item, role, order, variant))
    return planned


@transaction.atomic
def start_session(study: Study, participant, new_account: bool = False) -> EvalSession:
    """Start, or resume, the participant's one session of this study. new_account: the participant's
    account was created by the link they came in on, so they have written and reviewed nothing."""
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


@transaction.atomic
def enter_study_from_crowd_link(study_id: int, params, signed_in=None) -> tuple:
    """The crowd entry (annotation.services.enter_from_crowd_link: session-bound account, never in place
    of a signed-in staff account) and the participant's session, in one transaction: the same link
    opened twice at once waits on the entry's lock and then finds the session the first one started."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        raise NotFound("No such study.", field="study")
    user, created = annotation_services.enter_from_crowd_link(params, role="evaluator", signed_in=signed_in)
    return user, start_session(study, user, new_account=created)


def start_invited_session(study_id: int, user) -> EvalSession:
    """Invited staff or evaluators with an account start from the study page instead of a crowd link."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        raise NotFound("No such study.", field="study")
    return start_session(study, user)


def _db_id(value) -> int | None:
    """`value` as a primary key the database can compare with, or None (nothing has that id)."""
    text = str(value)
    return int(text) if text.isascii() and text.isdigit() and 0 < int(text) < 2**63 else None


def _fetch_one(sql: str, params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


@cache
def _session_sql(locked: bool) -> str:
    # The session's study and benchmark, and the length of its plan (the page's progress).
    return (
        f"SELECT {columns(EvalSession, 's')}, {columns(Study, 'st')}, {columns(Benchmark, 'b')}, "
        f"(SELECT COUNT(*) FROM {SessionItem._meta.db_table} p WHERE p.session_id = s.id) "
        f"FROM {EvalSession._meta.db_table} s JOIN {Study._meta.db_table} st ON st.id = s.study_id "
        f"JOIN {Benchmark._meta.db_table} b ON b.id = st.benchmark_id WHERE s.id = %s"
        + (lock_clause("s") if locked else "")
    )


def session_for(session_id: int, participant, for_update: bool = False) -> EvalSession:
    """The participant's own session with its study, benchmark and the length of its plan as `n_items`
    (404 for none, 403 for someone else's), in one hand-written read (benchmarks.reads).
    for_update: row-locked (another participant's only as long as it takes to refuse it)."""
    row = _fetch_one(_session_sql(for_update), [session_id]) if _db_id(session_id) else None
    if row is None:
        raise NotFound("No such session.", field="session")
    session, study, benchmark = instances(row, EvalSession, Study, Benchmark)
    study.benchmark, session.study, session.n_items = benchmark, study, row[-1]
    if session.participant_id != participant.pk:
        raise Forbidden("This session belongs to another participant.", field="session")
    return session


def _finish(session: EvalSession) -> None:
    session.move_to(EvalSession.Status.FINISHED)
    session.finished_at = timezone.now()
    session.completion_code = annotation_services.new_completion_code()
    session.save(update_fields=["status", "finished_at", "completion_code"])


def plan_entry(session: EvalSession, item_id) -> SessionItem:
    found = _plan_entries(session, "p.item_id = %s", [item_id], 1) if _db_id(item_id) else []
    if not found:
        raise SessionItem.DoesNotExist(f"Item {item_id} is not in session {session.pk}'s plan.")
    return found[0]


def entry_of(session: EvalSession, response: Response) -> SessionItem:
    """The plan entry of a response: the one answer_item or current_item already read with it (kept
    on the response as `entry`), else one look-up."""
    entry = getattr(response, "entry", None)
    return entry if entry is not None else plan_entry(session, response.item_id)


@transaction.atomic
def current_item(session_id: int, participant) -> tuple[EvalSession, Response | None]:
    """The item on screen now; shows the next one (starting its clock) when none is open.
    A reload lands here too, so the clock of an open item keeps running."""
    session = session_for(session_id, participant, for_update=True)
    return session, _current_response(session)


_ENTRY_MODELS = (SessionItem, Item, Scene, ContextChange)


@cache
def _entry_columns() -> str:
    # A plan entry `p` with its item, the item's scene and change, as the page shows them.
    return f"{columns(SessionItem, 'p')}, {columns(Item, 'i')}, {columns(Scene, 'sc')}, {columns(ContextChange, 'ch')}"


@cache
def _entry_joins() -> str:
    return (
        f"{SessionItem._meta.db_table} p JOIN {Item._meta.db_table} i ON i.id = p.item_id "
        f"LEFT JOIN {Scene._meta.db_table} sc ON sc.id = i.scene_id "
        f"LEFT JOIN {ContextChange._meta.db_table} ch ON ch.id = i.change_id"
    )


def _as_entry(row, start: int = 0) -> SessionItem:
    entry, item, scene, change = instances(row[start:], *_ENTRY_MODELS)
    item.scene, item.change = scene, change
    entry.item = item
    return entry


def _plan_entries(session: EvalSession, condition: str, params, limit: int) -> list[SessionItem]:
    """The session's plan entries meeting the SQL `condition` (on plan entry `p`), in plan order."""
    sql = (f"SELECT {_entry_columns()} FROM {_entry_joins()} "
           f"WHERE p.session_id = %s AND {condition} ORDER BY p.position LIMIT {int(limit)}")
    with connection.cursor() as cursor:
        cursor.execute(sql, [session.pk, *params])
        return [_as_entry(row) for row in cursor.fetchall()]


_SHOWN = f"SELECT r.item_id FROM {Response._meta.db_table} r WHERE r.session_id = %s"
_NOT_SHOWN = f"p.item_id NOT IN ({_SHOWN})"


def _current_response(session: EvalSession) -> Response | None:
    """current_item's work on a session whose row the caller has locked."""
    if session.status == EvalSession.Status.FINISHED:
        return None
    now = timezone.now()
    if session.consented_at is None:
        if needs_consent(session.study):
            raise Conflict("Read the instructions and agree to take part first: the clock starts then.",
                           field="consent")
        _start_clock(session, now)
    open_response = _open_response(session)
    if open_response and open_response.deadline <= now:
        open_response.timed_out = True
        open_response.save(update_fields=["timed_out"])
        open_response = None
    if open_response:
        return open_response
    following = _plan_entries(session, _NOT_SHOWN, [session.pk], 1)
    return _show_next(session, following[0] if following else None)


@cache
def _open_response_sql() -> str:
    # Shown, neither answered nor timed out (there is never more than one), with its plan entry.
    return (
        f"SELECT {columns(Response, 'r')}, {_entry_columns()} FROM {_entry_joins()} "
        f"JOIN {Response._meta.db_table} r ON r.session_id = p.session_id AND r.item_id = p.item_id "
        "WHERE p.session_id = %s AND r.answered_at IS NULL AND r.timed_out = %s ORDER BY r.shown_at LIMIT 1"
    )


def _open_response(session: EvalSession) -> Response | None:
    row = _fetch_one(_open_response_sql(), [session.pk, False])
    if row is None:
        return None
    response = instances(row, Response)[0]
    response.entry = _as_entry(row, len(Response._meta.concrete_fields))
    response.item = response.entry.item
    return response


def _show_next(session: EvalSession, next_entry: SessionItem | None) -> Response | None:
    """Start the clock of the plan's next entry on a session whose row the caller has locked; the
    session finishes when no entry is left or its time is up."""
    now = timezone.now()
    if next_entry is None or session.deadline <= now:
        _finish(session)
        return None
    deadline = min(now + timedelta(seconds=session.study.seconds_per_item), session.deadline)
    response = Response.objects.create(session=session, item=next_entry.item, shown_at=now, deadline=deadline)
    response.entry = next_entry  # the page shows it next: no second look-up
    return response


def _answered_and_next(session: EvalSession, item_id: int) -> tuple[SessionItem, SessionItem | None]:
    """The plan entry of the item being answered and the first entry not shown yet (the next item
    once this one is answered), in one read. Items are shown in plan order, so every shown entry
    comes before every unshown one: the answered entry is the first of these."""
    condition = f"p.item_id NOT IN ({_SHOWN} AND r.item_id <> %s)"
    entry, *following = _plan_entries(session, condition, [session.pk, item_id], 2)
    return entry, (following[0] if following else None)


def offers_not_sure(study: Study, item: Item) -> bool:
    """A 'Not sure' button beside the options, unless the item has its own not-sure option."""
    return study.offer_not_sure and bool(item.choices) and native_not_sure_index(item) is None


def native_not_sure_index(item: Item) -> int | None:
    lowered = [c.strip().rstrip(".").lower() for c in item.choices]
    return lowered.index("not sure") if "not sure" in lowered else None


_LETTER_SPLIT = re.compile(r"[\s,;]+")
_GOLD_LETTER = re.compile(r"\(?([A-Za-z])(?:\)|\.|\s|$)")


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
    letters = [part.upper() for part in _LETTER_SPLIT.split(answer_text) if part]
    shown = LETTERS[: len(entry.choice_order)]
    if not letters or any(letter not in shown for letter in letters) or len(set(letters)) != len(letters):
        raise DomainError(
            f"Answer with the letters of the options shown ({', '.join(shown)}).", field="answer"
        )
    if item.answer_format != "multi" and len(letters) != 1:
        raise DomainError("Pick exactly one option.", field="answer")
    return ", ".join(sorted(letters))


@cache
def _answered_response_sql() -> str:
    return (f"SELECT {columns(Response, 'r')} FROM {Response._meta.db_table} r "
            f"WHERE r.session_id = %s AND r.item_id = %s{lock_clause('r')}")


def answer_item(
    session_id: int, participant, item_id, answer_text: str, client_latency_ms=None, focus_losses=0,
    show_next: bool = False,
) -> Response:
    """Store the answer to the item on screen, timed by the server's clock. An answer after the item's
    deadline is not recorded and the item is marked timed out, whatever the client says.
    With show_next, an answer to a scored or attention item also does current_item's work under the
    same lock of the session (the result is kept on the response as `next_response`): the answer
    request, a few a minute per participant, reads the session once."""
    with transaction.atomic():
        session = session_for(session_id, participant, for_update=True)
        client_latency_ms = whole_number(client_latency_ms, "client_latency_ms", 0, 2**31 - 1, optional=True)
        focus_losses = whole_number(focus_losses, "focus_losses", 0, 100_000)
        row = _fetch_one(_answered_response_sql(), [session.pk, item_id]) if _db_id(item_id) else None
        if row is None:
            raise DomainError("This item is not the one on your screen.", field="item")
        response = instances(row, Response)[0]
        entry, next_entry = _answered_and_next(session, response.item_id)
        # the caller goes on with them: no second look-up
        response.session, response.entry, response.item = session, entry, entry.item
        now = timezone.now()
        revising = response.answered_at is not None
        late = not revising and (response.timed_out or response.deadline <= now)
        if revising:
            _revise(session, entry, response, answer_text, now)
        elif late:
            # Committed before the refusal below, so the timeout stands whatever the client sends next.
            response.timed_out = True
            response.save(update_fields=["timed_out"])
        else:
            response.answer_text = clean_answer(session.study, entry, answer_text)
            response.answered_at = now
            response.client_latency_ms = client_latency_ms
            response.focus_losses = focus_losses
            response.save(update_fields=["answer_text", "answered_at", "client_latency_ms", "focus_losses"])
        if show_next and not late and entry.role != ItemRole.FAMILIARISATION:
            # Going back leaves the item on screen open; else none is open now (there is never more than one).
            response.next_response = _current_response(session) if revising else _show_next(session, next_entry)
    if late:
        raise DomainError(
            f"Time for this item ran out at {response.deadline:%H:%M:%S} UTC; the answer was not recorded.",
            field="answer",
        )
    return response


def _revise(session: EvalSession, entry: SessionItem, response: Response, answer_text, now) -> Response:
    """Going back: a scored or attention answer may change while the session lasts, if the study allows."""
    study = session.study
    if not study.allow_going_back or entry.role == ItemRole.FAMILIARISATION:
        raise Conflict("This item was already answered.", field="item")
    if session.status != EvalSession.Status.ACTIVE or session.deadline <= now:
        raise Conflict("The session is over; answers can no longer change.", field="item")
    response.answer_text = clean_answer(study, entry, answer_text)
    response.revised_at = now
    response.save(update_fields=["answer_text", "revised_at"])
    return response


def answered_items(session: EvalSession) -> list[dict]:
    """What a participant may go back to: answered scored and attention items, in plan order."""
    answered = set(session.responses.exclude(answered_at=None).values_list("item_id", flat=True))
    return [
        {"id": entry.item_id, "number": entry.position + 1}
        for entry in session.plan.exclude(role=ItemRole.FAMILIARISATION)
        if entry.item_id in answered
    ]


def answered_response(session_id: int, participant, item_id) -> Response:
    session = session_for(session_id, participant)
    if not session.study.allow_going_back:
        raise Forbidden("This study does not allow going back.", field="item")
    response = (
        session.responses.filter(item_id=item_id).exclude(answered_at=None).select_related("item").first()
    )
    if response is None:
        raise NotFound("You have not answered this item.", field="item")
    return response


# --- scoring rows --------------------------------------------------------------------------------


def shown_choices(entry: SessionItem) -> list[str]:
    return [entry.item.choices[index] for index in entry.choice_order]


def canonical_letters(entry: SessionItem, answer_text: str) -> list[str]:
    """Shown letters of an answer mapped back to the item's canonical letters."""
    if answer_text == NOT_SURE:
        return []
    shown = [part for part in _LETTER_SPLIT.split(answer_text) if part]
    return sorted(LETTERS[entry.choice_order[LETTERS.index(letter)]] for letter in shown)


def as_scorer_output(family: str, answer_text: str) -> str:
    """A human answer written the way the family's prompt asks models to answer, so the official
    extraction reads it as it reads a model's (CausalSpatial and Spatial457 look for 'Answer')."""
    if family == "causalspatial":
        return f"Answer: {answer_text}"
    if family == "spatial457":
        unquoted = answer_text.replace("'", "")  # a quote would end the extracted answer early
        return f"{{'Answer': '{unquoted}'}}"
    return answer_text


def scorer_rows(family: str, entry: SessionItem, response: Response, row_id: str) -> tuple[dict, dict]:
    """The gold line and the prediction line of one response, in the scorer's formats; a timed-out
    response predicts nothing (scored wrong)."""
    # A variant's row carries the scorer's suffix (`-k`, `-flip`) and, on the mirror, its swapped answer.
    gold = protocols.variant_gold(gold_row(entry.item, row_id), Variant.parse(entry.variant))
    native = native_not_sure_index(entry.item)
    if native is not None:
        gold["not_sure"] = LETTERS[native]
    output = (
        as_scorer_output(family, response.answer_text) if response.answered_at else ""
    )
    prediction = {"id": gold["id"], "output": output}
    if entry.choice_order:
        prediction["choices"] = shown_choices(entry)
    return gold, prediction


def _row_id(response: Response) -> str:
    # Session first, then the dataset id, so 3DSRBench's rotation and flip suffixes stay at the end.
    return f"s{response.session_id}/{response.item.external_id or response.item_id}"


def is_correct(family: str, entry: SessionItem, response: Response) -> bool:
    gold, prediction = scorer_rows(family, entry, response, _row_id(response))
    result = scoring.score(family, [gold], [prediction], sbert=False)
    # the family's metric that says whether one answer is right (feedback, attention checks, CSV)
    return result["overall"].get(family_record(family).primary_metric) == 100.0


def _gold_letter(text: str) -> str | None:
    """A gold answer of a choice item as its letter: 'B', '(B) No' or 'B. left'."""
    match = _GOLD_LETTER.match(text.strip())
    return match.group(1).upper() if match else None


def feedback(session: EvalSession, response: Response) -> dict:
    """After a familiarisation answer is stored: right or wrong, and the right answer as shown."""
    entry = entry_of(session, response)
    item = entry.item
    if entry.choice_order:
        canonical = [_gold_letter(text) for text in item.answers]
        shown_letters = sorted(LETTERS[entry.choice_order.index(LETTERS.index(c))] for c in canonical if c)
        answer = ", ".join(
            f"{letter}. {shown_choices(entry)[LETTERS.index(letter)]}" for letter in shown_letters
        )
    else:
        answer = " / ".join(item.answers)
    return {
        "item": item.pk,
        "correct": is_correct(session.study.benchmark.family, entry, response),
        "answer": answer,
    }


# --- results -------------------------------------------------------------------------------------


def _responses_with_entries(study: Study) -> list[tuple[SessionItem, Response]]:
    responses = list(
        Response.objects.filter(session__study=study)
        .exclude(answered_at=None, timed_out=False)
        .select_related("item", "session", "session__participant")
        .order_by("session_id", "shown_at")
    )
    entries = {
        (e.session_id, e.item_id): e
        for e in SessionItem.objects.filter(session__study=study).select_related("item")
    }
    return [(entries[(r.session_id, r.item_id)], r) for r in responses]


def exclusions(study: Study, rows: list[tuple[SessionItem, Response]]) -> dict[int, str]:
    """Session id -> why its answers are left out: more failed attention checks than allowed."""
    family = study.benchmark.family
    failed: Counter = Counter()
    checked: Counter = Counter()
    for entry, response in rows:
        if entry.role == ItemRole.ATTENTION:
            checked[response.session_id] += 1
            failed[response.session_id] += not is_correct(family, entry, response)
    return {
        session_id: (
            f"failed {failed[session_id]} of {checked[session_id]} attention checks "
            f"({study.attention_failures_allowed} allowed)"
        )
        for session_id in checked
        if failed[session_id] > study.attention_failures_allowed
    }


def _agreement_key(family: str, entry: SessionItem, response: Response) -> str | None:
    if response.answered_at is None:
        return None
    if entry.choice_order:
        return (
            NOT_SURE
            if response.answer_text == NOT_SURE
            else ",".join(canonical_letters(entry, response.answer_text))
        )
    text = response.answer_text
    return normalize_answer(text) if family == "hypo3d" else text.strip().lower()


def agreement(family: str, rows: list[tuple[SessionItem, Response]]) -> dict:
    """Mean pairwise agreement: for each item answered by two or more participants, the share of
    participant pairs that gave the same answer (canonical letters, or the normalised open answer)."""
    by_item: dict[tuple[int, bool], list[str]] = {}
    for entry, response in rows:
        key = _agreement_key(family, entry, response)
        if key is not None:
            # the mirrored image may have another answer: its answers agree among themselves
            by_item.setdefault((entry.item_id, Variant.parse(entry.variant).flip), []).append(key)
    shares = []
    for answers in by_item.values():
        pairs = list(combinations(answers, 2))
        if pairs:
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
    return {
        "pairwise_percent": round(100 * statistics.fmean(shares), 2) if shares else None,
        "n_items": len(shares),
    }


def _median_seconds(latencies: list[int]) -> float | None:
    return round(statistics.median(latencies) / 1000, 2) if latencies else None


def study_results(study: Study) -> dict:
    """The human row: every scored response (answered or timed out) of a session not excluded is one
    graded row, scored like a model's prediction, in the family's paper layout. Adds exclusions,
    inter-participant agreement, median time per item and the 'Not sure' count."""
    family = study.benchmark.family
    rows = _responses_with_entries(study)
    excluded = exclusions(study, rows)
    kept = [(e, r) for e, r in rows if e.role == ItemRole.SCORED and r.session_id not in excluded]
    gold, predictions = [], []
    for entry, response in kept:
        g, p = scorer_rows(family, entry, response, _row_id(response))
        gold.append(g)
        predictions.append(p)
    # SBERT is left to an explicit request: it loads a sentence-embedding model (as for model runs).
    result = scoring.score(family, gold, predictions, by=breakdowns(family), sbert=False)
    latencies_by_item: dict[int, list[int]] = {}
    for _, response in kept:
        if response.latency_ms is not None:
            latencies_by_item.setdefault(response.item_id, []).append(response.latency_ms)
    result.update(
        {
            "n_sessions": study.sessions.filter(status=EvalSession.Status.FINISHED).count(),
            "n_participants": len({r.session_id for _, r in kept}),
            "n_timed_out": sum(r.timed_out for _, r in kept),
            "n_not_sure": sum(r.answer_text == NOT_SURE for _, r in kept),
            "exclusions": [
                {"session": session_id, "reason": reason} for session_id, reason in sorted(excluded.items())
            ],
            "agreement": agreement(family, kept),
            "median_seconds_per_item": _median_seconds(
                [statistics.median(values) for values in latencies_by_item.values()]
            ),
            "design": study_design(study),
        }
    )
    return result


def _blank_if_none(value):
    return "" if value is None else value


CSV_HEADER = [
    "session",
    "participant",
    "item",
    "external_id",
    "role",
    "position",
    "shown_at",
    "answered_at",
    "latency_ms",
    "client_latency_ms",
    "focus_losses",
    "timed_out",
    "answer_shown_letters",
    "answer_canonical",
    "choices_shown",
    "correct",
    "excluded",
]


def response_table(study: Study) -> list[list]:
    """One line per response (every role) for the CSV export; never shown to evaluators."""
    family = study.benchmark.family
    rows = _responses_with_entries(study)
    excluded = exclusions(study, rows)
    lines = []
    for entry, response in rows:
        canonical = (
            ", ".join(canonical_letters(entry, response.answer_text))
            if entry.choice_order and response.answered_at
            else ""
        )
        lines.append(
            [
                response.session_id,
                response.session.participant.username,
                response.item_id,
                response.item.external_id,
                entry.role,
                entry.position + 1,
                response.shown_at.isoformat(),
                response.answered_at.isoformat() if response.answered_at else "",
                _blank_if_none(response.latency_ms),
                _blank_if_none(response.client_latency_ms),
                response.focus_losses,
                response.timed_out,
                response.answer_text,
                canonical,
                " | ".join(shown_choices(entry)),
                is_correct(family, entry, response),
                excluded.get(response.session_id, ""),
            ]
        )
    return lines


# --- stimuli -------------------------------------------------------------------------------------
# Humans see what models see: an item's page carries every piece of context the family's prompt
# gives a model (modeleval.prompts.render_prompt): the scene's world-frame sentences in the prompt's
# order, the context change as refined, the question with its options, what the prompt says about
# the answer, the same images (the mirrored twin where the model's image is mirrored) and the
# before/after videos, named as such. Never the gold.

# What a family's prompt tells the model about the form of an open answer (Hypo3D Fig. 11,
# Spatial457 Figs. 9-15).
OPEN_ANSWER_HINTS = {
    "hypo3d": "a single word or a short phrase",
    "spatial457": "a phrase, an integer between 0-10 for counting questions, or 'Yes' or 'No'",
}
# What M3-Verse's prompt tells the model about how many options are correct (Figs. 18-19).
ANSWER_COUNT_NOTES = {
    "m3verse": {
        "single": "There is only one correct option for this question.",
        "multi": "There is more than one correct option for this question.",
    },
}
# Options written into the question itself, as CausalSpatial does: "... (A) Yes (B) No (C) Not sure".
_OPTION_IN_QUESTION = re.compile(r"\(([A-J])\)\s*([^()]+?)(?=\s*\([A-J]\)|$)", re.DOTALL)


def shows_mirrored_image(entry: SessionItem) -> bool:
    return protocols.shows_mirrored(entry.item.tags, Variant.parse(entry.variant))


def question_as_shown(item: Item, order: list[int]) -> str:
    """The question as the page shows it: the model's question word for word, except that options
    written into the question ("(A) Yes (B) No") are listed in the order the buttons show them, so
    the letters read in the question are the letters answered with."""
    if not order or order == sorted(order):
        return item.question
    listed = list(_OPTION_IN_QUESTION.finditer(item.question))
    texts = [match.group(2).strip() for match in listed]
    letters = "".join(match.group(1) for match in listed)
    if texts != [str(c).strip() for c in item.choices] or letters != LETTERS[: len(texts)]:
        return item.question
    rewritten = " ".join(f"({LETTERS[i]}) {texts[index]}" for i, index in enumerate(order))
    return item.question[: listed[0].start()] + rewritten + item.question[listed[-1].end():]


def item_context(family: str, entry: SessionItem) -> dict:
    """The words of one plan entry as the evaluator reads them: the question and options in the
    order shown, the context change (the refined text the model gets), and what the family's prompt
    says about the answer."""
    item = entry.item
    return {
        "question": question_as_shown(item, entry.choice_order),
        "answer_format": item.answer_format,
        "choices": shown_choices(entry),
        "context_change": item.change.text if item.change else None,
        "answer_hint": "" if item.choices else OPEN_ANSWER_HINTS.get(family, ""),
        "answer_count_note": ANSWER_COUNT_NOTES.get(family, {}).get(item.answer_format, "")
        if item.choices else "",
    }


def stimulus_files(item: Item, mirrored: bool = False) -> dict:
    """What the page shows of the item's scene besides the viewer: its images (with their overlays;
    the mirrored twins when `mirrored`, as the model's flipped variant gets them), the before/after
    video pair (before is the model's first video) and the world-frame sentences (in the order the
    model's prompt joins them)."""
    if item.scene is None:
        return {"images": [], "videos": None, "world_frame": []}
    assets = list(item.scene.assets.filter(role__in=[AssetRole.IMAGE, AssetRole.VIDEO]).order_by("id"))
    if mirrored:
        assets = [protocols.ensure_flipped_twin(a) if a.role == AssetRole.IMAGE else a for a in assets]
    images = [
        {"url": a.file.url, "overlays": a.meta.get("overlays", [])}
        for a in assets
        if a.role in (AssetRole.IMAGE, protocols.FLIPPED_IMAGE_ROLE)
    ]
    videos = {a.meta.get("which"): a for a in assets if a.role == AssetRole.VIDEO}
    # fps (probed on import) lets the player step and sync by whole frames from the start
    pair = (
        {"before": videos["before"].file.url, "after": videos["after"].file.url,
         "fps": videos["before"].meta.get("fps")}
        if {"before", "after"} <= videos.keys()
        else None
    )
    world_frame = list(item.scene.world_frames.order_by("id").values_list("text", flat=True))
    return {"images": images, "videos": pair, "world_frame": world_frame}
