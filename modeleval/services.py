"""Model runs: launch over a benchmark's approved items, infer in batches on the gpu queue
(runs/inference.py), record one prediction per (run, item, variant, repeat), then score
(runs/run_scoring.py). A run can
be cancelled and resumed; resuming infers only what is missing. Outputs produced elsewhere are
scored from their files, or recorded as a model whose runs replay them.

Each start of a run (its launch, each resume) is a core.Job of kind `model_run` that the run links:
its batches advance it by the predictions stored, scoring is its last step and ends it with the
run's report; the run keeps its own status. Cancelling the job cancels the run (`cancel_run` goes
through core.jobs.cancel_job, whose handler for `model_run` moves the run).

A run shown camera views (`multi_view:N`, `egocentric:N`) waits queued while the default queue
renders the view sets its scenes are missing, one task (and job) per scene; the last one rendered
sends the batches, so a GPU worker only reads stored PNGs.

What a launch may ask for is checked in runs/run_options.py, what a model is shown in
prompting/visual_inputs.py, prediction files are read in runs/prediction_files.py, a 3DSRBench judge is
asked in clients/judge.py, tasks are sent through dispatch.py. Other stages ask a language model through
the facade of clients/calling.py, reached here (`complete`, `scene_pictures`, `language_model`)."""

import hashlib
import json
from collections import Counter

from django.db import transaction
from django.db.models import Count

import scoring
from benchmarks import protocols
from benchmarks.models import Asset, AssetRole, Benchmark, Item, Scene
from benchmarks.protocols import Protocol, Variant
from benchmarks.services import gold_row
from core import jobs
from core.errors import Conflict, DomainError, NotFound
from core.models import Job
from core.sql import locked
from core.validation import whole_number
from scenes import renders
from scenes.after_state import after_state_view_set
from scenes.scans import ScanError
from scoring.records import RecordError, parse_prediction

from . import dispatch
from .clients import secrets as model_secrets
from .clients.calling import complete, language_model, scene_pictures  # noqa: F401 -- other stages call these
from .models import ModelSpec, RecordedOutput, Run
from .prompting import generation, run_inputs, scene_state, visual_inputs
from .prompting.prompts import latest_template, template_for
from .prompting.visual_inputs import VisualInput
from .runs import run_options
from .runs.prediction_files import RecordedFile, file_protocol, read_prediction_files, resolve_predictions
from .runs.run_options import item_variants
from .runs.run_scoring import run_summary

RANDOM_BASELINE_NAME = "Random baseline (seed 0)"
MAX_REPEATS = 10
RUN_JOB = "model_run"


def ensure_baseline_model() -> ModelSpec:
    model, _ = ModelSpec.objects.get_or_create(
        name=RANDOM_BASELINE_NAME, defaults={"adapter": ModelSpec.Adapter.RANDOM_BASELINE, "seed": 0}
    )
    return model


def launch_run(model_id, benchmark: Benchmark, created_by, batch_size=8, repeats=1, condition="main",
               protocol=None, subset=None, prompts=None, settings=None, examples=None, judge_model=None,
               visual_input=None, inputs=None, held_out=()) -> Run:
    """A run of the model over the benchmark's approved items (or those of `subset`, by tags): one
    prediction per item, protocol variant (benchmarks.protocols: rotated options, mirrored image) and
    repeat. `prompts` names a template per tag value (Spatial457's per-level prompts), `settings` the
    provider parameters, `examples` in-context examples, `judge_model` the model reading 3DSRBench
    choices the rules cannot, `visual_input` what the model is shown (default: its modality), `held_out`
    items left out (a recipe's in-context shots); all are recorded on the run."""
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
    subset = run_options.checked_subset(subset)
    prompts = run_options.checked_prompts(prompts, benchmark.family)
    settings = generation.checked_settings(settings)
    generation.check_supported(model, settings)
    examples = run_options.checked_examples(examples)
    judge = run_options.checked_judge(judge_model, benchmark)
    # stored rotations and mirrored rows are asked as they are, the rest of the protocol made here
    approved = run_options.asked_rows(protocol, run_options.subset_filter(
        approved_items(benchmark).exclude(pk__in=list(held_out)), subset))
    generated = run_options.generated_protocol(protocol, approved)
    rows = list(approved.values_list("pk", "question", "choices", "answers", "tags"))
    if not rows:
        if subset:
            raise DomainError("No approved item of this benchmark is in the subset.", field="subset")
        raise DomainError("This benchmark has no approved items to evaluate.", field="benchmark")
    shown = run_options.checked_visual_input(visual_input, model, benchmark,
                                             approved.values_list("scene_id", flat=True))
    run_options.check_protocol(generated, shown, rows)
    inputs = run_inputs.checked(inputs, model, benchmark, shown, approved)  # frames, extra frames, chain
    items = [pk for pk, *_ in rows]
    variant_count = sum(len(item_variants(generated, choices, tags)) for _, _, choices, _, tags in rows)
    with transaction.atomic():
        run = Run.objects.create(
            model=model, benchmark=benchmark, created_by=created_by, batch_size=batch_size, repeats=repeats,
            prompt_template=template, total=variant_count * repeats, protocol=protocol.as_data(),
            subset=subset, prompt_templates=prompts, settings=settings, examples=examples, judge_model=judge,
            visual_input=str(shown), inputs=inputs,
        )
        run.items.set(items)
        _attempt(run, items)
    return run


