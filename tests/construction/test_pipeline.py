"""A pipeline is data: stages composed in order, each run one job keyed by its params (asking twice is one
job), each runner idempotent (generated items keep their benchmark ids, so a re-run updates instead of
duplicating), a failing stage failing its job with the reason and the stages after it, and the same verbs
from the command line."""

import json

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command

from benchmarks.models import Asset, AssetRole, Item, Release
from construction import pipeline, selectors
from construction.models import PipelineStage
from core import roles
from core.errors import Conflict, DomainError
from core.models import Job
from review import dedup
from review.similarity import text_sha
from tests.construction.test_generators import _scene, _states
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return UserFactory(role=roles.ADMIN)


@pytest.fixture
def spatial(admin):
    return BenchmarkFactory(slug="gen-457", family="spatial457")


@pytest.fixture
def run_now(django_capture_on_commit_callbacks):
    """Run a verb and the tasks it sends once its transaction commits (in-process, as embedded)."""

    def run(verb, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            result = verb(*args, **kwargs)
        if isinstance(result, list):
            return [Job.objects.get(pk=job.pk) for job in result]
        return Job.objects.get(pk=result.pk)

    return run


def generate(benchmark, admin, **params):
    return pipeline.add_stage(benchmark, admin, "generate", {"level": "L3_2d_spatial", "scenes": _scene(),
                                                             **params}, name="questions")


# --- composing -------------------------------------------------------------------------------------------


def test_stages_keep_their_order_when_added_moved_and_removed(spatial, admin):
    release = pipeline.add_stage(spatial, admin, "release", {"version": "1.0.0"})
    first = generate(spatial, admin)
    dedup_stage = pipeline.add_stage(spatial, admin, "filter_duplicates", {}, position=2)
    order = lambda: [s.pk for s in selectors.stages_of(spatial)]  # noqa: E731
    assert order() == [release.pk, dedup_stage.pk, first.pk]
    pipeline.move_stage(first, 1)
    assert order() == [first.pk, release.pk, dedup_stage.pk]
    pipeline.update_stage(release.pk, admin, release.version, position=3)
    assert order() == [first.pk, dedup_stage.pk, release.pk]
    pipeline.remove_stage(dedup_stage.pk)
    assert [(s.pk, s.position) for s in selectors.stages_of(spatial)] == [(first.pk, 1), (release.pk, 2)]


def test_params_are_checked_per_kind_naming_the_one_at_fault(spatial, admin):
    cases = [
        ("generate", {"level": "L9"}, "level"),
        ("generate", {"per_template": 0}, "per_template"),
        ("generate", {"family": "m3verse"}, "family"),
        ("generate", {"scenes": [{"objects": []}]}, "scenes"),
        ("generate", {"colour": "red"}, "colour"),
        ("filter_duplicates", {"threshold": 2}, "threshold"),
        ("release", {"version": "one"}, "version"),
    ]
    for kind, params, field in cases:
        with pytest.raises(pipeline.ParamsError) as caught:
            pipeline.add_stage(spatial, admin, kind, params)
        assert list(caught.value.as_dict()["params"]) == [field], (kind, params)
    with pytest.raises(DomainError) as caught:
        pipeline.add_stage(spatial, admin, "shuffle", {})
    assert caught.value.field == "kind"
    assert not PipelineStage.objects.exists()


def test_a_stale_edit_and_an_edit_while_running_are_conflicts(spatial, admin):
    stage = generate(spatial, admin)
    pipeline.update_stage(stage.pk, admin, 1, name="renamed")
    with pytest.raises(Conflict) as caught:
        pipeline.update_stage(stage.pk, admin, 1, name="mine")
    assert caught.value.extra["current"]["name"] == "renamed"
    pipeline.run_stage(stage, admin)  # queued: no task runs without the commit
    with pytest.raises(Conflict):
        pipeline.update_stage(stage.pk, admin, 2, params={"per_template": 2})
    with pytest.raises(Conflict, match="Stage 1 is still queued or running"):
        pipeline.run_pipeline(spatial, admin)  # that job's own delivery would not start the rest


# --- running: one job per stage ------------------------------------------------------------------------


def test_running_a_stage_twice_is_one_job_and_again_is_a_fresh_one(spatial, admin, run_now):
    stage = generate(spatial, admin)
    job = run_now(pipeline.run_stage, stage, admin)
    assert job.status == Job.Status.DONE and job.key == pipeline.stage_key(stage)
    assert run_now(pipeline.run_stage, stage, admin).pk == job.pk  # done work is not done again
    again = run_now(pipeline.run_stage, stage, admin, again=True)
    assert again.pk != job.pk and again.status == Job.Status.DONE
    assert PipelineStage.objects.get(pk=stage.pk).last_job_id == again.pk
    pipeline.update_stage(stage.pk, admin, stage.version, params={**stage.params, "per_template": 2})
    edited = run_now(pipeline.run_stage, PipelineStage.objects.get(pk=stage.pk), admin)
    assert edited.pk not in (job.pk, again.pk)  # other params, other work


def test_generating_twice_updates_instead_of_duplicating(spatial, admin, run_now):
    stage = generate(spatial, admin, per_template=2, seed=3)
    report = run_now(pipeline.run_stage, stage, admin).report
    items = Item.objects.filter(benchmark=spatial)
    assert report["items"] == report["created"] == items.count() > 0
    assert report["updated"] == report["unchanged"] == 0 and report["scenes"] == 1
    assert sum(t["created"] for t in report["templates"].values()) == report["created"]
    assert all(template.endswith(".json") for template in report["templates"])
    assert all(item.tags["program"] and item.status == Item.Status.DRAFT for item in items)  # for review
    again = run_now(pipeline.run_stage, stage, admin, again=True).report
    assert items.count() == report["created"]
    assert (again["created"], again["updated"], again["unchanged"]) == (0, 0, report["created"])


def test_generating_reads_the_scenes_metadata_files(admin, run_now):
    benchmark = BenchmarkFactory(slug="gen-m3", family="m3verse")
    scene = SceneFactory(benchmark=benchmark, external_id="scene_9")
    before, after = _states()["states"]
    for which, objects in (("before", before), ("after", after)):
        Asset.objects.create(scene=scene, role=AssetRole.SCENE_META, size=1, sha256="0" * 64,
                             file=ContentFile(json.dumps(objects).encode(), name=f"objects_{which}.json"),
                             meta={"kind": "objects", "which": which})
    stage = pipeline.add_stage(benchmark, admin, "generate", {"seed": 2})
    job = run_now(pipeline.run_stage, stage, admin)
    assert job.status == Job.Status.DONE, job.message
    assert job.report["scenes"] == 1 and job.report["created"] == Item.objects.filter(scene=scene).count() > 0
    assert "movement_distance" in job.report["templates"]


def test_a_failing_stage_fails_its_job_with_the_reason(spatial, admin, run_now):
    stage = pipeline.add_stage(spatial, admin, "generate", {})  # no inline scenes, none uploaded
    job = run_now(pipeline.run_stage, stage, admin)
    assert job.status == Job.Status.FAILED and "No scene metadata" in job.message
    assert job.finished_at is not None
    retried = run_now(pipeline.run_stage, stage, admin)  # a failed job is queued again under its key
    assert retried.pk == job.pk and retried.status == Job.Status.FAILED


def test_the_pipeline_runs_each_stage_after_the_one_before(spatial, admin, run_now):
    first = generate(spatial, admin, seed=1)
    run_now(pipeline.run_stage, first, admin)
    Item.objects.filter(benchmark=spatial).update(status=Item.Status.APPROVED)  # generated drafts, reviewed
    pipeline.add_stage(spatial, admin, "release", {"version": "1.0.0"})
    generated, released = run_now(pipeline.run_pipeline, spatial, admin, again=True)
    assert generated.status == released.status == Job.Status.DONE
    assert released.started_at >= generated.finished_at
    release = Release.objects.get(benchmark=spatial)
    assert released.report["version"] == "1.0.0" and released.report["exported"]
    assert released.report["items"] == generated.report["unchanged"] == release.items.count() > 0
    # Again: the items are unchanged and version 1.0.0 is reported, not exported twice.
    generated, released = run_now(pipeline.run_pipeline, spatial, admin, again=True)
    assert generated.report["unchanged"] == release.items.count() and not released.report["exported"]
    assert Release.objects.filter(benchmark=spatial).count() == 1


def test_a_failed_stage_fails_the_stages_after_it(spatial, admin, run_now):
    pipeline.add_stage(spatial, admin, "generate", {})
    pipeline.add_stage(spatial, admin, "release", {"version": "1.0.0"})
    failed, after = run_now(pipeline.run_pipeline, spatial, admin)
    assert failed.status == after.status == Job.Status.FAILED
    assert "did not finish" in after.message and after.started_at is None
    assert not Release.objects.exists()


def test_filtering_duplicates_reports_the_pairs_found(spatial, admin, run_now):
    texts = ["How many cubes are left of the sphere?", "How many cubes are to the left of the sphere?",
             "What colour is the large cylinder?"]
    for text in texts:
        ItemFactory(benchmark=spatial, scene=None, change=None, question=text)
    # Stored vectors as if each text had been embedded when it arrived: no model is loaded.
    vectors = {text_sha(texts[0]): [1.0, 0.0], text_sha(texts[1]): [0.99, 0.14], text_sha(texts[2]): [0.0, 1.0]}
    dedup.store_vectors(dedup.encoder_version(), {sha: np.array(v, dtype=np.float32) for sha, v in vectors.items()})
    stage = pipeline.add_stage(spatial, admin, "filter_duplicates", {"threshold": 0.9})
    job = run_now(pipeline.run_stage, stage, admin)
    assert job.status == Job.Status.DONE, job.message
    assert job.report["pairs"] == 1 and job.report["pairs_by_kind"] == {"change": 0, "question": 1}
    assert job.report["texts"] == 3 and job.report["threshold"] == 0.9


# --- the command: it waits for the jobs, so their tasks must run at commit -----------------------------


@pytest.mark.django_db(transaction=True)
def test_the_command_runs_one_stage_or_all_and_prints_a_line_each(spatial, admin, capsys):
    generate(spatial, admin, seed=4)
    pipeline.add_stage(spatial, admin, "release", {"version": "2.0.0"}, name="release")
    call_command("run_stage", "gen-457", "questions")
    line = json.loads(capsys.readouterr().out)
    assert (line["stage"], line["kind"], line["status"]) == (1, "generate", "done") and line["report"]["created"]
    Item.objects.filter(benchmark=spatial).update(status=Item.Status.APPROVED)  # generated drafts, reviewed
    call_command("run_stage", "gen-457", "--all")
    lines = [json.loads(out) for out in capsys.readouterr().out.splitlines()]
    assert [(x["stage"], x["status"]) for x in lines] == [(1, "done"), (2, "done")]
    assert lines[0]["job"] == line["job"]  # the same work: the same job
    assert lines[1]["report"]["version"] == "2.0.0"


@pytest.mark.django_db(transaction=True)
def test_the_command_exits_non_zero_when_a_stage_fails(spatial, admin, capsys):
    pipeline.add_stage(spatial, admin, "generate", {})
    with pytest.raises(CommandError, match="1 stage"):
        call_command("run_stage", "gen-457", "1")
    assert json.loads(capsys.readouterr().out)["status"] == "failed"
    with pytest.raises(CommandError, match="No stage"):
        call_command("run_stage", "gen-457", "7")
    with pytest.raises(CommandError, match="--all"):
        call_command("run_stage", "gen-457")
