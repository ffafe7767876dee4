"""Model runs: launch over a benchmark's approved items, infer in batches on the gpu queue,
record one prediction per (run, item, variant, repeat), push progress, then score. A run can
be cancelled and resumed; resuming infers only what is missing."""

import json
import re
import time

from django.db import connection, transaction
from django.utils import timezone

import scoring
from benchmarks import protocols
from benchmarks.broadcast import send_to_group
from benchmarks.errors import Conflict, DomainError, NotFound
from benchmarks.models import Benchmark, Item
from benchmarks.protocols import Protocol, Variant
from benchmarks.services import gold_row
from benchmarks.validation import whole_number
from scoring.tables import breakdowns

from .adapters import load_adapter
from .models import ModelSpec, Prediction, Run
from .prompts import build_request, latest_template

RANDOM_BASELINE_NAME = "Random baseline (seed 0)"
MAX_REPEATS = 10


def ensure_baseline_model() -> ModelSpec:
    model, _ = ModelSpec.objects.get_or_create(
        name=RANDOM_BASELINE_NAME, defaults={"adapter": ModelSpec.Adapter.RANDOM_BASELINE, "seed": 0}
    )
    return model


def model_settings_key(model: ModelSpec) -> str:
    return json.dumps([model.adapter, model.modality, model.withhold_stimulus, model.seed, model.max_new_tokens,
                       model.temperature, model.config], sort_keys=True, default=str)


def item_variants(protocol: Protocol, choices, tags) -> list[Variant]:
    return protocols.variants(protocol, len(choices), protocols.flip_rule(tags))


# CausalSpatial writes its options into the question ("(A) ... (B) ..."): rotating the stored
# options would not change what the model reads.
_OPTIONS_IN_QUESTION = re.compile(r"\(A\)")


def _check_protocol(protocol: Protocol, model: ModelSpec, items: list[tuple]) -> None:
    """Refuse a protocol the items or the model cannot carry, naming what is wrong."""
    if protocol.flip and model.modality == ModelSpec.Modality.CAPTION:
        raise DomainError("Flipped images need a model that is shown images, not a caption.", field="protocol")
    for pk, question, choices, answers, tags in items:
        if protocol.circular and choices and _OPTIONS_IN_QUESTION.search(question):
            raise DomainError(f"Item #{pk} lists its options inside the question, so they cannot be rotated.",
                              field="protocol")
        for variant in item_variants(protocol, choices, tags):
            try:
                protocols.variant_answer(choices, answers, variant, protocols.flip_rule(tags))
            except DomainError as error:
                raise DomainError(f"Item #{pk}: {error.message}", field="protocol") from None


def launch_run(model_id, benchmark: Benchmark, created_by, batch_size=8, repeats=1, condition="main",
               protocol=None) -> Run:
    """A run of the model over the benchmark's approved items: one prediction per item, protocol
    variant (benchmarks.protocols: rotated options, mirrored image) and repeat."""
    model = ModelSpec.objects.filter(pk=model_id).first() if str(model_id).isdigit() else None
    if model is None:
        raise DomainError("Choose a registered model.", field="model")
    batch_size = whole_number(batch_size, "batch_size", 1, 256)
    repeats = whole_number(repeats, "repeats", 1, MAX_REPEATS)
    protocol = Protocol.from_data(protocol)
    template = latest_template(benchmark.family, condition)
    if template is None and condition != "main":
        raise DomainError(f"No prompt template '{condition}' for {benchmark.get_family_display()}.",
                          field="condition")
    rows = list(
        Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).order_by("pk")
        .values_list("pk", "question", "choices", "answers", "tags")
    )
    if not rows:
        raise DomainError("This benchmark has no approved items to evaluate.", field="benchmark")
    _check_protocol(protocol, model, rows)
    items = [pk for pk, *_ in rows]
    variant_count = sum(len(item_variants(protocol, choices, tags)) for _, _, choices, _, tags in rows)
    with transaction.atomic():
        run = Run.objects.create(
            model=model, benchmark=benchmark, created_by=created_by, batch_size=batch_size, repeats=repeats,
            prompt_template=template, total=variant_count * repeats, protocol=protocol.as_data(),
        )
        run.items.set(items)
        run.move_to(Run.Status.RUNNING)
        run.save(update_fields=["status"])
        _enqueue_batches(run, items)
    return run


def _enqueue_batches(run: Run, item_ids: list[int]) -> None:
    from . import tasks  # tasks import this module

    size = run.batch_size
    batches = [item_ids[i : i + size] for i in range(0, len(item_ids), size)]
    transaction.on_commit(lambda: [tasks.infer_batch.delay(run.pk, batch) for batch in batches])


