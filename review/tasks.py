"""Review tasks on the default queue."""

from celery import shared_task

from core.jobs import running_job

from . import dedup, polish


@shared_task
def find_near_duplicates(run_id: int, job_id: int | None = None) -> int:
    """The run as its core.Job (dedup.dedup_job): progress through advance_job, what it found as the
    job's report, the reason it failed as the job's message (dedup.run_dedup ends the job). Idempotent:
    a redelivered message of a job that ran or runs does nothing."""
    job_id = job_id or dedup.dedup_job(run_id)
    with running_job(job_id, message="Reading the texts") as job:
        if job is not None:
            dedup.run_dedup(run_id)
    return run_id


@shared_task
def embed_arrived_texts(change_ids: list[int], item_ids: list[int]) -> int:
    """Idempotent: texts that already have a vector are not encoded again (see dedup.embed_texts); the
    vectors then go into their benchmark's growing near-duplicate index (dedup.index_arrived)."""
    encoded = dedup.embed_texts(dedup.arrived_texts(change_ids, item_ids))
    dedup.index_arrived(change_ids, item_ids)
    return encoded


@shared_task
def polish_benchmark(job_id: int, change_ids: list[int], item_ids: list[int], model_id: int) -> int:
    """A grammar pass as its core.Job (polish.run_polish). Idempotent: a change or item already
    polished is skipped, and a redelivered message of a job that ran or runs does nothing."""
    polish.run_polish(job_id, change_ids, item_ids, model_id)
    return job_id

