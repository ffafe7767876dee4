"""Celery tasks: thin wrappers over services; `infer_batch` is routed to the gpu queue."""

from celery import shared_task

from . import services


@shared_task(name="modeleval.tasks.infer_batch", acks_late=True)
def infer_batch(run_id: int, item_ids: list[int]) -> int:
    return services.infer_items(run_id, item_ids)


@shared_task(name="modeleval.tasks.score_run")
def score_run(run_id: int) -> None:
    services.score_run(run_id)
