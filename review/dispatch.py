"""Sending review's Celery tasks (default queue). Imports point one way: tasks.py imports dedup and
polish (tasks call the verbs); the verbs send tasks through these functions, which name them
(core.sending) and never import tasks.py."""

from core.sending import send


def send_dedup(run_id: int, job_id: int) -> None:
    """A near-duplicate search, run by a task that reports through the run's job."""
    send("review.tasks.find_near_duplicates", run_id, job_id)


def send_embedding(change_ids: list[int], item_ids: list[int]) -> None:
    send("review.tasks.embed_arrived_texts", change_ids, item_ids)


def send_polish(job_id: int, change_ids: list[int], item_ids: list[int], model_id: int) -> None:
    """A grammar pass over these changes and items, run by one task that reports through the job."""
    send("review.tasks.polish_benchmark", job_id, change_ids, item_ids, model_id)

