"""Cancelling a pipeline stage (its job, kind `stage`): its runner stops at its next report, and the
stages after it in the pipeline never run (their jobs fail saying why)."""

import numpy as np
import pytest

from benchmarks.models import Item, Release
from construction import pipeline
from construction.models import PipelineStage
from core import jobs, roles
from core.models import Job
from review import dedup
from review.models import DedupRun, DuplicatePair
from review.similarity import text_sha
from tests.construction.test_pipeline import generate
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return UserFactory(role=roles.ADMIN, username="ada")


@pytest.fixture
def spatial():
    return BenchmarkFactory(slug="cancel-457", family="spatial457")


def job_of(stage) -> Job:
    return PipelineStage.objects.select_related("last_job").get(pk=stage.pk).last_job


def test_a_queued_pipeline_cancelled_through_the_api_runs_no_stage(api_client, spatial, admin,
                                                                    django_capture_on_commit_callbacks):
    first = generate(spatial, admin, seed=1)
    last = pipeline.add_stage(spatial, admin, "release", {"version": "1.0.0"})
    with django_capture_on_commit_callbacks() as sent:
        pipeline.run_pipeline(spatial, admin)
    api_client.force_authenticate(admin)
    assert api_client.post(f"/api/v1/jobs/{job_of(first).pk}/cancel/").status_code == 200
    after = job_of(last)
    assert after.status == Job.Status.FAILED and "was cancelled" in after.message

    for send in sent:  # the pipeline's message arrives after all
        send()
    cancelled, after = job_of(first), job_of(last)
    assert (cancelled.status, cancelled.started_at, cancelled.message) == (Job.Status.CANCELLED, None, "Cancelled by ada.")
    assert after.status == Job.Status.FAILED and after.started_at is None
    assert not Item.objects.filter(benchmark=spatial).exists() and not Release.objects.exists()


def test_a_stage_cancelled_mid_run_stops_and_the_following_stages_do_not_run(monkeypatch, spatial, admin,
                                                                             django_capture_on_commit_callbacks):
    first = generate(spatial, admin, seed=1)
    last = pipeline.add_stage(spatial, admin, "release", {"version": "1.0.0"})
    imported = []
    import_item_file = pipeline.import_item_file

    def cancelled_while_importing(*args, **kwargs):  # the cancel arrives while the first file imports
        imported.append(args[1])
        jobs.cancel_job(job_of(first).pk, admin)
        return import_item_file(*args, **kwargs)

    monkeypatch.setattr(pipeline, "import_item_file", cancelled_while_importing)
    with django_capture_on_commit_callbacks(execute=True):
        pipeline.run_pipeline(spatial, admin)  # runs in-process, raising nothing

    cancelled, after = job_of(first), job_of(last)
    assert len(imported) == 1  # stopped at the report after the first file
    assert (cancelled.status, cancelled.report, cancelled.done) == (Job.Status.CANCELLED, {}, 0)
    assert after.status == Job.Status.FAILED and after.started_at is None
    assert not Release.objects.exists()


def test_a_duplicate_search_stage_cancelled_mid_run_fails_its_run_without_pairs(monkeypatch, spatial, admin,
                                                                                django_capture_on_commit_callbacks):
    texts = ["How many cubes are left of the sphere?", "How many cubes are to the left of the sphere?"]
    for text in texts:
        ItemFactory(benchmark=spatial, scene=None, change=None, question=text)
    dedup.store_vectors(dedup.encoder_version(), {text_sha(texts[0]): np.array([1.0, 0.0], dtype=np.float32),
                                                  text_sha(texts[1]): np.array([0.99, 0.14], dtype=np.float32)})
    stage = pipeline.add_stage(spatial, admin, "filter_duplicates", {"threshold": 0.9})
    cached_vectors = dedup.cached_vectors

    def cancelled_while_reading(*args):
        jobs.cancel_job(job_of(stage).pk, admin)
        return cached_vectors(*args)

    monkeypatch.setattr(dedup, "cached_vectors", cancelled_while_reading)
    with django_capture_on_commit_callbacks(execute=True):
        pipeline.run_stage(stage, admin)

    run = DedupRun.objects.get(benchmark=spatial)
    assert run.job.status == Job.Status.FAILED and "cancelled" in run.job.message  # stopped with its stage
    assert not DuplicatePair.objects.exists()
    assert job_of(stage).status == Job.Status.CANCELLED


def test_a_release_stage_cancelled_while_it_exports_writes_no_further_file_and_its_release_fails(
        monkeypatch, spatial, admin, django_capture_on_commit_callbacks):
    from benchmarks.releases import life

    for n in range(2):
        ItemFactory(benchmark=spatial, scene=None, change=None, question=f"How many cubes? ({n})", status="approved")
    stage = pipeline.add_stage(spatial, admin, "release", {"version": "1.0.0"})
    written = []
    write_release_format = life.write_release_format

    def cancelled_while_writing(release, fmt, out):  # the cancel arrives while the first file is written
        written.append(fmt)
        if len(written) == 1:
            jobs.cancel_job(job_of(stage).pk, admin)
        return write_release_format(release, fmt, out)

    monkeypatch.setattr(life, "write_release_format", cancelled_while_writing)
    with django_capture_on_commit_callbacks(execute=True):
        pipeline.run_stage(stage, admin)

    release = Release.objects.select_related("job").get(benchmark=spatial)
    assert len(written) == 1  # stopped at the report after the file being written
    assert release.status == Release.Status.FAILED
    assert release.job.status == Job.Status.FAILED and "cancelled" in release.job.message
    assert job_of(stage).status == Job.Status.CANCELLED
