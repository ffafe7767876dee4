"""The kernel's hand-written SQL, locks and DDL: a row locked by its id, named (advisory) locks for writes
that have no row to lock yet (the first entry of a crowd worker id), and the status history's triggers:
their DDL, the actor comment they read, and the lookup of which are installed; a role granted in one statement."""

import json

from django.db import connection, connections, router
from django.db.models import Lookup
from django.db.models.fields.json import KeyTransform, compile_json_path

from core.errors import NotFound


def locked(model, pk, field: str, name: str = ""):
    """The row `pk` of `model`, locked for update until the transaction ends; NotFound ("No such
    {name}.", `name` being `field` unless given) when there is none."""
    row = model.objects.select_for_update().filter(pk=pk).first()
    if row is None:
        raise NotFound(f"No such {name or field}.", field=field)
    return row


def hold(name: str) -> None:
    """Hold a lock called `name` until the current transaction ends: on PostgreSQL a transaction-level
    advisory lock (a 64-bit hash of the name), so requests for the same name queue and others pass.
    SQLite (the embedded default) lets one writer in at a time already, so nothing is needed there."""
    if not connection.in_atomic_block:
        raise RuntimeError("core.sql.hold needs a transaction (transaction.atomic).")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])


# --- status history triggers (core/history.py) ---------------------------------------------------

_HISTORY_COLUMNS = "model, row_id, from_status, to_status, at, actor_id"

# PostgreSQL: one function per event, shared by every table; the model's label comes as the trigger's
# argument. The actor is the user id core.history.ActorMiddleware appends to the request's statements
# as a trailing comment (current_query() is the statement that fired the trigger): no round trip.
# Only the statement's tail is searched, and once per statement: a bulk create's INSERT is megabytes,
# and matching it once per row made a 3,000-row insert take 6 s instead of 40 ms.
_PG_FUNCTIONS = (
    "CREATE OR REPLACE FUNCTION core_status_actor() RETURNS bigint LANGUAGE sql STABLE AS "
    r"$$ SELECT substring(right(current_query(), 64) from '/\* actor=([0-9]+) \*/\s*$')::bigint $$",
    # Statement-level with the inserted rows as a table: one INSERT however many rows a bulk create writes.
    "CREATE OR REPLACE FUNCTION core_status_created() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "DECLARE actor bigint := core_status_actor(); BEGIN "
    f"INSERT INTO core_statuschange ({_HISTORY_COLUMNS}) "
    "SELECT TG_ARGV[0], id, NULL, status, clock_timestamp(), actor FROM new_rows; "
    "RETURN NULL; END $$",
    # Compared here rather than in UPDATE OF status / WHEN: those pin the column, and a later
    # ALTER COLUMN TYPE on status would fail until the trigger is dropped.
    "CREATE OR REPLACE FUNCTION core_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "IF OLD.status IS DISTINCT FROM NEW.status THEN "
    f"INSERT INTO core_statuschange ({_HISTORY_COLUMNS}) "
    "VALUES (TG_ARGV[0], NEW.id, OLD.status, NEW.status, clock_timestamp(), core_status_actor()); "
    "END IF; RETURN NULL; END $$",
)


def with_actor(statement: str, actor: int) -> str:
    """`statement` carrying the user id `actor` for core_status_actor() to read: last in the text, after a
    newline, so a literal or a -- comment in the statement cannot fake it."""
    return f"{statement}\n/* actor={int(actor)} */"


def status_functions(vendor: str) -> list[str]:
    """The statements that (re)define the functions the history triggers call; SQLite's is Python's."""
    return list(_PG_FUNCTIONS) if vendor == "postgresql" else []


def status_trigger_names(table: str) -> tuple[str, str]:
    """The names of a table's two history triggers: on insert, on update."""
    return f"{table}_status_created", f"{table}_status_changed"


