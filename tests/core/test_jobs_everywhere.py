"""Long work reports through core.Job (#32): no task reports progress another way (Celery's
`update_state`, which nothing reads), and scene processing is a job with its steps, its report and
one run per attempt however often its message is delivered."""

import re
from pathlib import Path

import pytest

from benchmarks import dispatch, tasks
from benchmarks.material import import_scan
from benchmarks.models import AssetRole
from core.models import Job
from tests.benchmarks.test_import_scans import scannet_inputs
from tests.factories import BenchmarkFactory

ROOT = Path(__file__).resolve().parents[2]
APPS = ("annotation", "benchmarks", "core", "crowd", "frontend", "humaneval", "modeleval", "results", "review",
        "construction", "config")


def project_sources():
    for app in APPS:
        yield from (ROOT / app).rglob("*.py") if (ROOT / app).exists() else ()


def test_no_task_reports_progress_through_celery_state():
    offenders = [str(path.relative_to(ROOT)) for path in project_sources()
                 if re.search(r"\bupdate_state\(", path.read_text())]
    assert offenders == []


@pytest.mark.django_db
def test_a_stored_scan_is_processed_as_a_job_with_its_steps_and_report(django_capture_on_commit_callbacks):
    bench = BenchmarkFactory(family="hypo3d")
    with django_capture_on_commit_callbacks(execute=True):
        scene = import_scan(bench, "scene0000_00", **scannet_inputs())
    job = Job.objects.get(kind="scene_processing")
    assert job.status == Job.Status.DONE and (job.done, job.total) == (2, 2)
    assert job.key == f"scene-processing:{scene.pk}:0" and "scene0000_00" in job.subject
    assert {AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_SEMANTIC} <= set(job.report["assets"])


@pytest.mark.django_db
def test_a_redelivered_message_does_not_process_the_scene_again(monkeypatch, django_capture_on_commit_callbacks):
    bench = BenchmarkFactory(family="hypo3d")
    with django_capture_on_commit_callbacks(execute=True):
        scene = import_scan(bench, "scene0000_00", **scannet_inputs())
    built = []
    monkeypatch.setattr(tasks, "build_viewer_assets", lambda *args: built.append(args))
    job = Job.objects.get(kind="scene_processing")
    tasks.process_scene(scene.pk, job.pk)  # the same attempt's message again
    assert built == []
    # a new attempt (the reaper's) is a new job, and runs
    tasks.process_scene(scene.pk, dispatch.scene_processing_job(scene.pk, attempt="1"))
    assert len(built) == 1 and Job.objects.filter(kind="scene_processing", status=Job.Status.DONE).count() == 2


@pytest.mark.django_db
def test_processing_that_fails_fails_its_job_with_the_reason(monkeypatch, django_capture_on_commit_callbacks):
    bench = BenchmarkFactory(family="hypo3d")

    def broken(*args):
        raise ValueError("the scan has no points")

    monkeypatch.setattr(tasks, "load_scene_points", broken)
    with pytest.raises(ValueError), django_capture_on_commit_callbacks(execute=True):
        import_scan(bench, "scene0000_00", **scannet_inputs())
    job = Job.objects.get(kind="scene_processing")
    assert job.status == Job.Status.FAILED and "the scan has no points" in job.message
