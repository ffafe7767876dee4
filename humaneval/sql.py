"""The human baseline's hand-written SQL, all reads, two of them taking row locks: the places a study's
sessions hold, and an evaluator's session, plan entries and responses as the answer and current-item
requests read them (the session and the response being answered locked for update). A few a minute
per participant, hundreds of participants at once: Django's query building was most of their CPU
(docs/PERFORMANCE.md). Each read writes its SQL once from the models' columns (benchmarks.sql) and
returns the instances the ORM would give, in small typed results."""

from collections import Counter
from functools import cache
from typing import NamedTuple

from django.db import connection
from django.utils import timezone

from benchmarks.models import Benchmark, ContextChange, Item, Scene
from benchmarks.sql import columns, instances, lock_clause

from .models import EvalSession, ItemRole, Response, SessionItem, Study


class SessionRow(NamedTuple):
    """A session with its study and benchmark loaded, and the length of its plan (the page's progress)."""

    session: EvalSession
    n_items: int


class ShownItem(NamedTuple):
    """An item shown to a participant: its response (the item's clock, the answer) and its plan
    entry (role, order of options, variant) with the item, its scene and its change loaded."""

    response: Response
    entry: SessionItem


def _fetch_one(sql: str, params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


# --- places --------------------------------------------------------------------------------------


@cache
def _places_sql() -> str:
    return (
        f"SELECT p.item_id, COUNT(*) FROM {SessionItem._meta.db_table} p "
        f"JOIN {EvalSession._meta.db_table} s ON s.id = p.session_id "
        "WHERE s.study_id = %s AND p.role = %s AND s.flagged = '' AND ((s.status = %s AND s.deadline > %s) OR EXISTS ("
        f"SELECT 1 FROM {Response._meta.db_table} r WHERE r.session_id = p.session_id AND r.item_id = p.item_id "
        "AND (r.answered_at IS NOT NULL OR r.timed_out = %s))) GROUP BY p.item_id"
    )


def places_taken(study_id: int) -> Counter:
    """Item id -> participants holding or having used a place on it: scored items planned in a session
    that is still running, or answered (or timed out) in one that is over; a flagged session (an id
    taken from its owner, an entry Prolific does not know) holds none. Counted by the database
    (one row per item)."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(_places_sql(), [study_id, ItemRole.SCORED, EvalSession.Status.ACTIVE, now, True])
        return Counter(dict(cursor.fetchall()))


# --- an evaluator's session ----------------------------------------------------------------------


@cache
def _session_sql(locked: bool) -> str:
    return (
        f"SELECT {columns(EvalSession, 's')}, {columns(Study, 'st')}, {columns(Benchmark, 'b')}, "
        f"(SELECT COUNT(*) FROM {SessionItem._meta.db_table} p WHERE p.session_id = s.id) "
        f"FROM {EvalSession._meta.db_table} s JOIN {Study._meta.db_table} st ON st.id = s.study_id "
        f"JOIN {Benchmark._meta.db_table} b ON b.id = st.benchmark_id WHERE s.id = %s"
        + (lock_clause("s") if locked else "")
    )


def session_row(session_id: int, locked: bool) -> SessionRow | None:
    """The session with its study and benchmark and its plan's length, in one query; `locked`:
    row-locked until the transaction ends."""
    row = _fetch_one(_session_sql(locked), [session_id])
    if row is None:
        return None
    session, study, benchmark = instances(row, EvalSession, Study, Benchmark)
    study.benchmark, session.study = benchmark, study
    return SessionRow(session, row[-1])


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


def _plan_entries(session_id: int, condition: str, params, limit: int) -> list[SessionItem]:
    """The session's plan entries meeting the SQL `condition` (on plan entry `p`), in plan order."""
    sql = (f"SELECT {_entry_columns()} FROM {_entry_joins()} "
           f"WHERE p.session_id = %s AND {condition} ORDER BY p.position LIMIT {int(limit)}")
    with connection.cursor() as cursor:
        cursor.execute(sql, [session_id, *params])
        return [_as_entry(row) for row in cursor.fetchall()]


_SHOWN = f"SELECT r.item_id FROM {Response._meta.db_table} r WHERE r.session_id = %s"


def plan_entry(session_id: int, item_id: int) -> SessionItem | None:
    found = _plan_entries(session_id, "p.item_id = %s", [item_id], 1)
    return found[0] if found else None


def first_unshown_entry(session_id: int) -> SessionItem | None:
    """The next entry of the plan: the first one no response was shown for."""
    found = _plan_entries(session_id, f"p.item_id NOT IN ({_SHOWN})", [session_id], 1)
    return found[0] if found else None


def answered_and_next_entry(session_id: int, item_id: int) -> tuple[SessionItem, SessionItem | None]:
    """The plan entry of the item being answered and the first entry not shown yet (the next item
    once this one is answered), in one read. Items are shown in plan order, so every shown entry
    comes before every unshown one: the answered entry is the first of these."""
    condition = f"p.item_id NOT IN ({_SHOWN} AND r.item_id <> %s)"
    entry, *following = _plan_entries(session_id, condition, [session_id, item_id], 2)
    return entry, (following[0] if following else None)


@cache
def _open_response_sql() -> str:
    # Shown, neither answered nor timed out (there is never more than one), with its plan entry.
    return (
        f"SELECT {columns(Response, 'r')}, {_entry_columns()} FROM {_entry_joins()} "
        f"JOIN {Response._meta.db_table} r ON r.session_id = p.session_id AND r.item_id = p.item_id "
        "WHERE p.session_id = %s AND r.answered_at IS NULL AND r.timed_out = %s ORDER BY r.shown_at LIMIT 1"
    )


def open_item(session_id: int) -> ShownItem | None:
    """The item on screen: shown, neither answered nor timed out, with its plan entry."""
    row = _fetch_one(_open_response_sql(), [session_id, False])
    if row is None:
        return None
    response = instances(row, Response)[0]
    entry = _as_entry(row, len(Response._meta.concrete_fields))
    response.item = entry.item
    return ShownItem(response, entry)


@cache
def _response_sql() -> str:
    return (f"SELECT {columns(Response, 'r')} FROM {Response._meta.db_table} r "
            f"WHERE r.session_id = %s AND r.item_id = %s{lock_clause('r')}")


def locked_response(session_id: int, item_id: int) -> Response | None:
    """The session's response to the item, row-locked: the one an answer is stored on."""
    row = _fetch_one(_response_sql(), [session_id, item_id])
    return instances(row, Response)[0] if row is not None else None
