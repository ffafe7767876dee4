"""Sending modeleval's Celery tasks. Imports point one way: tasks.py imports services and inflight
(tasks call the verbs); services and inflight send tasks through these functions, which name the
tasks (core.sending) instead of importing tasks.py.

Inference goes to the queue of the GPU workers that hold the model: `gpu`, or `gpu.<worker_queue>` when
the model's config names one, so each GPU host keeps a few models warm instead of every host loading
every model (docs/DEPLOY.md)."""

from celery import current_app
from django.conf import settings

from core import sending

GPU_QUEUE = "gpu"


def inference_queue(model) -> str:
    """The queue a model's batches and prompts go to."""
    name = (model.config or {}).get("worker_queue")
    return f"{GPU_QUEUE}.{name}" if name else GPU_QUEUE


def batch_size(run, n_items: int) -> int:
    """Item ids per inference task. Tasks that run in the caller's process (the embedded default) gain
    nothing from batches, so one task takes the run and an endpoint's requests stay in flight across
    them; a worker's task takes at least an endpoint model's `max_in_flight` items, to fill its window."""
    if current_app.conf.task_always_eager:
        return max(n_items, 1)
    if run.model.adapter == "openai_compatible":
        return max(run.batch_size, int((run.model.config or {}).get("max_in_flight", 16)))
    return run.batch_size


def send_batch(run, item_ids: list[int]) -> None:
    """One inference batch to the queue of the workers that hold the run's model."""
    sending.send("modeleval.tasks.infer_batch", run.pk, item_ids, queue=inference_queue(run.model))


def resend_batch(task_id: str, run_id: int, item_ids: list[int]) -> None:
    """A lost batch sent again under its own task id, so its in-flight record keeps naming it."""
    from .models import Run

    model = Run.objects.select_related("model").get(pk=run_id).model
    sending.send("modeleval.tasks.infer_batch", run_id, item_ids, task_id=task_id, queue=inference_queue(model))


def complete_on_gpu_worker(model, prompt: str, images: list[bytes]) -> str:
    """A local checkpoint's answer to one prompt, from a GPU worker that holds it (never loaded here):
    the caller, a page or a default-queue stage, waits for it up to LOCAL_COMPLETION_TIMEOUT_S."""
    result = sending.send("modeleval.tasks.complete_prompt", model.pk, prompt, [image.hex() for image in images],
                          queue=inference_queue(model))
    try:
        # a default-queue task waiting on a gpu-queue task cannot deadlock: different workers serve them
        return result.get(timeout=settings.LOCAL_COMPLETION_TIMEOUT_S, disable_sync_subtasks=False)
    finally:
        result.forget()


def send_render(run_id: int, scene_id: int, job_id: int) -> None:
    """One scene's view set for a run, to the default queue (rendering needs no GPU), reported through
    its core.Job `job_id`."""
    sending.send("modeleval.tasks.render_views", run_id, scene_id, job_id)


def send_scoring(run_id: int) -> None:
    sending.send("modeleval.tasks.score_run", run_id)
