"""Humaneval's tasks on the default queue."""

from celery import shared_task

from .services import prolific_places


@shared_task
def check_prolific_places(job_id: int, study_id: int) -> int:
    """A study's places checked against Prolific as its core.Job (prolific_places.run_places_check).
    Idempotent: a redelivered message of a job that ran or runs does nothing; a second check ends
    again only what still holds no place."""
    prolific_places.run_places_check(job_id, study_id)
    return study_id
