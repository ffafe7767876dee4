from celery import shared_task

from core.jobs import running_job
from core.models import Job

from . import drafting, services
from .models import DraftRequest


@shared_task
def expire_stale_leases() -> int:
    """Periodic sweep (beat): lapsed leases go back to the pool even when nobody asks for a new one."""
    return services.expire_stale_leases()


@shared_task(acks_late=True)
def run_draft_request(request_id: int, job_id: int | None = None) -> str:
    """The model's call as the request's core.Job: what it wrote as the report, its error as the reason
    (drafting.run_draft_request ends the job); returns the job's status. Keyed by the DraftRequest row:
    a redelivery finds its job running or ended and writes nothing."""
    request = DraftRequest.objects.select_related("template", "scene", "change").get(pk=request_id)
    job_id = job_id or drafting.draft_job(request).pk
    with running_job(job_id, message="Asking the model") as job:
        if job is not None:
            drafting.run_draft_request(request_id)
    return Job.objects.get(pk=job_id).status
