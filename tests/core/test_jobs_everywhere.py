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


@pytest.mark.django_db
def test_a_dedup_run_reports_through_its_job_and_a_redelivered_message_runs_nothing(
        monkeypatch, django_capture_on_commit_callbacks):
    from core import roles
    from review import dedup
    from review import tasks as review_tasks
    from tests.factories import ChangeFactory, ItemFactory, UserFactory
    from tests.review.test_review_dedup import bag_of_words_encoder

    first = ChangeFactory(raw_text="The chair has been moved to the window.")
    ChangeFactory(scene=first.scene, raw_text="The chair has been moved to the window.")  # an exact copy
    ItemFactory(change=first, question="What is left of the chair now?")
    monkeypatch.setattr(dedup, "load_encoder", lambda: bag_of_words_encoder([]))
    with django_capture_on_commit_callbacks(execute=True):
        run = dedup.start_dedup(first.scene.benchmark, UserFactory(role=roles.ADMIN))
    run.refresh_from_db()
    job = run.job
    # one step per distinct text (2), then one per kind compared (2); what it found as the report
    assert run.status == "finished" and job.kind == "dedup" and job.key == f"dedup:{run.pk}"
    assert job.status == Job.Status.DONE and (job.done, job.total) == (4, 4)
    assert job.report == {"dedup_run": run.pk, "threshold": 0.8, "texts": 3, "pairs": 1,
                          "pairs_by_kind": {"change": 1, "question": 0}}
    ran = []
    monkeypatch.setattr(dedup, "run_dedup", lambda *args: ran.append(args))
    review_tasks.find_near_duplicates(run.pk, job.pk)  # the same message delivered again
    review_tasks.find_near_duplicates(run.pk)  # an old message without its job finds the same one
    assert ran == [] and Job.objects.filter(kind="dedup").count() == 1


@pytest.mark.django_db
def test_a_dedup_run_without_the_encoder_fails_its_job_with_the_reason(monkeypatch, django_capture_on_commit_callbacks):
    from core import roles
    from review import dedup
    from tests.factories import ChangeFactory, UserFactory

    change = ChangeFactory(raw_text="A lamp was placed on the desk.")
    monkeypatch.setattr(dedup, "load_encoder", lambda: None)
    with django_capture_on_commit_callbacks(execute=True):
        run = dedup.start_dedup(change.scene.benchmark, UserFactory(role=roles.ADMIN))
    run.refresh_from_db()
    assert run.status == "failed" and run.job.status == Job.Status.FAILED and "not installed" in run.job.message


# A timer whose callback reloads the page (setTimeout(() => location.reload(), ms) and the like), the
# json_script that set its delay, the module that did it, and meta refresh.
RELOAD_LOOPS = [re.compile(r"set(?:Timeout|Interval)\s*\(.{0,200}?location\.reload", re.S),
                re.compile(r"reload-after-ms|reload-while-working"), re.compile(r'http-equiv="?refresh', re.I)]


def test_no_page_reloads_itself_to_follow_work():
    sources = [*(ROOT / "frontend/templates").rglob("*.html"), *(ROOT / "frontend/static/hypolab").rglob("*.js")]
    assert len(sources) > 20
    offenders = [f"{path.relative_to(ROOT)}: {pattern.pattern}" for path in sources for pattern in RELOAD_LOOPS
                 if pattern.search(path.read_text())]
    assert offenders == []
