"""A benchmark's construction pipeline as data: stages (generate -> filter -> balance -> release) that an
admin composes and runs, each run one core Job (core/jobs.py) with progress and a report.

A stage's job is keyed by the stage and a digest of its kind and params (`stage:<id>:<sha>`), so asking
twice for the same work is one job; `again` asks for a fresh run after the latest one. The work itself
is idempotent too: generated items carry the benchmark's own ids, so a re-run updates them in place.
The runners (STAGE_RUNNERS) take the stage and a progress callable (core.jobs.advance_job's keywords)
and return the report; construction.tasks.run_pipeline_stage runs them on the default queue. Review is
asked only through review/services.py (verdicts, near-duplicate search)."""

import hashlib
import json
import logging
from collections import defaultdict
from collections.abc import Callable
from pathlib import PurePosixPath

from django.db import transaction

from benchmarks.importers import import_item_file
from benchmarks.models import Asset, AssetRole, Benchmark, Release
from benchmarks.releases import life
from core.errors import Conflict, DomainError, NotFound
from core.jobs import advance_job, fail_job, finish_job, job_cancelled, request_job, running_job
from core.models import Job
from core.validation import whole_number
from review import services as review_services
from scenes.paired_videos import STATES

from . import dispatch
from .generators import m3verse, spatial457
from .models import PipelineStage
from .stages import balance, llm_filter

logger = logging.getLogger(__name__)

Kind = PipelineStage.Kind
ENDED = (Job.Status.DONE, Job.Status.FAILED)


class ParamsError(DomainError):
    """A stage's params at fault: `{"params": {name: [reason]}}`."""

    def __init__(self, name: str, message: str):
        super().__init__(f"{name}: {message}", field="params")
        self.name, self.reason = name, message

    def as_dict(self) -> dict:
        return {"params": {self.name: [self.reason]}}


# --- params, checked per kind -------------------------------------------------------------------------


def _only(params: dict, allowed: set[str]) -> None:
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise DomainError(f"Not a parameter of this stage (it takes {', '.join(sorted(allowed))}).",
                          field=unknown[0])


def scene_sets(family: str, data) -> list[dict]:
    """Inline scene metadata as the generator reads it: Spatial457's CLEVR scenes (one, a list, or
    {"scenes": [...]}), or M3-Verse's {"scene_id", "states": [objects_0, objects_1]} (one or a list)."""
    if family == "spatial457":
        return spatial457.read_scenes(data)
    sets = data if isinstance(data, list) else [data]
    for number, states in enumerate(sets):
        if not isinstance(states, dict):
            raise ValueError(f"scene {number}: expected {{'scene_id', 'states': [objects_0, objects_1]}}")
        m3verse.read_states(states)
    return sets


def generate_params(params: dict, benchmark: Benchmark) -> dict:
    """The generate stage's params with their defaults."""
    family = params.get("family", benchmark.family)
    if family not in ("spatial457", "m3verse"):
        raise DomainError("spatial457 or m3verse.", field="family")
    if family != benchmark.family:
        raise DomainError(f"This benchmark's family is {benchmark.family}.", field="family")
    _only(params, {"family", "level", "per_template", "templates_per_image", "seed", "scenes"}
          if family == "spatial457" else {"family", "seed", "scenes"})
    cleaned = {"family": family, "seed": whole_number(params.get("seed", 0), "seed", 0, 2**31 - 1)}
    if family == "spatial457":
        cleaned["level"] = params.get("level", "L3_2d_spatial")
        if cleaned["level"] not in spatial457.LEVELS:
            raise DomainError(f"One of {', '.join(spatial457.LEVELS)}.", field="level")
        cleaned["per_template"] = whole_number(params.get("per_template", 1), "per_template", 1, 100)
        cleaned["templates_per_image"] = whole_number(params.get("templates_per_image", spatial457.TEMPLATES_PER_IMAGE),
                                                      "templates_per_image", 1, 1000)
    if "scenes" in params:
        try:
            scene_sets(family, params["scenes"])
        except (ValueError, TypeError, KeyError, AttributeError) as exc:  # objects that are not objects
            raise DomainError(str(exc) or "Not scene metadata this generator reads.", field="scenes") from None
        cleaned["scenes"] = params["scenes"]
    return cleaned


def dedup_params(params: dict, benchmark: Benchmark) -> dict:
    _only(params, {"threshold"})
    return {"threshold": review_services.dedup_threshold(params.get("threshold", 0.8))}


