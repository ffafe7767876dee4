"""Model runs: launch over a benchmark's approved items, infer in batches on the gpu queue,
record one prediction per (run, item, variant, repeat), push progress, then score."""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.utils import timezone

import scoring
from benchmarks.errors import DomainError, NotFound
from benchmarks.models import Benchmark, Item
from benchmarks.services import gold_row

from .adapters import load_adapter
from .models import ModelSpec, Prediction, Run

RANDOM_BASELINE_NAME = "Random baseline (seed 0)"


def ensure_baseline_model() -> ModelSpec:
    model, _ = ModelSpec.objects.get_or_create(
        name=RANDOM_BASELINE_NAME, defaults={"adapter": ModelSpec.Adapter.RANDOM_BASELINE, "seed": 0}
    )
    return model


def launch_run(model_id, benchmark: Benchmark, created_by, batch_size=8) -> Run:
    from . import tasks  # tasks import services; import here to keep the arrow one way at load time

    model = ModelSpec.objects.filter(pk=model_id).first() if str(model_id).isdigit() else None
    if model is None:
        raise DomainError("Choose a registered model.", field="model")
    try:
        batch_size = int(batch_size)
    except (TypeError, ValueError):
        raise DomainError("Batch size is a whole number.", field="batch_size") from None
    if not 1 <= batch_size <= 256:
        raise DomainError("Batch size must be between 1 and 256.", field="batch_size")
    items = list(
        Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).order_by("pk").values_list("pk", flat=True)
    )
    if not items:
        raise DomainError("This benchmark has no approved items to evaluate.", field="benchmark")
    with transaction.atomic():
        run = Run.objects.create(
            model=model, benchmark=benchmark, created_by=created_by, batch_size=batch_size, total=len(items)
        )
        run.items.set(items)
        run.move_to(Run.Status.RUNNING)
        run.save(update_fields=["status"])
        batches = [items[i : i + batch_size] for i in range(0, len(items), batch_size)]
        transaction.on_commit(lambda: [tasks.infer_batch.delay(run.pk, batch) for batch in batches])
    return run


def run_progress(run: Run) -> dict:
    done = run.predictions.count()
    return {
        "run": run.pk,
        "status": run.status,
        "done": done,
        "total": run.total,
        "errors": run.predictions.exclude(error="").count(),
        "scores": run.scores.get("overall") if run.scores else None,
    }


def publish_progress(run: Run) -> None:
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(f"run-{run.pk}", {"type": "run.progress", "progress": run_progress(run)})


def infer_items(run_id: int, item_ids: list[int]) -> int:
    """Predict the items of one batch that have no prediction yet; returns how many were written.
    Safe to repeat: the unique constraint and the 'missing only' filter make retries no-ops."""
    run = Run.objects.select_related("model").filter(pk=run_id).first()
    if run is None or run.status != Run.Status.RUNNING:
        return 0
    done = set(run.predictions.filter(item_id__in=item_ids).values_list("item_id", flat=True))
    missing = list(Item.objects.filter(pk__in=item_ids).exclude(pk__in=done).order_by("pk"))
    adapter = load_adapter(run.model.adapter, run.model.seed, run.benchmark_id)
    rows = []
    for item in missing:
        try:
            rows.append(Prediction(run=run, item=item, output=adapter.answer(item)))
        except Exception as exc:  # one bad item must not stop the run; record why
            rows.append(Prediction(run=run, item=item, error=f"{type(exc).__name__}: {exc}"))
    Prediction.objects.bulk_create(rows, ignore_conflicts=True)
    publish_progress(run)
    _finish_inference_when_complete(run_id)
    return len(rows)


def _finish_inference_when_complete(run_id: int) -> None:
    from . import tasks

    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run_id)
        if run.status != Run.Status.RUNNING or run.predictions.count() < run.total:
            return
        run.move_to(Run.Status.SCORING)
        run.save(update_fields=["status"])
        transaction.on_commit(lambda: tasks.score_run.delay(run_id))


def score_run(run_id: int) -> dict | None:
    with transaction.atomic():
        run = Run.objects.select_for_update().select_related("benchmark").filter(pk=run_id).first()
        if run is None or run.status != Run.Status.SCORING:
            return None
        predictions = list(run.predictions.select_related("item"))
        gold = [gold_row(p.item) for p in predictions]
        rows = [{"id": str(p.item_id), "output": p.output} for p in predictions if not p.error]
        run.scores = scoring.score(run.benchmark.family, gold, rows, by=["change_type"])
        run.move_to(Run.Status.FINISHED)
        run.finished_at = timezone.now()
        run.save(update_fields=["scores", "status", "finished_at"])
    publish_progress(run)
    return run.scores


def run_for_staff(run_id) -> Run:
    run = Run.objects.select_related("model", "benchmark").filter(pk=run_id).first()
    if run is None:
        raise NotFound("No such run.", field="run")
    return run
