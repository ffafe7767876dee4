"""The kernel's periodic tasks (config/celery.py's beat schedule), on the default queue."""

from celery import shared_task
from django.conf import settings

from core.idempotency import purge_expired
from core.jobs import fail_stalled_jobs


@shared_task
def purge_idempotency_keys() -> int:
    """Idempotency keys older than 24 h."""
    return purge_expired()


@shared_task
def fail_stalled_running_jobs() -> int:
    """Jobs left running by a worker that died: failed, so asking again queues them again."""
    return len(fail_stalled_jobs(settings.JOB_STALE_S))