def release_params(params: dict, benchmark: Benchmark) -> dict:
    _only(params, {"version", "notes", "require_consensus"})
    version = params.get("version")
    if not isinstance(version, str) or not life.VERSION_PATTERN.match(version.strip()):
        raise DomainError("A version like 1.0.0 (three numbers).", field="version")
    notes = params.get("notes", "")
    if not isinstance(notes, str):
        raise DomainError("Text.", field="notes")
    require_consensus = params.get("require_consensus", False)
    if not isinstance(require_consensus, bool):
        raise DomainError("true or false.", field="require_consensus")
    return {"version": version.strip(), "notes": notes, "require_consensus": require_consensus}


# kind -> check(params, benchmark), raising DomainError naming the param at fault
PARAM_CHECKS: dict[str, Callable[[dict, Benchmark], object]] = {
    Kind.GENERATE: generate_params,
    Kind.FILTER_DUPLICATES: dedup_params,
    Kind.BALANCE: lambda params, benchmark: balance.checked_params(params),
    Kind.LLM_FILTER: lambda params, benchmark: llm_filter.checked_params(params),
    Kind.RELEASE: release_params,
}


def param_examples(benchmark: Benchmark) -> dict[str, dict]:
    """What the manage page offers in the params box for each kind."""
    generate = ({"family": "m3verse", "seed": 0} if benchmark.family == "m3verse"
                else {"family": "spatial457", "level": "L3_2d_spatial", "per_template": 1, "seed": 0})
    return {Kind.GENERATE: generate, Kind.FILTER_DUPLICATES: {"threshold": 0.8},
            Kind.BALANCE: {"by": "subtype", "quota": 100, "seed": 0, "rewrite": True},
            Kind.LLM_FILTER: {"filter": "vision_free", "model": 1},
            Kind.RELEASE: {"version": "1.0.0", "notes": ""}}


def checked_params(kind: str, params, benchmark: Benchmark) -> dict:
    """The params as given, once the kind's check passes; ParamsError names the one at fault."""
    if kind not in STAGE_RUNNERS:
        raise DomainError(f"One of {', '.join(STAGE_RUNNERS)}.", field="kind")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise DomainError("A JSON object.", field="params")
    try:
        PARAM_CHECKS[kind](params, benchmark)
    except ParamsError:
        raise
    except DomainError as exc:
        raise ParamsError(exc.field, exc.message) from None
    return params


# --- composing: add, edit, move, remove ---------------------------------------------------------------


def _lock_pipeline(benchmark: Benchmark) -> None:
    """One edit of a benchmark's stage order at a time (NO KEY: rows pointing at it are not held up)."""
    Benchmark.objects.select_for_update(no_key=True).filter(pk=benchmark.pk).first()


def _renumber(stages: list[PipelineStage]) -> None:
    """Positions 1..n in this order. Two passes, the first past every current number, so the unique
    (benchmark, position) never sees two stages on one number mid-update."""
    if not stages:
        return
    offset = max(stage.position for stage in stages) + len(stages)
    for number, stage in enumerate(stages, start=1):
        stage.position = offset + number
    PipelineStage.objects.bulk_update(stages, ["position"])
    for number, stage in enumerate(stages, start=1):
        stage.position = number
    PipelineStage.objects.bulk_update(stages, ["position"])


def _position(position, count: int) -> int:
    if isinstance(position, bool) or not isinstance(position, int) or not 1 <= position <= count:
        raise DomainError(f"A position from 1 to {count}.", field="position")
    return position


@transaction.atomic
def add_stage(benchmark: Benchmark, user, kind: str, params=None, name: str = "", position=None) -> PipelineStage:
    """A new stage at `position` (the later ones move down), or at the end."""
    params = checked_params(kind, params, benchmark)
    _lock_pipeline(benchmark)
    stages = list(benchmark.pipeline_stages.order_by("position"))
    stage = PipelineStage.objects.create(benchmark=benchmark, kind=kind, name=(name or "").strip()[:100],
                                         params=params, created_by=user, position=len(stages) + 1)
    if position is not None:
        stages.insert(_position(position, len(stages) + 1) - 1, stage)
        _renumber(stages)
    return stage


def locked_stage(stage_id: int) -> PipelineStage:
    stage = (PipelineStage.objects.select_for_update(of=("self",)).select_related("benchmark", "last_job")
             .filter(pk=stage_id).first())
    if stage is None:
        raise NotFound("No such stage.", field="stage")
    return stage


