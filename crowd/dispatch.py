"""Sending crowd's Celery tasks (default queue): the verbs send through here, which names the tasks
(core.sending) and never imports tasks.py (tasks.py imports the verbs)."""

from core.sending import send


def send_prolific_job(job_id: int, verb: str, scope: str, options: dict) -> None:
    """A bulk Prolific verb (sync, review, pay), run by a task that reports through its job."""
    send("crowd.tasks.run_prolific_verb", job_id, verb, scope, options)
