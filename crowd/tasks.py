"""Crowd's tasks on the default queue."""

from celery import shared_task

from . import prolific_jobs


@shared_task
def run_prolific_verb(job_id: int, verb: str, scope: str, options: dict) -> int:
    """A bulk Prolific verb as its core.Job (prolific_jobs.run_prolific_job). Idempotent: a redelivered
    message of a job that ran or runs does nothing."""
    prolific_jobs.run_prolific_job(job_id, verb, scope, options)
    return job_id
