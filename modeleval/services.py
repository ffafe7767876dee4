"""Model runs: launch over a benchmark's approved items, infer in batches on the gpu queue,
record one prediction per (run, item, variant, repeat), push progress, then score. A run can
be cancelled and resumed; resuming infers only what is missing."""

import dataclasses
import hashlib
import io
import json
import re
import time
from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import Max, Q
from django.utils import timezone

import scoring
from benchmarks import protocols
from benchmarks.models import Benchmark, Item
from benchmarks.protocols import Protocol, Variant
from benchmarks.services import gold_row
from core.broadcast import send_to_group
from core.errors import Conflict, DomainError, NotFound
from core.validation import whole_number
from scoring import predfiles
from scoring.tables import breakdowns

from . import secrets as model_secrets
from .adapters import load_adapter
from .models import ModelSpec, Prediction, RecordedOutput, Run
from .prompts import InferenceRequest, build_request, latest_template, template_for

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


def _check_imported_variants(protocol: Protocol, approved) -> None:
    """Items imported as rotated copies (`X-1`) or mirrored rows (`X-flip`) already are the protocol's
    variants: running the protocol over them again would give ids that collide (`X` rotated is `X-1`)."""
    if protocol.circular:
        rotated = approved.filter(external_id__regex=r"-[0-9]$").values_list("external_id", flat=True).first()
        if rotated:
            raise DomainError(f"The items are stored with their rotations (e.g. {rotated}), so CircularEval "
                              "comes from their ids: launch the run without 'circular'.", field="protocol")
    if protocol.flip:
        flipped = approved.filter(**{f"tags__{protocols.IMAGE_VARIANT}": protocols.FLIPPED})
        flipped = flipped.values_list("external_id", flat=True).first()
        if flipped is not None:
            raise DomainError(f"The items include their mirrored rows (e.g. {flipped}), so FlipEval comes from "
                              "their ids: launch the run without 'flip'.", field="protocol")


# Provider parameters a run may set (Run.settings), each with its check.
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
MAX_EXAMPLES = 20


def _checked_settings(settings) -> dict:
    settings = settings or {}
    if not isinstance(settings, dict):
        raise DomainError("Provider parameters are an object.", field="settings")
    unknown = sorted(set(settings) - {"temperature", "max_tokens", "reasoning_effort", "thinking_budget"})
    if unknown:
        raise DomainError(f"Unknown provider parameter(s): {', '.join(unknown)}; known: temperature, max_tokens, "
                          "reasoning_effort, thinking_budget.", field="settings")
    checked = {}
    if "temperature" in settings:
        value = settings["temperature"]
        if type(value) not in (int, float) or not 0 <= value <= 2:
            raise DomainError("temperature is a number from 0 to 2.", field="settings")
        checked["temperature"] = float(value)
    if "max_tokens" in settings:
        checked["max_tokens"] = whole_number(settings["max_tokens"], "settings", 1, 262_144)
    if "reasoning_effort" in settings:
        if settings["reasoning_effort"] not in REASONING_EFFORTS:
            raise DomainError(f"reasoning_effort is one of {', '.join(REASONING_EFFORTS)}.", field="settings")
        checked["reasoning_effort"] = settings["reasoning_effort"]
    if "thinking_budget" in settings:
        checked["thinking_budget"] = whole_number(settings["thinking_budget"], "settings", 0, 262_144)
    return checked


def _checked_subset(subset) -> dict:
    """{tag: [values]}: items whose tag has one of the values (every tag named must match)."""
    subset = subset or {}
    if not isinstance(subset, dict) or not all(
        isinstance(tag, str) and tag and isinstance(values, list) and values
        and all(isinstance(v, str | int) and not isinstance(v, bool) for v in values)
        for tag, values in subset.items()
    ):
        raise DomainError('The subset is {tag: [values]}, e.g. {"level": ["L1_single"]}.', field="subset")
    return {tag: [str(v) for v in values] for tag, values in subset.items()}


def _subset_filter(items, subset: dict):
    for tag, values in subset.items():
        items = items.filter(**{f"tags__{tag}__in": values})
    return items


