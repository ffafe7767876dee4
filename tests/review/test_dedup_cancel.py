"""Cancelling a near-duplicate search (its job, kind `dedup`): the run's status is its job's, cancelled with
the cancel as its message, and its task stops without writing pairs or raising."""

import pytest

from core import jobs, roles
from core.models import Job
from review import dedup, tasks
from review.models import DedupRun, DuplicatePair
from tests.factories import ChangeFactory, UserFactory
from tests.review.test_review_dedup import bag_of_words_encoder


@pytest.fixture
def copied_changes(monkeypatch):
    """A benchmark with two copies of one change (a pair for a finished run) and the stand-in encoder."""
    first = ChangeFactory(raw_text="The chair has been moved to the window.")
    ChangeFactory(scene=first.scene, raw_text="The chair has been moved to the window.")
    monkeypatch.setattr(dedup, "load_encoder", lambda: bag_of_words_encoder([]))
    return first.scene.benchmark


@pytest.mark.django_db
def test_a_queued_search_cancelled_through_the_api_never_runs(api_client, copied_changes,
                                                               django_capture_on_commit_callbacks):
    reviewer = UserFactory(role=roles.REVIEWER, username="ada")
    with django_capture_on_commit_callbacks():  # the task is not sent
        run = dedup.start_dedup(copied_changes, reviewer)
    api_client.force_authenticate(reviewer)
    assert api_client.post(f"/api/v1/jobs/{run.job_id}/cancel/").status_code == 200
    run.refresh_from_db()
    assert (run.job.status, run.job.message) == (Job.Status.CANCELLED, "Cancelled by ada.")
    shown = api_client.get(f"/api/v1/dedup/{run.pk}/").json()
    assert (shown["status"], shown["error"], shown["progress"]) == ("cancelled", "Cancelled by ada.", 0)

    tasks.find_near_duplicates(run.pk, run.job_id)  # the message arrives after all
    run = DedupRun.objects.select_related("job").get(pk=run.pk)
    assert run.job.status == Job.Status.CANCELLED and run.n_texts == 0 and not run.pairs.exists()


@pytest.mark.django_db
def test_a_running_search_cancelled_between_steps_writes_no_pairs(monkeypatch, copied_changes,
                                                                   django_capture_on_commit_callbacks):
    admin = UserFactory(role=roles.ADMIN, username="grace")
    with django_capture_on_commit_callbacks():
        run = dedup.start_dedup(copied_changes, admin)
    store_vectors = dedup.store_vectors

    def cancelled_after_encoding(version, new):  # the cancel arrives between encoding and comparing
        store_vectors(version, new)
        jobs.cancel_job(run.job_id, admin)

    monkeypatch.setattr(dedup, "store_vectors", cancelled_after_encoding)
    tasks.find_near_duplicates(run.pk, run.job_id)  # does not raise

    job = Job.objects.get(pk=run.job_id)
    assert not DuplicatePair.objects.filter(run=run).exists()
    assert (job.status, job.message, job.report) == (Job.Status.CANCELLED, "Cancelled by grace.", {})

    # asking for the job again runs the search again, to the end
    monkeypatch.setattr(dedup, "store_vectors", store_vectors)
    assert dedup.dedup_job(run.pk) == job.pk
    tasks.find_near_duplicates(run.pk, job.pk)
    run = DedupRun.objects.select_related("job").get(pk=run.pk)
    assert (run.job.status, run.job.message, run.pairs.count()) == (Job.Status.DONE, "1 pairs found", 1)
