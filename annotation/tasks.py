from celery import shared_task

from . import drafting, services


@shared_task
def expire_stale_leases() -> int:
    """Periodic sweep (beat): lapsed leases go back to the pool even when nobody asks for a new one."""
    return services.expire_stale_leases()


@shared_task(acks_late=True)
def run_draft_request(request_id: int) -> str:
    """Keyed by the DraftRequest row: a redelivery finds it done and writes nothing."""
    return drafting.run_draft_request(request_id).status
