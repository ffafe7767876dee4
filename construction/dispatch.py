"""Sending construction's Celery tasks (default queue). Imports point one way: tasks.py imports the
pipeline (tasks call the verbs); the pipeline sends tasks through this function, which names them
(core.sending) and never imports tasks.py."""

from core.sending import send


def send_stage(job_id: int, stage_id: int, following=()) -> None:
    """A pipeline stage's job; `following` are the (job, stage) steps to send, in order, once it is done."""
    send("construction.tasks.run_pipeline_stage", job_id, stage_id, [list(step) for step in following])