def stage_state(stage: PipelineStage) -> dict:
    return {"kind": stage.kind, "name": stage.name, "params": stage.params, "position": stage.position}


@transaction.atomic
def update_stage(stage_id: int, user, expected_version, **changes) -> PipelineStage:
    """Edit kind, name, params and/or position; 409 on a stale version or while the stage runs (its job
    reads the params when it starts)."""
    stage = locked_stage(stage_id)
    if not isinstance(expected_version, int) or isinstance(expected_version, bool):
        raise DomainError("Send the version you edited (an integer).", field="version")
    if expected_version != stage.version:
        raise Conflict(f"Someone saved this stage after you opened it (your version {expected_version}, "
                       f"current {stage.version}).", field="version",
                       current={"version": stage.version, **stage_state(stage)})
    if stage.last_job is not None and stage.last_job.status not in ENDED:
        raise Conflict("The stage is running; edit it when its job has ended.", field="stage")
    kind = changes.get("kind", stage.kind)
    if "kind" in changes or "params" in changes:
        stage.params = checked_params(kind, changes.get("params", stage.params), stage.benchmark)
        stage.kind = kind
    if "name" in changes:
        stage.name = (changes["name"] or "").strip()[:100]
    stage.version += 1
    stage.save(update_fields=["kind", "params", "name", "version"])
    if changes.get("position") is not None:
        move_stage(stage, changes["position"])
    return stage


@transaction.atomic
def move_stage(stage: PipelineStage, position) -> PipelineStage:
    _lock_pipeline(stage.benchmark)
    stages = [s for s in stage.benchmark.pipeline_stages.order_by("position") if s.pk != stage.pk]
    stages.insert(_position(position, len(stages) + 1) - 1, stage)
    _renumber(stages)
    return stage


@transaction.atomic
def remove_stage(stage_id: int) -> None:
    stage = locked_stage(stage_id)
    _lock_pipeline(stage.benchmark)
    stage.delete()
    _renumber(list(stage.benchmark.pipeline_stages.order_by("position")))


# --- running: one job per stage -----------------------------------------------------------------------


def stage_key(stage: PipelineStage) -> str:
    """What makes two runs of a stage the same work: the stage, its kind and its params."""
    digest = hashlib.sha256(json.dumps([stage.kind, stage.params], sort_keys=True).encode()).hexdigest()
    return f"stage:{stage.pk}:{digest[:16]}"


def _request(stage: PipelineStage, user, again: bool) -> Job:
    """The stage's job for its current params: queued when new or failed before, else the same job
    (queued, running or done); with `again`, a fresh one after the latest unless that is still on its way."""
    if stage.kind not in STAGE_RUNNERS:
        raise DomainError(f"No runner for '{stage.kind}' stages yet.", field="kind")
    key = stage_key(stage)
    latest = stage.last_job
    if again and latest is not None:
        if latest.status not in ENDED:
            return latest  # already on its way: a double click on "run again" is one run
        key = f"{key}:after-{latest.pk}"
    job = request_job("stage", key, subject=str(stage)[:200], user=user).job
    if latest is None or latest.pk != job.pk:
        PipelineStage.objects.filter(pk=stage.pk).update(last_job=job)
        stage.last_job = job
    return job


def _send(steps: list[tuple[int, int]]) -> None:
    """Enqueue the first step (it enqueues the next when done); with the broker down the jobs fail, so
    asking again queues them again, and the caller answers 503."""
    from kombu.exceptions import OperationalError

    try:
        dispatch.send_stage(*steps[0], following=steps[1:])
    except OperationalError:
        abandon_steps(steps, "The task queue could not be reached; run it again.")
        raise


def run_stage(stage: PipelineStage, user, again: bool = False) -> Job:
    """Run one stage as a job on the default queue."""
    with transaction.atomic():
        stage = locked_stage(stage.pk)
        job = _request(stage, user, again)
        if job.status == Job.Status.QUEUED:
            transaction.on_commit(lambda: _send([(job.pk, stage.pk)]))
    return job