def _checked_prompts(prompts, family: str) -> dict:
    """{"by": tag, "templates": {value: condition}} resolved to the latest version of each condition."""
    if not prompts:
        return {}
    if not isinstance(prompts, dict) or not isinstance(prompts.get("by"), str) or not prompts["by"] or not (
        isinstance(prompts.get("templates"), dict) and prompts["templates"]
    ):
        raise DomainError('Prompts per tag are {"by": tag, "templates": {value: condition}}.', field="prompts")
    resolved = {}
    for value, condition in prompts["templates"].items():
        template = latest_template(family, condition) if isinstance(condition, str) else None
        if template is None:
            raise DomainError(f"No prompt template {condition!r} for {family} (for {prompts['by']} {value}).",
                              field="prompts")
        resolved[str(value)] = {"id": template.pk, "condition": template.condition, "version": template.version}
    return {"by": prompts["by"], "templates": resolved}


def _checked_examples(examples) -> list[dict]:
    examples = examples or []
    if not isinstance(examples, list) or len(examples) > MAX_EXAMPLES or not all(
        isinstance(e, dict) and isinstance(e.get("question"), str) and e["question"].strip()
        and isinstance(e.get("answer"), str) and e["answer"].strip() for e in examples
    ):
        raise DomainError(f"In-context examples are a list of at most {MAX_EXAMPLES} "
                          "{question, answer} texts.", field="examples")
    return [{"question": e["question"].strip(), "answer": e["answer"].strip()} for e in examples]


def _checked_judge(judge_model, benchmark: Benchmark) -> ModelSpec | None:
    if judge_model in (None, ""):
        return None
    judge = ModelSpec.objects.filter(pk=judge_model).first() if str(judge_model).isdigit() else None
    if judge is None or judge.adapter != ModelSpec.Adapter.OPENAI_COMPATIBLE:
        raise DomainError("The judge is a registered OpenAI-compatible model.", field="judge_model")
    if benchmark.family != "3dsrbench":
        raise DomainError("A judge reads choices of 3DSRBench runs only.", field="judge_model")
    model_secrets.check_model_config(judge.adapter, judge.config)
    return judge


