"""Sending review's Celery tasks (default queue). Imports point one way: tasks.py imports dedup and
polish (tasks call the verbs); the verbs send tasks through these functions, which reach tasks.py
only when they send."""


def send_dedup(run_id: int, job_id: int) -> None:
    """A near-duplicate search, run by a task that reports through the run's job."""
    from .tasks import find_near_duplicates

    find_near_duplicates.delay(run_id, job_id)


def send_embedding(change_ids: list[int], item_ids: list[int]) -> None:
    from .tasks import embed_arrived_texts

    embed_arrived_texts.delay(change_ids, item_ids)


def send_polish(job_id: int, change_ids: list[int], item_ids: list[int], model_id: int) -> None:
    """A grammar pass over these changes and items, run by one task that reports through the job."""
    from .tasks import polish_benchmark

    polish_benchmark.delay(job_id, change_ids, item_ids, model_id)

