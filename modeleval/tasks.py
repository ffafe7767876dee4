"""Celery tasks: thin wrappers over services and runs/; `infer_batch` and `complete_prompt` go to the queue of the GPU
workers that hold the model (modeleval/dispatch.py)."""

from celery import shared_task

from . import services
from .clients import calling
from .runs import inference, inflight, run_scoring


@shared_task(name="modeleval.tasks.infer_batch", acks_late=True, bind=True)
def infer_batch(self, run_id: int, item_ids: list[int]) -> int:
    # Recorded and beaten while it runs, so a killed worker's batch is handed on (modeleval/runs/inflight.py).
    watched = None if self.request.is_eager else self.request.id
    with inflight.watch(watched, run_id, item_ids, self.request.hostname or "") as batch:
        return inference.infer_items(run_id, item_ids, on_write=batch.progress)


@shared_task(name="modeleval.tasks.complete_prompt", ignore_result=False)  # its caller waits for it
def complete_prompt(model_id: int, prompt: str, images_hex: list[str]) -> str:
    """One prompt for a local checkpoint, answered by a GPU worker that holds it (sent with the model's
    queue by dispatch.complete_on_gpu_worker; its caller waits for the result)."""
    from .models import ModelSpec

    return calling.complete(ModelSpec.objects.get(pk=model_id), prompt, [bytes.fromhex(h) for h in images_hex])


@shared_task(name="modeleval.tasks.render_views")
def render_views(run_id: int, scene_id: int, job_id: int | None = None) -> None:
    # a message sent before renders had jobs carries none
    services.render_views(run_id, scene_id, job_id or services.render_job(run_id, scene_id))


@shared_task(name="modeleval.tasks.score_run")
def score_run(run_id: int) -> None:
    run_scoring.score_run(run_id)


@shared_task(name="modeleval.tasks.reap_stalled_batches")
def reap_stalled_batches() -> int:
    """Celery beat, every 15 s on the default queue: hand on the batches of GPU workers that died, and
    score the runs whose scoring task was lost."""
    for run_id in run_scoring.stalled_scoring_runs():
        score_run.delay(run_id)
    return len(inflight.reap_stalled_batches())
