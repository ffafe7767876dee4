"""Sending crowd's Celery tasks (default queue): the verbs send through here, which reaches tasks.py
only when it sends (tasks.py imports the verbs)."""


def send_prolific_job(job_id: int, verb: str, scope: str, options: dict) -> None:
    """A bulk Prolific verb (sync, review, pay), run by a task that reports through its job."""
    from .tasks import run_prolific_verb

    run_prolific_verb.delay(job_id, verb, scope, options)