def run_pipeline(benchmark: Benchmark, user, again: bool = False) -> list[Job]:
    """Every stage in order, one job each, each started when the one before it is done; a stage whose
    work is already done (same params) is passed over, and a failed stage fails the ones after it."""
    with transaction.atomic():
        _lock_pipeline(benchmark)
        stages = list(benchmark.pipeline_stages.select_related("last_job").select_for_update(of=("self",))
                      .order_by("position"))
        if not stages:
            raise DomainError("This benchmark has no pipeline stages yet.", field="benchmark")
        busy = [stage.position for stage in stages if stage.last_job and stage.last_job.status not in ENDED]
        if busy:  # its own delivery would not start the stages after it
            raise Conflict(f"Stage {busy[0]} is still queued or running; run the pipeline when it has ended.",
                           field="benchmark")
        jobs = [_request(stage, user, again) for stage in stages]
        steps = [(job.pk, stage.pk) for job, stage in zip(jobs, stages, strict=True)]
        transaction.on_commit(lambda: _send(steps))
    return jobs


def abandon_steps(steps, reason: str) -> None:
    """Fail the queued jobs of steps that will not run."""
    for job_id, _ in steps:
        if Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).exists():
            fail_job(job_id, reason)


def cancel_later_stages(job: Job) -> None:
    """on_cancel("stage"): the later stages of the cancelled one's benchmark that wait in a pipeline run
    (their jobs queued) fail with it, so none of them runs (the task sends no next step either); the
    stage itself keeps the cancelled job as its latest run."""
    stage = PipelineStage.objects.filter(last_job=job).first()
    if stage is None:
        return
    later = PipelineStage.objects.filter(benchmark_id=stage.benchmark_id, position__gt=stage.position,
                                         last_job__status=Job.Status.QUEUED)
    for job_id in later.values_list("last_job_id", flat=True):
        fail_job(job_id, f"An earlier stage (job {job.pk}) was cancelled.")


class StageCancelled(Exception):
    """Raised by a cancelled stage's progress callable: its runner stops at its next report."""


def _progress(job_id: int):
    """The runners' progress(done, total, message): what is None is left as it was; once the job is
    cancelled it raises StageCancelled, so the runner writes nothing after that report."""

    def progress(done=None, total=None, message=None):
        if job_cancelled(job_id):
            raise StageCancelled("The pipeline stage was cancelled.")
        advance_job(job_id, done=done, total=total, message=message)

    return progress


def perform_stage(job_id: int, stage_id: int) -> str:
    """Run the stage as its job (construction.tasks.run_pipeline_stage); the job's status after: done,
    failed or cancelled, or running when another delivery of the task has it (it runs nothing twice)."""
    stage = PipelineStage.objects.select_related("benchmark", "created_by").filter(pk=stage_id).first()
    if stage is None:
        abandon_steps([(job_id, stage_id)], "The stage was removed before it ran.")
    else:
        try:
            with running_job(job_id, message=f"{stage.get_kind_display()}…") as job:
                if job is not None:
                    finish_job(job_id, STAGE_RUNNERS[stage.kind](stage, _progress(job_id)))
        except StageCancelled:  # the job stays cancelled (running_job's fail_job leaves it so)
            pass
        except Exception:  # running_job failed the job with the reason; the pipeline stops here
            logger.exception("Pipeline stage %s (job %s) failed", stage_id, job_id)
    return Job.objects.values_list("status", flat=True).get(pk=job_id)


# --- the runners ---------------------------------------------------------------------------------------


def _asset_json(asset: Asset):
    with asset.file.open("rb") as handle:
        return json.loads(handle.read().decode("utf-8"))


def stored_scene_sets(benchmark: Benchmark, family: str) -> list[dict]:
    """Scene metadata kept with the benchmark's scenes (scene_meta assets): a CLEVR scene per Spatial457
    scene (its items attach to that scene), the objects before and after per M3-Verse scene."""
    assets = (Asset.objects.filter(scene__benchmark=benchmark, role=AssetRole.SCENE_META)
              .select_related("scene").order_by("scene__external_id", "pk"))
    if family == "spatial457":
        scenes = []
        for asset in assets:
            data = _asset_json(asset)
            if isinstance(data, dict) and isinstance(data.get("objects"), list):
                scenes.append({**data, "image_filename": asset.scene.external_id})
        return scenes
    states: dict[str, dict] = defaultdict(dict)
    for asset in assets:
        if asset.meta.get("kind") == "objects" and asset.meta.get("which") in STATES:
            states[asset.scene.external_id][asset.meta["which"]] = _asset_json(asset)
    return [{"scene_id": scene_id, "states": [both[state] for state in STATES]}
            for scene_id, both in states.items() if len(both) == len(STATES)]


