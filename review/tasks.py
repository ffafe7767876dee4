"""Review tasks on the default queue."""

from celery import shared_task

from . import dedup, polish


@shared_task
def find_near_duplicates(run_id: int) -> int:
    """Idempotent: a finished or running run is left alone (see dedup.run_dedup)."""
    return dedup.run_dedup(run_id).pk


@shared_task
def embed_arrived_texts(change_ids: list[int], item_ids: list[int]) -> int:
    """Idempotent: texts that already have a vector are not encoded again (see dedup.embed_texts)."""
    return dedup.embed_texts(dedup.arrived_texts(change_ids, item_ids))


@shared_task
def polish_changes(change_ids: list[int], model_id: int) -> int:
    """Idempotent: a change already polished at its current revision is skipped (see polish.py)."""
    return polish.polish_changes(change_ids, model_id)