def launch_run(model_id, benchmark: Benchmark, created_by, batch_size=8, repeats=1, condition="main",
               protocol=None, subset=None, prompts=None, settings=None, examples=None, judge_model=None) -> Run:
    """A run of the model over the benchmark's approved items (or those of `subset`, by tags): one
    prediction per item, protocol variant (benchmarks.protocols: rotated options, mirrored image) and
    repeat. `prompts` names a template per tag value (Spatial457's per-level prompts), `settings` the
    provider parameters, `examples` in-context examples, `judge_model` the model reading 3DSRBench
    choices the rules cannot; all are recorded on the run."""
    model = ModelSpec.objects.filter(pk=model_id).first() if str(model_id).isdigit() else None
    if model is None:
        raise DomainError("Choose a registered model.", field="model")
    model_secrets.check_model_config(model.adapter, model.config)  # a row stored before the rule
    recorded_for = (model.config or {}).get("benchmark")
    if model.adapter == ModelSpec.Adapter.RECORDED_OUTPUTS and recorded_for != benchmark.slug:
        raise DomainError(f"{model.name} holds outputs recorded for {recorded_for}, not {benchmark.slug}.",
                          field="model")
    batch_size = whole_number(batch_size, "batch_size", 1, 256)
    repeats = whole_number(repeats, "repeats", 1, MAX_REPEATS)
    protocol = Protocol.from_data(protocol)
    template = latest_template(benchmark.family, condition)
    if template is None and condition != "main":
        raise DomainError(f"No prompt template '{condition}' for {benchmark.get_family_display()}.",
                          field="condition")
    subset = _checked_subset(subset)
    prompts = _checked_prompts(prompts, benchmark.family)
    settings = _checked_settings(settings)
    examples = _checked_examples(examples)
    judge = _checked_judge(judge_model, benchmark)
    approved = _subset_filter(Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED), subset)
    rows = list(approved.order_by("pk").values_list("pk", "question", "choices", "answers", "tags"))
    if not rows:
        if subset:
            raise DomainError("No approved item of this benchmark is in the subset.", field="subset")
        raise DomainError("This benchmark has no approved items to evaluate.", field="benchmark")
    _check_protocol(protocol, model, rows)
    _check_imported_variants(protocol, approved)
    items = [pk for pk, *_ in rows]
    variant_count = sum(len(item_variants(protocol, choices, tags)) for _, _, choices, _, tags in rows)
    with transaction.atomic():
        run = Run.objects.create(
            model=model, benchmark=benchmark, created_by=created_by, batch_size=batch_size, repeats=repeats,
            prompt_template=template, total=variant_count * repeats, protocol=protocol.as_data(),
            subset=subset, prompt_templates=prompts, settings=settings, examples=examples, judge_model=judge,
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

    def send():
        from kombu.exceptions import OperationalError

        try:
            for batch in batches:
                tasks.infer_batch.delay(run.pk, batch)
        except OperationalError:
            # The broker is down: no batch may be waited for that was never sent. The run fails (it can
            # be resumed: only missing predictions are inferred) and the caller answers 503 (core/api.py).
            with transaction.atomic():
                failed = Run.objects.select_for_update().get(pk=run.pk)
                if failed.status == Run.Status.RUNNING:
                    failed.move_to(Run.Status.FAILED)
                    failed.save(update_fields=["status"])
            raise

    transaction.on_commit(send)


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
    model_secrets.check_model_config(run.model.adapter, run.model.config)
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


def infer_items(run_id: int, item_ids: list[int], on_write=None) -> int:
    """Predict what one batch is missing; returns how many predictions were written.
    Safe to repeat: the unique constraint and the 'missing only' filter make retries no-ops.
    `on_write(n)` is told each time n predictions are stored (the batch's heartbeat record)."""
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
            written += _flush(pending, on_write)
            pending, last_flush = [], time.monotonic()
            if not Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).exists():
                return written  # cancelled mid-batch: stop, keep what is stored
    written += _flush(pending, on_write)
    publish_progress(run)
    _finish_inference_when_complete(run_id)
    return written


def _flush(predictions: list[Prediction], on_write=None) -> int:
    Prediction.objects.bulk_create(predictions, ignore_conflicts=True)
    if on_write is not None and predictions:
        on_write(len(predictions))
    return len(predictions)


def _request(adapter, run: Run, item: Item, variant: Variant) -> InferenceRequest:
    """The prompt and stimulus; an adapter that reads no prompt (recorded outputs) gets the options only."""
    if getattr(adapter, "reads_prompts", True):
        return build_request(run.model, template_for(run, item), item, variant, run.examples, run.settings)
    return InferenceRequest(prompt="", choices=protocols.shown_choices(item.choices, variant), variant=variant.name)


def _predict(adapter, run: Run, item: Item, variant: Variant, repeat: int) -> Prediction:
    prediction = Prediction(run=run, item=item, variant=variant.name, repeat=repeat)
    started = time.monotonic()
    try:
        request = _request(adapter, run, item, variant)
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
            ready.append((item, variant, repeat, build_request(run.model, template_for(run, item), item, variant,
                                                               run.examples, run.settings)))
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


def scoring_lines(run: Run, items: dict[int, Item], predictions=None) -> tuple[list[dict], list[dict]]:
    """A run's gold and prediction lines on `items` (pk -> Item): one gold line per item variant of
    the run's protocol, ids suffixed as the 3DSRBench scorer groups them, and one line per stored
    prediction without an inference error (every variant and repeat). `predictions` narrows the
    predictions read (default: all of the run's); those of other items are left out."""
    protocol = Protocol.from_data(run.protocol)
    gold = [
        protocols.variant_gold(gold_row(item), variant)
        for item in items.values()
        for variant in item_variants(protocol, item.choices, item.tags)
    ]
    predictions = run.predictions.all() if predictions is None else predictions
    rows = [
        protocols.variant_prediction(items[item_id].scoring_id, output, items[item_id].choices,
                                     Variant.parse(variant), repeat)
        for item_id, variant, output, repeat in predictions.filter(error="").values_list(
            "item_id", "variant", "output", "repeat"
        )
        if item_id in items
    ]
    return gold, rows


