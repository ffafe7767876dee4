"""Sending construction's Celery tasks (default queue). Imports point one way: tasks.py imports the
pipeline (tasks call the verbs); the pipeline sends tasks through this function, which reaches tasks.py
only when it sends."""


def send_stage(job_id: int, stage_id: int, following=()) -> None:
    """A pipeline stage's job; `following` are the (job, stage) steps to send, in order, once it is done."""
    from .tasks import run_pipeline_stage

    run_pipeline_stage.delay(job_id, stage_id, [list(step) for step in following])
