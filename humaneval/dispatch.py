"""Sending humaneval's Celery tasks (default queue): the verbs send through here, which names the
tasks (core.sending) and never imports tasks.py (tasks.py imports the verbs)."""

from core.sending import send


def send_places_check(job_id: int, study_id: int) -> None:
    """A study's check of its places against Prolific, run by a task that reports through its job."""
    send("humaneval.tasks.check_prolific_places", job_id, study_id)