SCORING_STALLED_S = 60  # scoring a run takes seconds; one still waiting after this lost its task


def stalled_scoring_runs() -> list[int]:
    """Runs in `scoring` whose last prediction is older than SCORING_STALLED_S: their `score_run` was
    never sent (the broker was down) or its worker died. Sending it again is safe (it checks the status
    under a row lock)."""
    cutoff = timezone.now() - timedelta(seconds=SCORING_STALLED_S)
    return list(
        Run.objects.filter(status=Run.Status.SCORING).annotate(last=Max("predictions__created_at"))
        .filter(Q(last__lt=cutoff) | Q(last=None)).values_list("pk", flat=True)
    )


def score_run(run_id: int) -> dict | None:
    with transaction.atomic():
        run = Run.objects.select_for_update().select_related("benchmark").filter(pk=run_id).first()
        if run is None or run.status != Run.Status.SCORING:
            return None
        items = {i.pk: i for i in run.items.all()}
        gold, rows = scoring_lines(run, items)
        # Broken down for the family's paper table and radar chart; SBERT needs a sentence-embedding
        # model, so it is not loaded on every run.
        family = run.benchmark.family
        run.scores = scoring.score(family, gold, rows, by=breakdowns(family), sbert=False, rows=True,
                                   judge=run_judge(run))
        _store_extractions(run, items, run.scores.pop("rows"))
        run.scores["inference_errors"] = run.predictions.exclude(error="").count()
        run.move_to(Run.Status.FINISHED)
        run.finished_at = timezone.now()
        run.save(update_fields=["scores", "status", "finished_at"])
    publish_progress(run)
    return run.scores


def rescore_run(run: Run, by=(), profile: str | None = None, sbert: bool | None = None) -> dict:
    """A run's gold and predictions scored again as `python -m scoring` would score them (`sbert=None`:
    SBERT exactly when the CLI computes it), with the caller's breakdowns and profile."""
    gold, rows = scoring_lines(run, {i.pk: i for i in run.items.all()})
    return scoring.score(run.benchmark.family, gold, rows, profile, list(by), sbert=sbert, judge=run_judge(run))


# VLMEvalKit's MMBench choice-extraction prompt (utils/multiple_choice.py build_prompt), which 3DSRBench's
# official evaluation uses when no option can be read from an output by rule.
JUDGE_PROMPT = (
    "You are an AI assistant who will help me to match an answer with several options of a single-choice "
    "question. You are provided with a question, several options, and an answer, and you need to find which "
    "option is most similar to the answer. If the meaning of all options are significantly different from the "
    "answer, output Z. Your should output a single uppercase character in A, B, C, D (if they are valid "
    "options), and Z. \n"
    "Example 1: \nQuestion: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: a cute teddy bear\nYour output: A\n"
    "Example 2: \nQuestion: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: Spider\nYour output: Z\n"
    "Example 3: \nQuestion: {question}?\nOptions: {options}\nAnswer: {output}\nYour output: "
)
JUDGE_TRIES = 3  # VLMEvalKit asks again when the judge's own reply names no option


