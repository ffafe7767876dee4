"""The kernel's hand-written SQL: named locks for writes that have no row to lock yet (the first
entry of a crowd worker id)."""

from django.db import connection


def hold(name: str) -> None:
    """Hold a lock called `name` until the current transaction ends: on PostgreSQL a transaction-level
    advisory lock (a 64-bit hash of the name), so requests for the same name queue and others pass.
    SQLite (the embedded default) lets one writer in at a time already, so nothing is needed there."""
    if not connection.in_atomic_block:
        raise RuntimeError("core.reads.hold needs a transaction (transaction.atomic).")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])
