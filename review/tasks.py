"""Review tasks on the default queue."""

from celery import shared_task

from . import dedup


@shared_task
def find_near_duplicates(run_id: int) -> int:
    """Idempotent: a finished or running run is left alone (see dedup.run_dedup)."""
    return dedup.run_dedup(run_id).pk