def run_judge(run: Run):
    """The scorer's judge(question, {letter: option text}, output) -> letter or None for a run that
    names a judge model: the MMBench extraction prompt sent to it, its reply read by rule."""
    if not run.judge_model_id:
        return None
    from scoring.threedsrbench import infer_option, infer_text

    adapter = load_adapter(run.judge_model_id, model_settings_key(run.judge_model), run.benchmark_id)

    def judge(question: str, options: dict[str, str], output: str) -> str | None:
        prompt = JUDGE_PROMPT.format(question=question.rstrip("?"), output=output,
                                     options=" ".join(f"{letter}. {text}" for letter, text in options.items()))
        for _ in range(JUDGE_TRIES):
            try:
                reply = adapter.answer(InferenceRequest(prompt=prompt, params={"temperature": 0.0}), item=None)
            except Exception:  # an unreachable judge leaves the answer unread (failed), never a guess
                return None
            letter = infer_option(reply, options) or infer_text(reply, options)
            if letter is not None:
                return letter
        return None

    return judge


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
    item's own score; the prompt is named by its hash and the template version it came from (the
    run's, or the one named for the item's tag value)."""
    for prediction in predictions:
        item = prediction.item
        template = str(template_for(run, item) or "")
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


# --- Prediction files: outputs produced elsewhere, keyed to the platform's items ----------------------
#
# scoring.predfiles reads each tool's published shape into records with key candidates (the benchmark's
# own ids, then a VLMEvalKit `index`). A key names an item by its external id, else by its source index
# (an `index` is tried against source indexes first), else by its release id when it has no external id;
# an id with a protocol suffix (`X-1`, `X-flip`) that names no item is that variant of item X. Records are
# replayed to the scorer in file order, so its result -- errors and `n_dropped` included -- is what
# `python -m scoring` prints for the same gold and the same lines keyed by scoring id.

_VARIANT_SUFFIX = re.compile(r"^(?P<base>.+?)-(?P<variant>flip(?:-[1-9]\d*)?|[1-9]\d*)$")
_EVERY_VARIANT = Protocol(circular=True, flip=True)


class AmbiguousKey(ValueError):
    pass


class ItemKeys:
    """A benchmark's (or a release's) items by the keys prediction files carry."""

    def __init__(self, items):
        self.items = list(items)
        self.by_external, self.by_index, self.by_release, self.by_question_index = {}, {}, {}, {}
        for item in self.items:
            # Spatial457's question JSON numbers questions per level file (external id `L2_objects/0`):
            # a bare question_index names an item only where one level holds it
            question_index = (item.tags or {}).get("question_index")
            if question_index is not None:
                self.by_question_index.setdefault(str(question_index), []).append(item)
            if item.external_id:
                self.by_external.setdefault(item.external_id, []).append(item)
            else:
                self.by_release.setdefault(item.release_id, []).append(item)
            if item.source_index:
                self.by_index.setdefault(item.source_index, []).append(item)

    def find(self, field: str, value: str, tables=None) -> Item | None:
        if tables is None:
            index_first = field == predfiles.INDEX_FIELD
            tables = (self.by_index, self.by_external, self.by_release) if index_first else (
                self.by_external, self.by_index, self.by_release, self.by_question_index)
        for table in tables:
            found = table.get(value, [])
            if len(found) > 1:
                raise AmbiguousKey(f"{field} {value!r} names {len(found)} items "
                                   f"({', '.join(f'#{item.pk}' for item in found[:5])})")
            if found:
                return found[0]
        return None

    def resolve(self, keys) -> tuple[Item, Variant] | None:
        """The item (and protocol variant) the first key candidate that names one names."""
        for field, value in keys:
            item = self.find(field, value)
            if item is not None:
                return item, protocols.VANILLA
        for field, value in keys:
            match = _VARIANT_SUFFIX.match(value) if field != predfiles.INDEX_FIELD else None
            item = match and self.find(field, match["base"], (self.by_external, self.by_release))
            if item:
                variant = Variant.parse(match["variant"])
                if variant in item_variants(_EVERY_VARIANT, item.choices, item.tags):
                    return item, variant
        return None


@dataclass
class ResolvedLine:
    """One prediction line keyed by scoring id (`id` suffixed for a variant), with where it came from;
    `item` is None for a key that names no item (the line keeps its own id, so the scorer reports it)."""

    where: str
    line: object
    item: Item | None = None
    variant: Variant = protocols.VANILLA


def read_prediction_files(files: list[tuple[str, bytes]]) -> list:
    """Every record of the files in order, with the read errors where they occurred: a list of
    PredictionRecord and error strings. With several files, file k is repeat k (CausalSpatial's runs).
    Raises PredictionFileError naming the file that cannot be read at all."""
    events: list = []
    for number, (name, data) in enumerate(files):
        errors: list[str] = []
        label = "prediction" if len(files) == 1 else name
        try:
            if name.lower().endswith(".xlsx"):
                found = predfiles.table_records(workbook_rows(data), label, errors)
            else:
                found = predfiles.iter_records(data, name, errors, label)
            for record in found:
                events += errors
                errors.clear()
                if len(files) > 1:
                    record = _as_repeat(record, number, events)
                if record is not None:
                    events.append(record)
        except predfiles.PredictionFileError as error:
            raise predfiles.PredictionFileError(f"{name}: {error}") from None
        events += errors
    return events


def workbook_rows(data: bytes):
    """The first sheet of an .xlsx workbook (a VLMEvalKit result file), row by row, header first."""
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as error:  # zipfile, XML and openpyxl errors alike: not a readable workbook
        raise predfiles.PredictionFileError(f"not a readable .xlsx workbook ({type(error).__name__})") from None
    try:
        for row in workbook.worksheets[0].iter_rows(values_only=True):
            yield list(row)
    finally:
        workbook.close()


def _as_repeat(record, repeat: int, errors: list):
    if not isinstance(record.line, dict):
        return record
    if record.line.get("repeat", 0) != 0:
        errors.append(f"{record.where}: a file among several is one repeat, so its lines name no repeat; "
                      "left out")
        return None
    record.line = {**record.line, "repeat": repeat}
    return record


def resolve_predictions(items, events: list) -> list:
    """Records keyed to the items (`ResolvedLine`s), errors kept in place; an ambiguous key is an error
    naming it and its record is left out. See `ItemKeys` for how a key names an item."""
    keys = ItemKeys(items)
    resolved = []
    for event in events:
        if isinstance(event, str):
            resolved.append(event)
            continue
        try:
            found = keys.resolve(event.keys)
        except AmbiguousKey as error:
            resolved.append(f"{event.where}: {error}; left out")
            continue
        if found is None:
            line = event.line if not event.keys else {**event.line, "id": event.keys[0][1]}
            resolved.append(ResolvedLine(event.where, line))
            continue
        item, variant = found
        line = {**event.line, "id": protocols.row_id(item.scoring_id, variant)}
        if variant.rotation and "choices" not in line:
            line["choices"] = protocols.shown_choices(item.choices, variant)  # the order a run shows
        resolved.append(ResolvedLine(event.where, line, item, variant))
    return resolved


def file_protocol(resolved: list) -> Protocol:
    """The protocol a file's variant ids ask for (vanilla when every id names an item)."""
    variants = [entry.variant for entry in resolved if isinstance(entry, ResolvedLine) and entry.item]
    return Protocol(circular=any(v.rotation for v in variants), flip=any(v.flip for v in variants))


def gold_lines(items, protocol: Protocol | None = None) -> list[dict]:
    """The items' gold lines as `python -m scoring --gold` reads them, one per item variant."""
    protocol = protocol or Protocol()
    return [
        protocols.variant_gold(gold_row(item), variant)
        for item in items
        for variant in item_variants(protocol, item.choices, item.tags)
    ]


def score_predictions(family: str, items, files: list[tuple[str, bytes]], profile: str | None = None,
                      by=(), sbert: bool | None = None) -> dict:
    """Files of predictions scored against the items: the object `python -m scoring` prints for the
    items' gold lines and the file's lines keyed by scoring id (`n_dropped` counts the records left out:
    unreadable, invalid, duplicate, unknown or ambiguous ids). Items without a prediction are scored as
    wrong. Raises PredictionFileError for an unreadable file and ValueError for an unknown profile."""
    from scoring.engine import Source, get_family, score_records
    from scoring.family import Run as ScoringRun

    items = list(items)
    resolved = resolve_predictions(items, read_prediction_files(files))
    gold = gold_lines(items, file_protocol(resolved))
    run = ScoringRun(sbert=sbert)

    def prediction_lines():
        # errors join the scorer's list where they occurred, as the command line reads a file
        for entry in resolved:
            if isinstance(entry, str):
                run.errors.append(entry)
            else:
                yield entry.where, entry.line

    return score_records(get_family(family), Source(enumerate(gold, start=1), "gold line {}"),
                         Source(prediction_lines(), "{}"), profile, by, run)


def approved_items(benchmark: Benchmark):
    return Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).order_by("pk")