@transaction.atomic
def cancel_run(run_id) -> Run:
    run = Run.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise NotFound("No such run.", field="run")
    run.move_to(Run.Status.CANCELLED)
    run.save(update_fields=["status"])
    return run


@transaction.atomic
def resume_run(run_id) -> Run:
    """Put a cancelled or failed run back to work on the predictions it is missing."""
    run = Run.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise NotFound("No such run.", field="run")
    if run.status not in (Run.Status.CANCELLED, Run.Status.FAILED):
        raise Conflict(f"Only cancelled or failed runs can be resumed; this one is {run.status}.", field="run")
    run.move_to(Run.Status.RUNNING)
    run.save(update_fields=["status"])
    _enqueue_batches(run, _incomplete_items(run))
    return run


def _incomplete_items(run: Run) -> list[int]:
    """Items with fewer predictions than their variants x repeats."""
    from django.db.models import Count

    protocol = Protocol.from_data(run.protocol)
    counts = dict(run.predictions.values("item_id").annotate(n=Count("id")).values_list("item_id", "n"))
    return [
        pk for pk, choices, tags in run.items.order_by("pk").values_list("pk", "choices", "tags")
        if counts.get(pk, 0) < len(item_variants(protocol, choices, tags)) * run.repeats
    ]


def run_progress(run: Run) -> dict:
    done = run.predictions.count()
    return {
        "run": run.pk,
        "status": run.status,
        "done": done,
        "total": run.total,
        "errors": run.predictions.exclude(error="").count(),
        "scores": run.scores.get("overall") if run.scores else None,
        "summary": run_summary(run),
    }


def publish_progress(run: Run) -> None:
    send_to_group(f"run-{run.pk}", {"type": "run.progress", "progress": run_progress(run)})


FLUSH_EVERY_S = 1.0  # a crash loses at most about this much inference work
FLUSH_EVERY_N = 100


def infer_items(run_id: int, item_ids: list[int]) -> int:
    """Predict what one batch is missing; returns how many predictions were written.
    Safe to repeat: the unique constraint and the 'missing only' filter make retries no-ops."""
    run = Run.objects.select_related("model", "prompt_template").filter(pk=run_id).first()
    if run is None or run.status != Run.Status.RUNNING:
        return 0
    done = set(run.predictions.filter(item_id__in=item_ids).values_list("item_id", "variant", "repeat"))
    protocol = Protocol.from_data(run.protocol)
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
    # Adapters that can generate for several prompts at once get chunks of `generation_batch`.
    chunk = int(run.model.config.get("generation_batch", 1)) if hasattr(adapter, "answer_batch") else 1
    pending, written, last_flush = [], 0, time.monotonic()
    for start in range(0, len(work), max(chunk, 1)):
        pending += _predict_chunk(adapter, run, work[start : start + max(chunk, 1)])
        # Fast adapters write in chunks; slow ones (real models) about every second.
        if len(pending) >= FLUSH_EVERY_N or time.monotonic() - last_flush >= FLUSH_EVERY_S:
            written += _flush(pending)
            pending, last_flush = [], time.monotonic()
            if not Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).exists():
                return written  # cancelled mid-batch: stop, keep what is stored
    written += _flush(pending)
    publish_progress(run)
    _finish_inference_when_complete(run_id)
    return written


def _flush(predictions: list[Prediction]) -> int:
    Prediction.objects.bulk_create(predictions, ignore_conflicts=True)
    return len(predictions)


def _predict(adapter, run: Run, item: Item, variant: Variant, repeat: int) -> Prediction:
    prediction = Prediction(run=run, item=item, variant=variant.name, repeat=repeat)
    started = time.monotonic()
    try:
        request = build_request(run.model, run.prompt_template, item, variant)
        prediction.prompt_sha256 = request.prompt_sha256
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
            ready.append((item, variant, repeat, build_request(run.model, run.prompt_template, item, variant)))
        except Exception as exc:  # a missing stimulus fails this item only
            failed.append(Prediction(run=run, item=item, variant=variant.name, repeat=repeat,
                                     error=f"{type(exc).__name__}: {exc}"))
    if not ready:
        return failed
    started = time.monotonic()
    try:
        outputs = adapter.answer_batch([r for *_, r in ready], [i for i, *_ in ready], [k for _, _, k, _ in ready])
    except Exception:  # find the item at fault: one at a time, each failure recorded on its own item
        return failed + [_predict(adapter, run, item, variant, repeat) for item, variant, repeat, _ in ready]
    latency = int((time.monotonic() - started) * 1000 / len(ready))
    return failed + [
        Prediction(run=run, item=item, variant=variant.name, repeat=repeat, prompt_sha256=request.prompt_sha256,
                   output=output, latency_ms=latency)
        for (item, variant, repeat, request), output in zip(ready, outputs, strict=True)
    ]


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
        items = {i.pk: i for i in run.items.all()}
        protocol = Protocol.from_data(run.protocol)
        # One gold line per item variant, ids suffixed as the 3DSRBench scorer groups them.
        gold = [
            protocols.variant_gold(gold_row(item), variant)
            for item in items.values()
            for variant in item_variants(protocol, item.choices, item.tags)
        ]
        rows = [
            protocols.variant_prediction(items[item_id].scoring_id, output, items[item_id].choices,
                                         Variant.parse(variant), repeat)
            for item_id, variant, output, repeat in run.predictions.filter(error="").values_list(
                "item_id", "variant", "output", "repeat"
            )
        ]
        # Broken down for the family's paper table and radar chart; SBERT needs a sentence-embedding
        # model, so it is not loaded on every run.
        family = run.benchmark.family
        run.scores = scoring.score(family, gold, rows, by=breakdowns(family), sbert=False, rows=True)
        _store_extractions(run, items, run.scores.pop("rows"))
        run.scores["inference_errors"] = run.predictions.exclude(error="").count()
        run.move_to(Run.Status.FINISHED)
        run.finished_at = timezone.now()
        run.save(update_fields=["scores", "status", "finished_at"])
    publish_progress(run)
    return run.scores


