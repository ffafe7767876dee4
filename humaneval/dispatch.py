"""Sending humaneval's Celery tasks (default queue): the verbs send through here, which reaches
tasks.py only when it sends (tasks.py imports the verbs)."""


def send_places_check(job_id: int, study_id: int) -> None:
    """A study's check of its places against Prolific, run by a task that reports through its job."""
    from .tasks import check_prolific_places

    check_prolific_places.delay(job_id, study_id)
