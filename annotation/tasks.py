from celery import shared_task

from core.jobs import fail_job, finish_job, running_job

from . import drafting, services
from .models import DraftRequest


@shared_task
def expire_stale_leases() -> int:
    """Periodic sweep (beat): lapsed leases go back to the pool even when nobody asks for a new one."""
    return services.expire_stale_leases()


@shared_task(acks_late=True)
def run_draft_request(request_id: int, job_id: int | None = None) -> str:
    """The model's call as the request's core.Job: what it wrote as the report, its error as the reason.
    Keyed by the DraftRequest row: a redelivery finds its job running or ended and writes nothing."""
    request = DraftRequest.objects.select_related("template", "scene", "change").get(pk=request_id)
    job_id = job_id or drafting.draft_job(request).pk
    with running_job(job_id, message="Asking the model") as job:
        if job is None:
            return request.status
        request = drafting.run_draft_request(request_id)
        if request.status == DraftRequest.Status.FAILED:
            fail_job(job_id, request.error)
        else:
            finish_job(job_id, {kind: len(ids) for kind, ids in request.created.items()})
    return request.status