@dataclass
class RecordedFile:
    """Outputs read for a recorded-outputs model: {(scoring id, variant, repeat): output}, the records
    left out (unknown ids, invalid, duplicates: each an error string) and the run they ask for."""

    outputs: dict = dataclasses.field(default_factory=dict)
    problems: list[str] = dataclasses.field(default_factory=list)
    protocol: Protocol = dataclasses.field(default_factory=Protocol)
    repeats: int = 1


def read_recorded_outputs(benchmark: Benchmark, files: list[tuple[str, bytes]]) -> RecordedFile:
    """The outputs of the files for the benchmark's approved items, read as the scorer reads lines."""
    from scoring.records import RecordError, parse_prediction

    resolved = resolve_predictions(approved_items(benchmark), read_prediction_files(files))
    recorded = RecordedFile(protocol=file_protocol(resolved))
    for entry in resolved:
        if isinstance(entry, str):
            recorded.problems.append(entry)
            continue
        try:
            prediction = parse_prediction(entry.line)
        except RecordError as error:
            recorded.problems.append(f"{entry.where}: {error}")
            continue
        if entry.item is None:
            recorded.problems.append(f"{entry.where}: unknown id {prediction.id!r}")
            continue
        shown = protocols.shown_choices(entry.item.choices, entry.variant)
        if prediction.choices is not None and list(prediction.choices) != shown:
            recorded.problems.append(f"{entry.where}: options shown in an order of its own ('choices'), "
                                     "which a run cannot replay; left out")
            continue
        key = (entry.item.scoring_id, entry.variant.name, prediction.repeat)
        if key in recorded.outputs:
            recorded.problems.append(f"{entry.where}: duplicate prediction for id {prediction.id!r} repeat "
                                     f"{prediction.repeat}; the first is kept")
            continue
        recorded.outputs[key] = prediction.output
    recorded.repeats = max((repeat for *_, repeat in recorded.outputs), default=0) + 1
    return recorded


