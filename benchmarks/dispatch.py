"""Sending benchmarks' Celery tasks (default queue). Imports point one way: tasks.py imports the
releases and uploads (tasks call the verbs); the verbs send tasks through these functions, which name
them (core.sending) and never import tasks.py."""

from core.sending import send


def send_release_export(release_id: int, job_id: int) -> None:
    """A release's export (releases.export_release), run by a task that reports through the release's job."""
    send("benchmarks.tasks.export_release", release_id, job_id)


def send_upload_check(upload_id: int, job_id: int) -> None:
    """A large upload's check (uploads.run_upload_check), run by a task that reports through its job."""
    send("benchmarks.tasks.check_upload", upload_id, job_id)