def _store_extractions(run: Run, items: dict[int, Item], read: list[dict]) -> None:
    """Each scored prediction's extracted answer and how it was read; scoring again writes the same
    values. One UPDATE per row sent as a batch (psycopg pipelines executemany): `bulk_update` builds
    a CASE expression per row in Python and took 30 s for 10,000 predictions."""
    by_row = {(row["id"], row["repeat"]): row for row in read}
    params = []
    for pk, item_id, variant, repeat in run.predictions.filter(error="").values_list(
        "pk", "item_id", "variant", "repeat"
    ):
        row = by_row.get((protocols.row_id(items[item_id].scoring_id, Variant.parse(variant)), repeat))
        if row is not None:
            params.append((row["answer"], row["method"], pk))
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {quote(Prediction._meta.db_table)} SET {quote('extracted')} = %s, "
            f"{quote('extraction')} = %s WHERE {quote('id')} = %s",
            params,
        )


def run_summary(run: Run) -> dict | None:
    """Beside a scored run's metrics: items whose inference failed (scored as wrong) and how many
    answers were read by rule, by judge, or not at all."""
    if not run.scores:
        return None
    return {"inference_errors": run.scores.get("inference_errors", 0), "extraction": run.scores.get("extraction")}


def run_for_staff(run_id) -> Run:
    run = Run.objects.select_related("model", "benchmark").filter(pk=run_id).first()
    if run is None:
        raise NotFound("No such run.", field="run")
    return run


def run_predictions(run: Run):
    return run.predictions.select_related("item").order_by("item_id", "variant", "repeat")


def prediction_rows(run: Run, predictions):
    """Per-item drill-down: the stored output, the answer read from it, the gold answer and the
    item's own score; the prompt is named by its hash and the run's template version."""
    template = str(run.prompt_template) if run.prompt_template_id else ""
    for prediction in predictions:
        item = prediction.item
        variant = Variant.parse(prediction.variant)
        single = scoring.score(
            run.benchmark.family, [protocols.variant_gold(gold_row(item), variant)],
            [protocols.variant_prediction(item.scoring_id, prediction.output, item.choices, variant)]
            if not prediction.error else [], sbert=False,
        )
        yield {
            "item": item.pk,
            "variant": prediction.variant,
            "repeat": prediction.repeat,
            "question": item.question,
            "gold": item.answers,
            "output": prediction.output,
            "error": prediction.error,
            "extracted": prediction.extracted,
            "extraction": prediction.extraction,
            "prompt_sha256": prediction.prompt_sha256,
            "prompt_template": template,
            "latency_ms": prediction.latency_ms,
            "scores": single["overall"],
        }


def score_prediction_file(family: str, items, lines) -> dict:
    """Score a researcher's predictions (JSONL lines in the scorer's prediction format) against items."""
    gold = [gold_row(item) for item in items]
    return scoring.score(family, gold, list(lines), sbert=False)


def complete(model: ModelSpec, prompt: str) -> str:
    """One text prompt through a language model's adapter (for model-drafted raw items).
    Only endpoint models write text; the baselines answer benchmark items, not prompts."""
    from .adapters import OpenAICompatible
    from .prompts import InferenceRequest

    adapter = load_adapter(model.pk, model_settings_key(model), 0)
    if not isinstance(adapter, OpenAICompatible):
        raise DomainError("Drafting needs a language model (an OpenAI-compatible endpoint).", field="model")
    return adapter.answer(InferenceRequest(prompt=prompt), item=None)
