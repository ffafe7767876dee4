"""Construction's tasks on the default queue: a pipeline stage as its core.Job."""

from celery import shared_task

from core.models import Job

from . import dispatch, pipeline


@shared_task
def run_pipeline_stage(job_id: int, stage_id: int, following: list | None = None) -> str:
    """One stage as its job, then the next step of the pipeline (`following`: [job, stage] pairs); when
    it failed or was cancelled, those steps' jobs fail too. Idempotent: a job already running or done is
    not run again (core.jobs.running_job), and a delivery that finds it running elsewhere leaves the rest
    to that one."""
    following = [tuple(step) for step in following or []]
    status = pipeline.perform_stage(job_id, stage_id)
    if status in (Job.Status.FAILED, Job.Status.CANCELLED):
        pipeline.abandon_steps(following, f"An earlier stage (job {job_id}) did not finish.")
    elif status == Job.Status.DONE and following:
        dispatch.send_stage(*following[0], following=following[1:])
    return status