@transaction.atomic
def register_recorded_outputs(benchmark: Benchmark, name: str, recorded: RecordedFile, source: str) -> ModelSpec:
    """The recorded-outputs model `name` holding these outputs: created, or updated in place when a
    recorded-outputs model of that name exists (its earlier runs keep their predictions)."""
    if not recorded.outputs:
        raise DomainError(f"{source} has no output for any approved item of this benchmark.", field="outputs")
    model = ModelSpec.objects.select_for_update().filter(name=name).first()
    if model is not None and model.adapter != ModelSpec.Adapter.RECORDED_OUTPUTS:
        raise Conflict(f"A model named {name!r} exists and is not a recorded-outputs model; choose another name.",
                       field="name")
    model = model or ModelSpec(name=name, adapter=ModelSpec.Adapter.RECORDED_OUTPUTS)
    model.family = benchmark.family
    # flipped variants are images; _check_protocol refuses them for a caption model
    model.modality = ModelSpec.Modality.IMAGE if recorded.protocol.flip else ModelSpec.Modality.CAPTION
    ordered = sorted(recorded.outputs.items())
    digest = hashlib.sha256(json.dumps(ordered, ensure_ascii=False).encode()).hexdigest()
    model.config = {"benchmark": benchmark.slug, "file": source, "outputs": len(ordered), "digest": digest}
    model.save()
    model.recorded_outputs.all().delete()
    RecordedOutput.objects.bulk_create(
        [RecordedOutput(model=model, item_key=key, variant=variant, repeat=repeat, output=output)
         for (key, variant, repeat), output in ordered],
        batch_size=1000,
    )
    return model


def complete(model: ModelSpec, prompt: str) -> str:
    """One text prompt through a language model's adapter (for model-drafted raw items).
    Only endpoint models write text; the baselines answer benchmark items, not prompts."""
    from .adapters import OpenAICompatible
    from .prompts import InferenceRequest

    adapter = load_adapter(model.pk, model_settings_key(model), 0)
    if not isinstance(adapter, OpenAICompatible):
        raise DomainError("Drafting needs a language model (an OpenAI-compatible endpoint).", field="model")
    return adapter.answer(InferenceRequest(prompt=prompt), item=None)
