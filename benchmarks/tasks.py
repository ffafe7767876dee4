"""Benchmark tasks on the default queue."""

from celery import shared_task

from . import services


@shared_task
def write_release_formats(release_id: int) -> int:
    """Idempotent: formats already written are skipped (see services.write_release_formats)."""
    try:
        return services.write_release_formats(release_id).pk
    except Exception:
        # The page shows 'failed'; running the task again resumes from the formats not yet written.
        services.mark_release_failed(release_id)
        raise
