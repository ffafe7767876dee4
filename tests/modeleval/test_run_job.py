"""A model run reports through core.Job (#32): each start of a run (its launch, each resume) is a job of
kind `model_run` that the run links, advanced by the predictions stored (a redelivered batch counts
nothing twice), ended by scoring with the run's report; the job's websocket is the run page's; a
run's cancel and its job's cancel are one; a failure fails the job with the reason; renders are jobs."""

import pytest
from kombu.exceptions import OperationalError

from core import jobs, roles
from core.errors import IllegalTransition
from core.models import Job
from modeleval import dispatch, services
from modeleval.models import Run
from modeleval.runs import inference, run_scoring
from tests.factories import ItemFactory, UserFactory
from tests.modeleval.test_visual_inputs import room_item  # noqa: F401 -- a fixture
from tests.websockets import connect, messages_around


def launch(item, capture, **options):
    with capture(execute=True):
        run = services.launch_run(services.ensure_baseline_model().pk, item.benchmark, None, **options)
    run.refresh_from_db()
    return run


@pytest.mark.django_db
def test_a_run_is_one_job_from_launch_to_its_scores(django_capture_on_commit_callbacks):
    first = ItemFactory()
    ItemFactory(change__scene__benchmark=first.benchmark)
    run = launch(first, django_capture_on_commit_callbacks, repeats=2)
    job = run.job
    assert run.status == Run.Status.FINISHED and job.kind == "model_run" and job.key == f"model_run:{run.pk}:0"
    assert job.status == Job.Status.DONE and (job.done, job.total) == (4, 4) and f"Run {run.pk}" in job.subject
    assert job.report == {"scores": run.scores["overall"], **run_scoring.run_summary(run)}
    assert set(job.report) == {"scores", "inference_errors", "extraction"}


@pytest.mark.django_db
def test_a_redelivered_batch_counts_nothing_twice(monkeypatch, django_capture_on_commit_callbacks):
    item = ItemFactory()
    others = [ItemFactory(change__scene__benchmark=item.benchmark) for _ in range(2)]
    monkeypatch.setattr(dispatch, "send_batch", lambda run, batch: None)  # the batches are run by hand
    run = launch(item, django_capture_on_commit_callbacks)
    # queued while its batches wait for a GPU worker (the stale sweep leaves a queued job be)
    assert run.job.status == Job.Status.QUEUED and (run.job.done, run.job.total) == (0, 3)
    for _ in range(2):  # the same message delivered twice
        inference.infer_items(run.pk, [item.pk, others[0].pk])
        run.job.refresh_from_db()
        assert run.job.status == Job.Status.RUNNING and run.job.done == 2 and run.job.message == "Inferring"
    with django_capture_on_commit_callbacks(execute=True):
        inference.infer_items(run.pk, [others[1].pk])
    run.refresh_from_db()
    assert run.status == Run.Status.FINISHED and run.job.status == Job.Status.DONE and run.job.done == 3