def create_status_triggers(vendor: str, table: str, label: str, quote) -> list[str]:
    """The statements that make `table` (model `label`, with `id` and `status` columns) record its
    status history in core_statuschange: the status a row is created with, and every change of it.
    Idempotent. SQLite (the embedded default) reads the actor from the connection's hypolab_actor()."""
    created, changed = status_trigger_names(table)
    if vendor == "postgresql":
        return [
            *status_functions(vendor),
            f"CREATE OR REPLACE TRIGGER {quote(created)} AFTER INSERT ON {quote(table)} "
            f"REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_status_created('{label}')",
            f"CREATE OR REPLACE TRIGGER {quote(changed)} AFTER UPDATE ON {quote(table)} "
            f"FOR EACH ROW EXECUTE FUNCTION core_status_changed('{label}')",
        ]
    if vendor == "sqlite":
        now = "strftime('%Y-%m-%d %H:%M:%f', 'now')"
        return [
            f"CREATE TRIGGER IF NOT EXISTS {quote(created)} AFTER INSERT ON {quote(table)} BEGIN "
            f"INSERT INTO core_statuschange ({_HISTORY_COLUMNS}) "
            f"VALUES ('{label}', NEW.id, NULL, NEW.status, {now}, hypolab_actor()); END",
            f"CREATE TRIGGER IF NOT EXISTS {quote(changed)} AFTER UPDATE OF status ON {quote(table)} "
            f"WHEN OLD.status IS NOT NEW.status BEGIN "
            f"INSERT INTO core_statuschange ({_HISTORY_COLUMNS}) "
            f"VALUES ('{label}', NEW.id, OLD.status, NEW.status, {now}, hypolab_actor()); END",
        ]
    raise NotImplementedError(f"No status history triggers for {vendor}.")


def drop_status_triggers(vendor: str, table: str, quote) -> list[str]:
    on_table = f" ON {quote(table)}" if vendor == "postgresql" else ""
    return [f"DROP TRIGGER IF EXISTS {quote(name)}{on_table}" for name in status_trigger_names(table)]


def status_triggers_present(tables: list[str]) -> set[str]:
    """The history triggers that exist on `tables`, by name."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid::regclass::text = ANY(%s)",
                           [tables])
        else:
            cursor.execute(f"SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN "
                           f"({', '.join(['%s'] * len(tables))})", tables)
        return {name for (name,) in cursor.fetchall()}


# --- a JSON list under a key holds a value, on both databases -------------------------------------


@KeyTransform.register_lookup
class HoldsElement(Lookup):
    """`tags__question_type__holds="Direction"`: the JSON list under the key has the value as an element.
    Django's `contains` on JSON is PostgreSQL-only, and the embedded default is SQLite, so the list is
    walked with json_each there; both say false for a scalar or an object under the key (callers compare
    scalars with `__in`). Registered when core.sql is imported (core's AppConfig.ready)."""

    lookup_name = "holds"
    prepare_rhs = False

    def as_postgresql(self, compiler, connection):
        lhs, params = compiler.compile(self.lhs)
        return f"({lhs}) @> %s::jsonb", [*params, json.dumps([self.rhs])]

    def as_sqlite(self, compiler, connection):
        field, params, keys = self.lhs.preprocess_lhs(compiler, connection)
        path = compile_json_path(keys)
        return (f"(JSON_TYPE({field}, %s) = 'array' AND EXISTS (SELECT 1 FROM json_each({field}, %s) AS element "
                "WHERE element.value = %s))", [*params, path, *params, path, self.rhs])


def stamp_outside_transaction(table: str, pk: int, status: str, now) -> None:
    """Sets a running row's `updated_at` on a connection of its own (core.jobs.beat_job): committed at
    once, whatever transaction the caller's connection is in."""
    own = connection.copy()
    try:
        name = own.ops.quote_name
        with own.cursor() as cursor:
            cursor.execute(f"UPDATE {name(table)} SET {name('updated_at')} = %s "
                           f"WHERE {name('id')} = %s AND {name('status')} = %s", [now, pk, status])
    finally:
        own.close()


def link_to_group_by_name(user, role: str) -> bool:
    """One statement: link the user to the group named `role` where that group exists and the link does
    not. Whether it inserted the link (False: the group is missing, or the user is in it already)."""
    from django.contrib.auth.models import Group

    links = type(user).groups.through
    using = router.db_for_write(links)
    quote = connections[using].ops.quote_name
    user_column, group_column = (links._meta.get_field(name).column for name in ("user", "group"))
    with connections[using].cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(links._meta.db_table)} ({quote(user_column)}, {quote(group_column)}) "
            f"SELECT %s, {quote(Group._meta.pk.column)} FROM {quote(Group._meta.db_table)} "
            f"WHERE {quote(Group._meta.get_field('name').column)} = %s ON CONFLICT DO NOTHING",
            [user.pk, role],
        )
        return cursor.rowcount == 1
