"""The inference of one batch of a run: what the batch is missing is asked of the run's model (requests in
flight for an endpoint, chunks for a batch generator, one at a time otherwise) and stored as predictions
about every second, the run's job advanced to the count stored; the last batch moves the run to scoring.
Sent by modeleval.tasks.infer_batch; a run is started, cancelled and resumed by modeleval/services.py."""

import time

from django.db import transaction

from benchmarks import protocols
from benchmarks.models import Item
from benchmarks.protocols import Variant
from core import jobs

from .. import dispatch
from ..clients.adapters import load_adapter, model_settings_key
from ..clients.endpoint_client import predictions_in_flight
from ..models import Prediction, Run
from ..prompting import generation, run_inputs
from ..prompting.prompts import InferenceRequest, template_for
from .run_options import item_variants, run_protocol


def report_inference(run: Run) -> None:
    """The run's job advanced to the predictions stored: a count, not a step, so a redelivered batch
    (whose predictions were stored already) counts nothing twice."""
    if run.job_id:
        errors = run.predictions.exclude(error="").count()
        jobs.advance_job(run.job_id, done=run.predictions.count(),
                         message=f"Inferring{f' ({errors} failed, scored as wrong)' if errors else ''}")


FLUSH_EVERY_S = 1.0  # a crash loses at most about this much inference work
FLUSH_EVERY_N = 100


def infer_items(run_id: int, item_ids: list[int], on_write=None) -> int:
    """Predict what one batch is missing; returns how many predictions were written.
    Safe to repeat: the unique constraint and the 'missing only' filter make retries no-ops.
    `on_write(n)` is told each time n predictions are stored (the batch's heartbeat record)."""
    run = Run.objects.select_related("model", "prompt_template").filter(pk=run_id).first()
    if run is None or run.status != Run.Status.RUNNING:
        return 0
    # The job runs from its first batch on: queued while its batches wait for a GPU worker, so the stale
    # sweep (core.jobs.fail_stalled_jobs) never fails a run that waits behind others. (Runs started before
    # runs had jobs have none.)
    if run.job_id and jobs.start_job(run.job_id, total=run.total) is not None:
        report_inference(run)  # a resumed run starts from the predictions it has
    done = set(run.predictions.filter(item_id__in=item_ids).values_list("item_id", "variant", "repeat"))
    protocol = run_protocol(run)
    items = (
        Item.objects.filter(pk__in=item_ids).select_related("scene", "change")
        .prefetch_related("scene__world_frames").order_by("pk")
    )
    adapter = load_adapter(run.model_id, model_settings_key(run.model), run.benchmark_id)
    work = [
        (item, variant, repeat)
        for item in items
        for variant in item_variants(protocol, item.choices, item.tags)
        for repeat in range(run.repeats)
        if (item.pk, variant.name, repeat) not in done
    ]
    # An endpoint keeps requests in flight; batch generators get chunks of `generation_batch`.
    chunk = max(int(run.model.config.get("generation_batch", 1)) if hasattr(adapter, "answer_batch") else 1, 1)
    predicted = (predictions_in_flight(adapter, run, work, _request, _prediction) if hasattr(adapter, "answers_in_flight")
                 else (_predict_chunk(adapter, run, work[i : i + chunk]) for i in range(0, len(work), chunk)))
    pending, written, last_flush = [], 0, time.monotonic()
    for predictions in predicted:
        pending += predictions
        # Fast adapters write in chunks; slow ones (real models) about every second, with live progress.
        if len(pending) >= FLUSH_EVERY_N or time.monotonic() - last_flush >= FLUSH_EVERY_S:
            written += _flush(pending, on_write)
            pending, last_flush = [], time.monotonic()
            report_inference(run)
            if not Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).exists():
                predicted.close()  # cancelled mid-batch: stop, with what is in flight; keep what is stored
                return written
    written += _flush(pending, on_write)
    report_inference(run)
    _finish_inference_when_complete(run_id)
    return written


def _flush(predictions: list[Prediction], on_write=None) -> int:
    Prediction.objects.bulk_create(predictions, ignore_conflicts=True)
    if on_write is not None and predictions:
        on_write(len(predictions))
    return len(predictions)


def _request(adapter, run: Run, item: Item, variant: Variant, repeat: int) -> InferenceRequest:
    """The prompt, stimulus and settings (with the repeat's seed); an adapter that reads no prompt
    (recorded outputs) gets the options only."""
    if getattr(adapter, "reads_prompts", True):
        seed = generation.run_seed(run, item, variant.name, repeat)
        return run_inputs.request(run, template_for(run, item), item, variant,
                                  {**run.settings, **({"seed": seed} if seed is not None else {})})
    return InferenceRequest(prompt="", choices=protocols.shown_choices(item.choices, variant), variant=variant.name)


def _prediction(run: Run, item: Item, variant: Variant, repeat: int, **fields) -> Prediction:
    return Prediction(run=run, item=item, variant=variant.name, repeat=repeat, visual_input=run.visual_input,
                      seed=generation.run_seed(run, item, variant.name, repeat), **fields)


def _predict(adapter, run: Run, item: Item, variant: Variant, repeat: int) -> Prediction:
    prediction = _prediction(run, item, variant, repeat)
    started = time.monotonic()
    try:
        request = _request(adapter, run, item, variant, repeat)
        prediction.prompt_sha256 = request.prompt_sha256 if request.prompt else ""
        prediction.output = adapter.answer(request, item, repeat)
    except Exception as exc:  # one bad item must not stop the run; record why, never a silent fallback
        prediction.error = f"{type(exc).__name__}: {exc}"
    prediction.latency_ms = int((time.monotonic() - started) * 1000)
    return prediction


def _predict_chunk(adapter, run: Run, work: list[tuple[Item, Variant, int]]) -> list[Prediction]:
    if len(work) == 1:
        return [_predict(adapter, run, *work[0])]
    ready, failed = [], []
    for item, variant, repeat in work:
        try:
            ready.append((item, variant, repeat, _request(adapter, run, item, variant, repeat)))
        except Exception as exc:  # a missing stimulus fails this item only
            failed.append(_prediction(run, item, variant, repeat, error=f"{type(exc).__name__}: {exc}"))
    if not ready:
        return failed
    started = time.monotonic()
    try:
        outputs = adapter.answer_batch([r for *_, r in ready], [i for i, *_ in ready], [k for _, _, k, _ in ready])
    except Exception:  # find the item at fault: one at a time, each failure recorded on its own item
        return failed + [_predict(adapter, run, item, variant, repeat) for item, variant, repeat, _ in ready]
    latency = int((time.monotonic() - started) * 1000 / len(ready))
    return failed + [
        _prediction(run, item, variant, repeat, prompt_sha256=request.prompt_sha256, output=output,
                    latency_ms=latency)
        for (item, variant, repeat, request), output in zip(ready, outputs, strict=True)
    ]


def _finish_inference_when_complete(run_id: int) -> None:
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run_id)
        if run.status != Run.Status.RUNNING or run.predictions.count() < run.total:
            return
        run.move_to(Run.Status.SCORING)
        run.save(update_fields=["status"])
        if run.job_id:
            transaction.on_commit(lambda: jobs.advance_job(run.job_id, done=run.total, message="Scoring …"))
        transaction.on_commit(lambda: dispatch.send_scoring(run_id))
