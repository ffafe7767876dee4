"""review's hand-written SQL, writes only, where the ORM's cost was measured to matter: near-duplicate
pairs written with PostgreSQL's COPY (90,000 pairs took 7 s through bulk_create, most of it building
the statements)."""

from django.db import connection, transaction

from .models import DuplicatePair

_PAIR_COLUMNS = "run_id, kind, first_id, second_id, first_text, second_text, similarity"


def copy_pairs(run_id: int, kind: str, rows: list[tuple]) -> None:
    """(first_id, second_id, first_text, second_text, similarity) rows, pending, straight into the table
    (the run's first delivery: it has no pair of this kind yet)."""
    table = connection.ops.quote_name(DuplicatePair._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {table} ({_PAIR_COLUMNS}, resolution) FROM STDIN") as copy:
            for row in rows:
                copy.write_row((run_id, kind, *row, DuplicatePair.Resolution.PENDING))


def copy_missing_pairs(run_id: int, kind: str, rows: list[tuple]) -> None:
    """The same rows from a redelivered run: COPY into a temporary table, then one INSERT ... ON
    CONFLICT DO NOTHING, so a pair already written is not written twice."""
    table = connection.ops.quote_name(DuplicatePair._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE dedup_pairs_in (run_id bigint, kind varchar(10), first_id integer, "
                       "second_id integer, first_text text, second_text text, similarity double precision) "
                       "ON COMMIT DROP")
        with cursor.cursor.copy(f"COPY dedup_pairs_in ({_PAIR_COLUMNS}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row((run_id, kind, *row))
        cursor.execute(f"INSERT INTO {table} ({_PAIR_COLUMNS}, resolution) SELECT {_PAIR_COLUMNS}, %s "
                       "FROM dedup_pairs_in ON CONFLICT DO NOTHING", [DuplicatePair.Resolution.PENDING])
