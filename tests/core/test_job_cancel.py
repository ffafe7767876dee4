"""Cancelling a job (core/jobs.py cancel_job): who may, what moves, and what its task sees afterwards."""

import pytest

from core import jobs, roles
from core.errors import IllegalTransition
from core.models import Job
from tests.factories import UserFactory


@pytest.fixture
def stopped_work(monkeypatch):
    """A kind's cancel handler that records the jobs it was asked to stop (the registry restored after)."""
    monkeypatch.setattr(jobs, "_cancel_handlers", {})
    stopped = []
    jobs.on_cancel("dedup", lambda job: stopped.append((job.pk, job.status)))
    return stopped


@pytest.mark.django_db
def test_a_running_job_cancelled_stops_its_work_and_its_task_just_stops(stopped_work):
    reviewer = UserFactory(role=roles.REVIEWER, username="ada")
    job = jobs.request_job("dedup", "dedup:1", total=4, user=reviewer).job
    jobs.start_job(job.pk)
    jobs.advance_job(job.pk, step=1)
    cancelled = jobs.cancel_job(job.pk, reviewer)
    assert cancelled.status == Job.Status.CANCELLED and cancelled.message == "Cancelled by ada."
    assert cancelled.finished_at is not None
    assert stopped_work == [(job.pk, Job.Status.CANCELLED)]  # the handler sees the job moved
    assert jobs.job_cancelled(job.pk)
    # the task's later progress and its end change nothing, and do not raise
    jobs.advance_job(job.pk, step=2, message="more")
    jobs.finish_job(job.pk, {"pairs": 3})
    jobs.fail_job(job.pk, "late error")
    job.refresh_from_db()
    assert (job.status, job.done, job.message, job.report) == (Job.Status.CANCELLED, 1, "Cancelled by ada.", {})


@pytest.mark.django_db
def test_a_queued_job_cancelled_is_never_started_and_asking_again_queues_it(stopped_work):
    admin = UserFactory(role=roles.ADMIN)
    job = jobs.request_job("stage", "stage:1", total=3).job
    jobs.cancel_job(job.pk, admin)
    assert stopped_work == []  # only the test's dedup handler is registered here
    with jobs.running_job(job.pk) as running:
        assert running is None
    again = jobs.request_job("stage", "stage:1", total=3)
    again.job.refresh_from_db()
    assert again.created and again.job.pk == job.pk
    assert (again.job.status, again.job.done, again.job.message) == (Job.Status.QUEUED, 0, "")
    assert not jobs.job_cancelled(job.pk)


@pytest.mark.django_db
def test_a_job_that_has_ended_cannot_be_cancelled(stopped_work):
    admin = UserFactory(role=roles.ADMIN)
    job = jobs.request_job("dedup", "dedup:2").job
    jobs.start_job(job.pk)
    jobs.finish_job(job.pk)
    with pytest.raises(IllegalTransition):
        jobs.cancel_job(job.pk, admin)
    jobs.cancel_job(jobs.request_job("dedup", "dedup:3").job.pk, admin)
    with pytest.raises(IllegalTransition):
        jobs.cancel_job(Job.objects.get(key="dedup:3").pk, admin)
    assert stopped_work == [(Job.objects.get(key="dedup:3").pk, Job.Status.CANCELLED)]


@pytest.mark.django_db
def test_a_handler_that_fails_leaves_the_job_as_it_was(monkeypatch):
    monkeypatch.setattr(jobs, "_cancel_handlers", {})

    def refuse(job):
        raise IllegalTransition("The run has already been scored.")

    jobs.on_cancel("model_run", refuse)
    job = jobs.request_job("model_run", "run:1").job
    with pytest.raises(IllegalTransition):
        jobs.cancel_job(job.pk, UserFactory(role=roles.ADMIN))
    job.refresh_from_db()
    assert job.status == Job.Status.QUEUED


@pytest.mark.django_db
def test_the_cancel_endpoint_reviewers_their_own_admins_any(api_client, stopped_work):
    reviewer, other = UserFactory(role=roles.REVIEWER), UserFactory(role=roles.REVIEWER)
    mine = jobs.request_job("dedup", "dedup:mine", user=reviewer).job
    theirs = jobs.request_job("dedup", "dedup:theirs", user=other).job

    api_client.force_authenticate(reviewer)
    answer = api_client.post(f"/api/v1/jobs/{mine.pk}/cancel/")
    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    assert answer.json()["message"] == f"Cancelled by {reviewer.username}."
    assert api_client.post(f"/api/v1/jobs/{theirs.pk}/cancel/").status_code == 404
    assert api_client.post("/api/v1/jobs/999999/cancel/").status_code == 404
    again = api_client.post(f"/api/v1/jobs/{mine.pk}/cancel/")
    assert again.status_code == 409 and "status" in again.json()

    api_client.force_authenticate(UserFactory(role=roles.ANNOTATOR))
    assert api_client.post(f"/api/v1/jobs/{theirs.pk}/cancel/").status_code == 403
    api_client.force_authenticate(UserFactory(role=roles.ADMIN))
    assert api_client.post(f"/api/v1/jobs/{theirs.pk}/cancel/").status_code == 200
    theirs.refresh_from_db()
    assert theirs.status == Job.Status.CANCELLED


def test_the_cancel_endpoint_is_in_the_schema():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    answers = schema["paths"]["/api/v1/jobs/{id}/cancel/"]["post"]["responses"]
    assert {"200", "404", "409"} <= set(answers)