def _generated_files(params: dict, sets: list[dict]) -> list[tuple[str, str, str]]:
    """(template, file name, file text) per template, in the family's published shape."""
    if params["family"] == "spatial457":
        level = params["level"]
        data = spatial457.generate(sets, level, per_template=params["per_template"], seed=params["seed"],
                                   templates_per_image=params["templates_per_image"])
        by_template = defaultdict(list)
        for question in data["questions"]:
            by_template[question["template_filename"]].append(question)
        return [(template, f"{level}-{PurePosixPath(template).stem}.json",
                 json.dumps({"info": data["info"], "split": level, "questions": questions,
                             "provenance": data["provenance"]}))
                for template, questions in by_template.items()]
    by_subcategory = defaultdict(list)
    for states in sets:
        for row in m3verse.generate(states, seed=params["seed"]):
            by_subcategory[row["subcategory"]].append(row)
    return [(subcategory, f"{subcategory}.jsonl", m3verse.write_jsonl(rows))
            for subcategory, rows in by_subcategory.items()]


def generate_stage(stage: PipelineStage, progress) -> dict:
    """Questions from scene metadata (construction/generators), imported as `import_items` would import the
    generator's files, one file per template: drafts in the review queue with the generator's
    provenance; items already there (same benchmark id) are updated or left alone, never duplicated."""
    params = generate_params(stage.params, stage.benchmark)
    family = params["family"]
    sets = scene_sets(family, params["scenes"]) if "scenes" in params else stored_scene_sets(stage.benchmark, family)
    if not sets:
        raise DomainError("No scene metadata: give `scenes` in the stage's params, or upload scene_meta "
                          "files to the benchmark's scenes.", field="scenes")
    progress(None, None, f"generating over {len(sets)} scene(s)")
    files = _generated_files(params, sets)
    report = {"family": family, "scenes": len(sets), "items": 0, "created": 0, "updated": 0, "unchanged": 0,
              "templates": {}}
    progress(0, len(files), "importing")
    for number, (template, name, text) in enumerate(files, start=1):
        # the generator wrote them (their provenance says so): whoever ran the stage may review them
        imported = import_item_file(stage.benchmark, name, text, author=None)
        if not imported.ok:
            raise DomainError("; ".join(imported.errors[:3]), field="params")
        counts = {"created": imported.created, "updated": imported.updated, "unchanged": imported.unchanged}
        report["templates"][template] = counts
        report["items"] += imported.items
        for what, count in counts.items():
            report[what] += count
        progress(number, len(files), f"imported {template}")
    return report


def filter_duplicates_stage(stage: PipelineStage, progress) -> dict:
    """A near-duplicate search (review/dedup.py, through review.services) over the benchmark's texts;
    reviewers keep one of each pair on the duplicates page."""
    params = dedup_params(stage.params, stage.benchmark)
    progress(None, None, "encoding and comparing texts")
    return review_services.search_duplicates(stage.benchmark, stage.created_by, params["threshold"], progress)


def release_stage(stage: PipelineStage, progress) -> dict:
    """Export a release through the one release verb (benchmarks.releases.life.export_release), its job run
    here so the stage reports what it froze; a version already exported is reported, not exported twice.
    The export's steps are the stage's reports too, so cancelling the stage stops the export after the
    file being written (the release fails: its version can be exported again). The report names the
    release's job (its progress, files and report)."""
    params = release_params(stage.params, stage.benchmark)
    release = Release.objects.filter(benchmark=stage.benchmark, version=params["version"]).first()
    exported = release is None or release.status == Release.Status.FAILED
    if exported:
        progress(None, None, f"exporting {params['version']}")
        release = life.export_release(stage.benchmark, params["version"], stage.created_by,
                                          params["notes"], params["require_consensus"], inline=True,
                                          on_step=lambda message: progress(None, None, message))
    diff = release.diff or {}
    return {"version": release.version, "release": release.pk, "job": release.job_id, "exported": exported,
            "items": release.items.count(),
            "by_split": release.card.get("by_split", {}),
            **{what: len(diff.get(what, [])) for what in ("added", "removed", "changed")}}


STAGE_RUNNERS: dict[str, Callable[[PipelineStage, Callable], dict]] = {
    Kind.GENERATE: generate_stage,
    Kind.FILTER_DUPLICATES: filter_duplicates_stage,
    Kind.BALANCE: balance.balance_stage,
    Kind.LLM_FILTER: llm_filter.llm_filter_stage,
    Kind.RELEASE: release_stage,
}

