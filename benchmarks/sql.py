"""benchmarks' hand-written SQL. Reads: model instances from hand-written SQL, for the few reads a
crowd's page repeats every few seconds (those of humaneval.sql). Django builds and compiles a
queryset's SQL on every call; on an evaluator's answer that was about 40% of the request's CPU
(docs/PERFORMANCE.md). A hot read writes its SQL once, listing each model's columns with `columns`,
and turns each row back into the same instances the ORM would give with `instances`. One write: a
release's item list, a chunk at a time (releases/stream.py)."""

from functools import cache

from django.db import connection


def columns(model, alias: str) -> str:
    """The select list of the model's concrete fields under `alias`, in the order `instances` reads."""
    return ", ".join(f'{alias}."{field.column}"' for field in model._meta.concrete_fields)


@cache
def _reader(model, vendor: str) -> tuple[int, int, tuple]:
    """The model's number of columns, where its primary key is among them, and per field that needs
    them the database's and the field's converters (JSON text, SQLite's dates and booleans), as
    Django's compiler applies them."""
    fields = model._meta.concrete_fields
    converted = []
    for index, field in enumerate(fields):
        column = field.get_col(model._meta.db_table)
        converters = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
        if converters:
            converted.append((index, column, tuple(converters)))
    return len(fields), fields.index(model._meta.pk), tuple(converted)


def instances(row, *models) -> list:
    """One instance per model from `row`, whose columns are each model's `columns` in turn; None for
    a model whose primary key is NULL (nothing matched its outer join)."""
    found, start = [], 0
    for model in models:
        width, pk_index, converted = _reader(model, connection.vendor)
        values = list(row[start:start + width])
        start += width
        if values[pk_index] is None:
            found.append(None)
            continue
        for index, column, converters in converted:
            for convert in converters:
                values[index] = convert(values[index], column, connection)
        found.append(model.from_db(connection.alias, None, values))
    return found


def lock_clause(alias: str) -> str:
    """`FOR UPDATE OF alias` where the database locks rows (SQLite locks the whole database on write)."""
    return f" FOR UPDATE OF {alias}" if connection.features.has_select_for_update_of else ""


def insert_release_items(db, through, release_id: int, item_ids: list[int]) -> None:
    """A chunk of a release's item list (`through`, the release-items table) in one PostgreSQL statement
    on connection `db`: the ids go as one array (unnest), not one row of parameters each."""
    table = db.ops.quote_name(through._meta.db_table)
    with db.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} (release_id, item_id) SELECT %s, unnest(%s::bigint[])",
                       [release_id, item_ids])