@pytest.mark.django_db
def test_scoring_is_the_jobs_last_step(monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(dispatch, "send_scoring", lambda run_id: None)  # scored below, by hand
    run = launch(ItemFactory(), django_capture_on_commit_callbacks)
    assert run.status == Run.Status.SCORING
    assert run.job.status == Job.Status.RUNNING and run.job.message == "Scoring …" and run.job.done == 1
    run_scoring.score_run(run.pk)
    run.job.refresh_from_db()
    assert run.job.status == Job.Status.DONE and run.job.report["scores"] is not None


@pytest.mark.django_db
def test_cancelling_the_run_cancels_its_job_and_a_resume_is_a_new_attempt(
        monkeypatch, django_capture_on_commit_callbacks):
    item = ItemFactory()
    other = ItemFactory(change__scene__benchmark=item.benchmark)
    with monkeypatch.context() as patched:
        patched.setattr(dispatch, "send_batch", lambda run, batch: None)
        run = launch(item, django_capture_on_commit_callbacks)
    inference.infer_items(run.pk, [item.pk])
    first = run.job
    cancelled = services.cancel_run(run.pk, UserFactory(role=roles.ADMIN))
    first.refresh_from_db()
    assert cancelled.status == Run.Status.CANCELLED and first.status == Job.Status.CANCELLED
    assert inference.infer_items(run.pk, [other.pk]) == 0  # its batches stop
    with django_capture_on_commit_callbacks(execute=True):
        services.resume_run(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.FINISHED and run.job_id != first.pk
    assert run.job.key == f"model_run:{run.pk}:1" and run.job.status == Job.Status.DONE and run.job.done == 2


@pytest.mark.django_db
def test_the_jobs_cancel_cancels_the_run_and_a_scoring_run_cannot_be_cancelled(
        api_client, monkeypatch, django_capture_on_commit_callbacks):
    admin = UserFactory(role=roles.ADMIN)
    api_client.force_authenticate(admin)
    with monkeypatch.context() as patched:
        patched.setattr(dispatch, "send_batch", lambda run, batch: None)
        run = launch(ItemFactory(), django_capture_on_commit_callbacks)
    answer = api_client.post(f"/api/v1/jobs/{run.job_id}/cancel/")
    run.refresh_from_db()
    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    assert run.status == Run.Status.CANCELLED

    monkeypatch.setattr(dispatch, "send_scoring", lambda run_id: None)
    scoring = launch(ItemFactory(), django_capture_on_commit_callbacks)
    assert scoring.status == Run.Status.SCORING
    assert api_client.post(f"/api/v1/runs/{scoring.pk}/cancel/").status_code == 409
    with pytest.raises(IllegalTransition):
        jobs.cancel_job(scoring.job_id, admin)
    scoring.refresh_from_db()
    assert scoring.status == Run.Status.SCORING and scoring.job.status == Job.Status.RUNNING


@pytest.mark.django_db
def test_a_run_that_cannot_start_fails_its_job_with_the_reason(monkeypatch, django_capture_on_commit_callbacks):
    def broker_down(run, batch):
        raise OperationalError("connection refused")

    monkeypatch.setattr(dispatch, "send_batch", broker_down)
    with pytest.raises(OperationalError):
        launch(ItemFactory(), django_capture_on_commit_callbacks)
    run = Run.objects.get()
    assert run.status == Run.Status.FAILED and run.job.status == Job.Status.FAILED
    assert "task queue" in run.job.message


@pytest.mark.django_db
def test_each_scenes_views_are_rendered_as_a_job_before_the_run_starts(
        room_item, django_capture_on_commit_callbacks):  # noqa: F811 -- the fixture
    run = launch(room_item, django_capture_on_commit_callbacks, visual_input="multi_view:2")
    render = Job.objects.get(kind="render")
    assert render.key == f"render:{run.pk}:{room_item.scene_id}:{run.job_id}" and render.status == Job.Status.DONE
    assert render.report == {"rendered": 2, "views": "multi_view:2"}
    assert run.status == Run.Status.FINISHED and run.job.status == Job.Status.DONE


@pytest.mark.django_db
def test_views_that_cannot_be_rendered_fail_the_render_the_run_and_its_job(
        room_item, monkeypatch, django_capture_on_commit_callbacks):  # noqa: F811 -- the fixture
    def broken(scene, name):
        raise services.renders.RenderError("no points in view")

    monkeypatch.setattr(services.renders, "view_set", broken)
    with pytest.raises(services.renders.RenderError):
        launch(room_item, django_capture_on_commit_callbacks, visual_input="multi_view:2")
    run = Run.objects.get()
    assert run.status == Run.Status.FAILED and run.job.status == Job.Status.FAILED
    assert "no points in view" in run.job.message
    assert Job.objects.get(kind="render").status == Job.Status.FAILED


@pytest.mark.django_db(transaction=True)
def test_the_run_page_follows_the_runs_job_over_the_jobs_websocket(monkeypatch):
    item = ItemFactory()
    other = ItemFactory(change__scene__benchmark=item.benchmark)
    monkeypatch.setattr(dispatch, "send_batch", lambda run, batch: None)
    run = services.launch_run(services.ensure_baseline_model().pk, item.benchmark, None)
    run.refresh_from_db()
    inference.infer_items(run.pk, [item.pk])  # a first batch
    connected, received = messages_around(connect(UserFactory(role=roles.ADMIN), f"/ws/jobs/{run.job_id}/"),
                                          step=lambda: inference.infer_items(run.pk, [other.pk]))
    assert connected
    assert received[0]["kind"] == "model_run" and received[0]["status"] == "running" and received[0]["done"] == 1
    assert received[1]["done"] == 2 and received[1]["total"] == 2
    refused, _ = messages_around(connect(UserFactory(role=roles.ANNOTATOR), f"/ws/jobs/{run.job_id}/"))
    assert not refused
    with pytest.raises(ValueError, match="No route"):  # the run's own socket is no more
        messages_around(connect(UserFactory(role=roles.ADMIN), f"/ws/runs/{run.pk}/"))
