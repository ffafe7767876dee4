"""Jobs: one record, API and websocket for every long-running task (core/jobs.py)."""

import pytest

from core import consumers, jobs, roles
from core.models import Job
from tests.factories import UserFactory
from tests.websockets import connect, messages_around


@pytest.mark.django_db
def test_asking_twice_for_the_same_work_returns_the_same_job():
    first = jobs.request_job("release_export", "release:1:v1", subject="release v1", total=3)
    again = jobs.request_job("release_export", "release:1:v1", subject="release v1", total=3)
    assert first.created and not again.created
    assert again.job.pk == first.job.pk and Job.objects.count() == 1


@pytest.mark.django_db
def test_a_job_runs_reports_progress_and_ends_with_its_report():
    job = jobs.request_job("stage", "stage:1", total=4).job
    with jobs.running_job(job.pk, message="filtering") as running:
        assert running.status == Job.Status.RUNNING
        jobs.advance_job(job.pk, step=1)
        jobs.advance_job(job.pk, step=2, message="three of four")
        job.refresh_from_db()
        assert (job.done, job.message, jobs.job_state(job)["percent"]) == (3, "three of four", 75.0)
    jobs.finish_job(job.pk, {"kept": 3, "dropped": {"ambiguous": 1}})
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.done == 4 and job.finished_at is not None
    assert job.report == {"kept": 3, "dropped": {"ambiguous": 1}}
    assert not jobs.request_job("stage", "stage:1").created  # done work is not done again


@pytest.mark.django_db
def test_a_redelivered_task_does_not_run_the_job_twice():
    job = jobs.request_job("dedup", "dedup:1").job
    assert jobs.start_job(job.pk) is not None
    with jobs.running_job(job.pk) as second_delivery:
        assert second_delivery is None


@pytest.mark.django_db
def test_a_failing_block_fails_the_job_and_asking_again_queues_it_again():
    job = jobs.request_job("generation", "generate:1", total=10).job
    with pytest.raises(ValueError), jobs.running_job(job.pk):
        jobs.advance_job(job.pk, done=4)
        raise ValueError("scene 3 has no objects")
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.message == "ValueError: scene 3 has no objects"
    retried = jobs.request_job("generation", "generate:1", total=10)
    assert retried.created and retried.job.pk == job.pk
    retried.job.refresh_from_db()
    assert (retried.job.status, retried.job.done, retried.job.message) == (Job.Status.QUEUED, 0, "")


@pytest.mark.django_db
def test_admins_see_every_job_reviewers_their_own_and_crowd_none(api_client):
    admin, reviewer, other = (UserFactory(role=roles.ADMIN), UserFactory(role=roles.REVIEWER),
                              UserFactory(role=roles.REVIEWER))
    mine = jobs.request_job("dedup", "dedup:mine", user=reviewer).job
    theirs = jobs.request_job("dedup", "dedup:theirs", user=other).job

    api_client.force_authenticate(admin)
    listed = api_client.get("/api/v1/jobs/").json()
    assert listed["count"] == 2 and {row["id"] for row in listed["results"]} == {mine.pk, theirs.pk}

    api_client.force_authenticate(reviewer)
    assert [row["id"] for row in api_client.get("/api/v1/jobs/").json()["results"]] == [mine.pk]
    assert api_client.get(f"/api/v1/jobs/{mine.pk}/").json()["status"] == "queued"
    assert api_client.get(f"/api/v1/jobs/{theirs.pk}/").status_code == 404

    for role in (roles.ANNOTATOR, roles.EVALUATOR):
        api_client.force_authenticate(UserFactory(role=role))
        assert api_client.get("/api/v1/jobs/").status_code == 403
        assert api_client.get(f"/api/v1/jobs/{mine.pk}/").status_code == 403


@pytest.mark.django_db
def test_job_list_filters_and_refuses_an_unknown_status(api_client):
    api_client.force_authenticate(UserFactory(role=roles.ADMIN))
    jobs.request_job("dedup", "dedup:a")
    done = jobs.request_job("stage", "stage:a").job
    jobs.start_job(done.pk)
    jobs.finish_job(done.pk)
    assert [row["id"] for row in api_client.get("/api/v1/jobs/?status=done").json()["results"]] == [done.pk]
    assert api_client.get("/api/v1/jobs/?kind=dedup").json()["count"] == 1
    refused = api_client.get("/api/v1/jobs/?status=finished")
    assert refused.status_code == 400 and "status" in refused.json()


@pytest.mark.django_db(transaction=True)
def test_the_websocket_sends_the_state_then_each_change():
    admin = UserFactory(role=roles.ADMIN)
    job = jobs.request_job("release_export", "release:ws", total=2).job
    jobs.start_job(job.pk)
    connected, received = messages_around(connect(admin, f"/ws/jobs/{job.pk}/"),
                                          step=lambda: jobs.advance_job(job.pk, step=1, message="csv written"))
    assert connected
    assert received[0]["status"] == "running" and received[0]["done"] == 0
    assert received[1]["done"] == 1 and received[1]["percent"] == 50.0 and received[1]["message"] == "csv written"


@pytest.mark.django_db(transaction=True)
def test_a_change_while_the_socket_reads_its_first_state_still_reaches_it(monkeypatch):
    """The job ends between the socket's first read and its joining the job's group (the embedded stack's
    pipeline widgets once stayed at "running" for good, their socket up): the socket joins first, so the
    change comes after the state it read."""
    admin = UserFactory(role=roles.ADMIN)
    job = jobs.request_job("stage", "stage:race").job
    jobs.start_job(job.pk)
    read = consumers.job_state

    def read_then_finish(found):
        state = read(found)
        jobs.finish_job(job.pk)
        return state

    monkeypatch.setattr(consumers, "job_state", read_then_finish)
    connected, received = messages_around(connect(admin, f"/ws/jobs/{job.pk}/"), step=lambda: None)
    assert connected
    assert [message["status"] for message in received] == ["running", "done"]


@pytest.mark.django_db(transaction=True)
def test_the_websocket_turns_away_who_may_not_see_the_job():
    job = jobs.request_job("dedup", "dedup:ws", user=UserFactory(role=roles.REVIEWER)).job
    for user in (UserFactory(role=roles.ANNOTATOR), UserFactory(role=roles.REVIEWER)):
        connected, _ = messages_around(connect(user, f"/ws/jobs/{job.pk}/"))
        assert not connected


@pytest.mark.django_db
def test_a_job_whose_worker_died_is_failed_by_the_sweep_and_can_be_asked_for_again():
    from datetime import timedelta

    from django.utils import timezone

    from config.celery import app
    from core.tasks import fail_stalled_running_jobs

    silent = jobs.request_job("stage", "stage:silent").job
    jobs.start_job(silent.pk)
    busy = jobs.request_job("stage", "stage:busy", total=10).job
    jobs.start_job(busy.pk)
    Job.objects.filter(pk__in=[silent.pk, busy.pk]).update(updated_at=timezone.now() - timedelta(hours=1))
    jobs.advance_job(busy.pk, step=1)  # progress is a sign of life

    assert fail_stalled_running_jobs() == 1
    silent.refresh_from_db()
    busy.refresh_from_db()
    assert silent.status == Job.Status.FAILED and "worker stopped" in silent.message
    assert busy.status == Job.Status.RUNNING
    assert jobs.request_job("stage", "stage:silent").created  # queued again
    assert app.conf.beat_schedule["fail-stalled-jobs"]["task"] == "core.tasks.fail_stalled_running_jobs"
