"""Review tasks on the default queue."""

from celery import shared_task

from core.jobs import advance_job, fail_job, finish_job, running_job

from . import dedup, polish
from .models import DedupRun


@shared_task
def find_near_duplicates(run_id: int, job_id: int | None = None) -> int:
    """The run as its core.Job (dedup.dedup_job): progress through advance_job, what it found as the
    job's report. Idempotent: a redelivered message of a job that ran or runs does nothing."""
    job_id = job_id or dedup.dedup_job(run_id)
    try:
        with running_job(job_id, message="Reading the texts") as job:
            if job is None:
                return run_id
            run = dedup.run_dedup(run_id, lambda done=None, total=None, message=None: advance_job(
                job_id, done=done, total=total, message=message))
            if run.status == DedupRun.Status.FAILED:
                fail_job(job_id, run.error)
            else:
                finish_job(job_id, dedup.run_report(run), message=f"{run.pairs.count()} pairs found")
    except Exception as exc:
        dedup.mark_run_failed(run_id, f"{type(exc).__name__}: {exc}")
        raise
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