def _attempt(run: Run, item_ids: list[int]) -> None:
    """Start the (locked or new) run once more: a job of its own for this attempt (a resume is a new
    one, so a redelivered message of an earlier attempt finds that attempt's job), then to work."""
    attempt = Job.objects.filter(kind=RUN_JOB, key__startswith=f"{RUN_JOB}:{run.pk}:").count()
    run.job = jobs.request_job(RUN_JOB, f"{RUN_JOB}:{run.pk}:{attempt}", total=run.total, user=run.created_by,
                               subject=f"Run {run.pk}: {run.model.name} on {run.benchmark.name}").job
    shown = VisualInput.parse(run.visual_input)
    changed = scene_state.is_changed(run.inputs)  # the after-states' views: their meta says where the cameras are from
    if shown.is_rendered and not changed:  # each attempt records what it shows: posed frames imported since count
        scene_ids = set(run.items.exclude(scene=None).values_list("scene_id", flat=True))
        run.inputs = {**(run.inputs or {}), "views": visual_inputs.view_sources(shown, scene_ids)}
    run.save(update_fields=["job", "inputs"])
    _start(run, item_ids)


def _start(run: Run, item_ids: list[int]) -> None:
    """Put the (locked or new) run to work: queued while its missing view sets are rendered, else
    running with its batches sent."""
    unrendered = _unrendered_scenes(run)
    if not unrendered:
        run.move_to(Run.Status.RUNNING)
        run.save(update_fields=["status"])
        _enqueue_batches(run, item_ids)
        return
    if run.status != Run.Status.QUEUED:
        run.move_to(Run.Status.QUEUED)
        run.save(update_fields=["status"])
    _send_on_commit(run, lambda: [dispatch.send_render(run.pk, scene_id, render_job(run.pk, scene_id))
                                     for scene_id in unrendered])


def _unrendered_scenes(run: Run) -> list[int]:
    """The run's scenes without a whole stored view set of its visual input (none unless it is one), but
    those shown their posed frames."""
    shown = VisualInput.parse(run.visual_input)
    if not shown.is_rendered:
        return []
    if scene_state.is_changed(run.inputs):  # the after-states' views of the set, of each change
        return sorted(scene_state.unrendered_changes(run.items.all(), shown))
    scene_ids = set(run.items.exclude(scene=None).values_list("scene_id", flat=True))
    scene_ids = sorted(scene_ids - visual_inputs.posed_scenes(shown, scene_ids))
    rendered = Counter(Asset.objects.filter(scene_id__in=scene_ids, role=AssetRole.RENDER, meta__set=str(shown))
                       .filter(meta__after_state__isnull=True).values_list("scene_id", flat=True))
    return [pk for pk in scene_ids if rendered[pk] != shown.views]


def render_job(run_id: int, scene_id: int) -> int:
    """The core.Job rendering one scene's view set for a run's current attempt (a resume renders again
    under a new one; a failed one is queued again)."""
    run = Run.objects.get(pk=run_id)
    scene = Scene.objects.get(pk=scene_id)
    return jobs.request_job("render", f"render:{run_id}:{scene_id}:{run.job_id}", user=run.created_by,
                            subject=f"Run {run_id}: {run.visual_input} views of scene {scene.external_id}").job.pk


def render_views(run_id: int, scene_id: int, job_id: int) -> None:
    """One scene's view set for a queued run (a default-queue task; `renders.view_set` renders a set
    once, so a retry or another run's task costs nothing), reported through its job. The last set
    rendered starts inference; a scan that cannot be rendered fails the run."""
    with jobs.running_job(job_id, message="Rendering the views") as job:
        if job is None:
            return  # a redelivered message of a render that ran or runs
        run = Run.objects.filter(pk=run_id).first()
        if run is None or run.status != Run.Status.QUEUED:
            jobs.finish_job(job_id, {"rendered": 0}, message="The run no longer waits for views.")
            return
        try:
            if scene_state.is_changed(run.inputs):
                changes = scene_state.unrendered_changes(run.items.filter(scene_id=scene_id),
                                                         VisualInput.parse(run.visual_input)).get(scene_id, [])
                views = [view for change in changes for view in after_state_view_set(change, run.visual_input)]
            else:
                views = renders.view_set(Scene.objects.get(pk=scene_id), run.visual_input)
        except (renders.RenderError, ScanError, Scene.DoesNotExist) as exc:
            _fail_to_start(run_id, f"The views of scene {scene_id} could not be rendered: {exc}")
            raise
        jobs.finish_job(job_id, {"rendered": len(views), "views": run.visual_input})
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run_id)
        if run.status == Run.Status.QUEUED and not _unrendered_scenes(run):
            _start(run, _incomplete_items(run))


