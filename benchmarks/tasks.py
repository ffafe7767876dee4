"""Benchmark tasks on the default queue."""

from celery import shared_task

from . import uploads
from .releases import life


@shared_task
def export_release(release_id: int, job_id: int | None = None) -> int:
    """A release's whole export as its core.Job (life.run_release_export): the items, then one step a
    file. Idempotent: what is written is kept; a redelivered message of a job that ran or runs does nothing."""
    life.run_release_export(release_id, job_id)
    return release_id


@shared_task
def check_upload(upload_id: int, job_id: int) -> int:
    """A large upload's size and sha256 checked as its core.Job (uploads.run_upload_check). Idempotent:
    a complete upload keeps its asset; a redelivered message of a job that ran or runs does nothing."""
    uploads.run_upload_check(upload_id, job_id)
    return upload_id
