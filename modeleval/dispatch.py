"""Sending modeleval's Celery tasks. Imports point one way: tasks.py imports services and inflight
(tasks call the verbs); services and inflight send tasks through these functions, which reach
tasks.py only when they send."""


def batch_size(run, n_items: int) -> int:
    """Item ids per inference task. Tasks that run in the caller's process (the embedded default) gain
    nothing from batches, so one task takes the run and an endpoint's requests stay in flight across
    them; a worker's task takes at least an endpoint model's `max_in_flight` items, to fill its window."""
    from .tasks import infer_batch

    if infer_batch.app.conf.task_always_eager:
        return max(n_items, 1)
    if run.model.adapter == "openai_compatible":
        return max(run.batch_size, int((run.model.config or {}).get("max_in_flight", 16)))
    return run.batch_size


def send_batch(run_id: int, item_ids: list[int]) -> None:
    """One inference batch to the gpu queue (routed by task name in config/celery.py)."""
    from .tasks import infer_batch

    infer_batch.delay(run_id, item_ids)


def resend_batch(task_id: str, run_id: int, item_ids: list[int]) -> None:
    """A lost batch sent again under its own task id, so its in-flight record keeps naming it."""
    from .tasks import infer_batch

    infer_batch.apply_async((run_id, item_ids), task_id=task_id)


def send_render(run_id: int, scene_id: int) -> None:
    """One scene's view set for a run, to the default queue (rendering needs no GPU)."""
    from .tasks import render_views

    render_views.delay(run_id, scene_id)


def send_scoring(run_id: int) -> None:
    from .tasks import score_run

    score_run.delay(run_id)