def _fail_to_start(run_id: int, reason: str) -> None:
    """Called outside any transaction (a task, an on-commit send): the job fails after the run's row
    is released, as a cancel locks the job, then the run."""
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run_id)
        if run.status not in (Run.Status.QUEUED, Run.Status.RUNNING):
            return
        run.move_to(Run.Status.FAILED)
        run.save(update_fields=["status"])
    if run.job_id:
        jobs.fail_job(run.job_id, reason)


def _enqueue_batches(run: Run, item_ids: list[int]) -> None:
    size = dispatch.batch_size(run, len(item_ids))
    batches = [item_ids[i : i + size] for i in range(0, len(item_ids), size)]
    _send_on_commit(run, lambda: [dispatch.send_batch(run, batch) for batch in batches])


def _send_on_commit(run: Run, send_all) -> None:
    def send():
        from kombu.exceptions import OperationalError

        try:
            send_all()
        except OperationalError:
            # The broker is down: no task may be waited for that was never sent. The run fails (it can
            # be resumed: only missing predictions are inferred) and the caller answers 503 (core/api.py).
            _fail_to_start(run.pk, "The task queue could not be reached; resume the run.")
            raise

    transaction.on_commit(send)


def cancel_run(run_id, user) -> Run:
    """Cancel the run through its job (core.jobs.cancel_job, which calls `stop_cancelled_run`): one
    cancel for the run page, the run API and the jobs API."""
    run = run_for_staff(run_id)
    if run.job_id:
        jobs.cancel_job(run.job_id, user)
    else:  # a run from before runs had jobs
        with transaction.atomic():
            run = locked(Run, run_id, "run")
            run.move_to(Run.Status.CANCELLED)
            run.save(update_fields=["status"])
    return run_for_staff(run_id)


def stop_cancelled_run(job: Job) -> None:
    """core.jobs' cancel handler for `model_run` (in the cancel's transaction): the run of that job
    moves to cancelled (IllegalTransition, 409, once it is scoring), so its batches stop at their next
    flush and its queued ones infer nothing."""
    run = Run.objects.select_for_update().filter(job=job).first()
    if run is not None:
        run.move_to(Run.Status.CANCELLED)
        run.save(update_fields=["status"])


@transaction.atomic
def resume_run(run_id) -> Run:
    """Put a cancelled or failed run back to work on the predictions it is missing, as a new attempt."""
    run = locked(Run, run_id, "run")
    if run.status not in (Run.Status.CANCELLED, Run.Status.FAILED):
        raise Conflict(f"Only cancelled or failed runs can be resumed; this one is {run.status}.", field="run")
    model_secrets.check_model_config(run.model.adapter, run.model.config)
    _attempt(run, _incomplete_items(run))
    return run


def _incomplete_items(run: Run) -> list[int]:
    """Items with fewer predictions than their variants x repeats."""
    protocol = run_options.run_protocol(run)
    counts = dict(run.predictions.values("item_id").annotate(n=Count("id")).values_list("item_id", "n"))
    return [
        pk for pk, choices, tags in run.items.order_by("pk").values_list("pk", "choices", "tags")
        if counts.get(pk, 0) < len(item_variants(protocol, choices, tags)) * run.repeats
    ]


def run_progress(run: Run) -> dict:
    """What the run API answers of a run (its live progress is its job's: /api/v1/jobs/<job>/)."""
    return {
        "run": run.pk,
        "status": run.status,
        "job": run.job_id,
        "done": run.predictions.count(),
        "total": run.total,
        "errors": run.predictions.exclude(error="").count(),
        "failures": inference_failures(run),
        "scores": run.scores.get("overall") if run.scores else None,
        "summary": run_summary(run),
        # what each request carries; "provider default" for a setting left unsent
        "request_settings": generation.sent_settings(run.model, run.settings or {}),
    }


FAILURES_LISTED = 20  # of a run's failed predictions, in its progress; `errors` counts them all


def inference_failures(run: Run, limit: int = FAILURES_LISTED) -> list[dict]:
    """Which predictions' inference failed and why (the error each stored: an endpoint's status and
    message, a missing stimulus...), the first `limit` by item."""
    failed = run.predictions.exclude(error="").order_by("item_id", "variant", "repeat").values_list(
        "item_id", "item__external_id", "variant", "repeat", "error")[:limit]
    return [{"item": item, "external_id": external_id, "variant": variant, "repeat": repeat, "error": error}
            for item, external_id, variant, repeat, error in failed]


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


def approved_items(benchmark: Benchmark):
    return Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).order_by("pk")


def read_recorded_outputs(benchmark: Benchmark, files: list[tuple[str, bytes]]) -> RecordedFile:
    """The outputs of the files for the benchmark's approved items, read as the scorer reads lines."""
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
    # flipped variants are images; run_options.check_protocol refuses them for a caption model
    model.modality = ModelSpec.Modality.IMAGE if recorded.protocol.flip else ModelSpec.Modality.CAPTION_ONLY
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
