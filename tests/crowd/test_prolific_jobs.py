"""#32: Prolific's bulk verbs (sync, review, pay) run as core.Jobs against the loopback fake
(tests/prolific_fake.py): a page or submission per step, the verb's answer as the report, the rows it
wrote; a redelivered task does nothing; Prolific's refusal fails the job with its text; a cancel between
submissions stops further calls; the API answers 202 with the job, the command prints its report."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from benchmarks.models import ContextChange
from core import jobs
from core.models import Job
from crowd import prolific_jobs, tasks
from crowd.models import PlatformSubmission, ProlificBonus
from crowd.prolific import ProlificClient
from tests.crowd import test_prolific_client as flow
from tests.crowd.test_prolific_client import REJECTION, calls, enter, published, submit
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
fake, campaign = flow.fake, flow.campaign  # the fake Prolific and a campaign to run on it


@pytest.fixture
def pushed(monkeypatch):
    """Every state a job pushed to its websocket group, in order."""
    states = []
    monkeypatch.setattr(jobs, "send_to_group", lambda group, event: states.append(event["state"]))
    return states


def submitted(fake, campaign, pids):
    """The campaign on Prolific, each participant's work submitted and awaiting review there and here."""
    study_id, code = published(fake, campaign)
    for pid in pids:
        browser, submission = enter(fake, study_id, pid)
        submit(browser, pid)
        fake.complete(submission, code)
    fake.flush()
    return study_id


class SmallPages(ProlificClient):
    def submission_pages(self, study_id, page_size=10):
        return super().submission_pages(study_id, page_size)


def test_a_sync_is_one_job_a_page_per_step_until_it_ends(fake, campaign, pushed, client,
                                                         django_capture_on_commit_callbacks):
    study_id, _ = published(fake, campaign)
    for n in range(25):
        fake.enter(study_id, f"P{n:02d}")
    scope = f"campaign:{campaign.pk}"
    job = prolific_jobs.start_prolific_job("sync", scope, send=False)
    assert prolific_jobs.start_prolific_job("sync", scope, send=False) == job  # asked twice while queued
    prolific_jobs.run_prolific_job(job.pk, "sync", scope, client=SmallPages())
    job.refresh_from_db()
    assert (job.kind, job.status, job.report, job.message) == ("prolific_sync", "done", {"submissions": 25},
                                                               "25 submissions synced")
    steps = [(s["done"], s["total"], s["message"]) for s in pushed if s["status"] == "running"][1:]
    assert steps == [(10, 25, "Page 1: 10 submissions synced"), (20, 25, "Page 2: 20 submissions synced"),
                     (25, 25, "Page 3: 25 submissions synced")]
    assert PlatformSubmission.objects.filter(study_id=study_id, status="ACTIVE").count() == 25

    before = len(fake.calls)
    tasks.run_prolific_verb(job.pk, "sync", scope, {})  # a redelivered message: nothing sent, nothing changed
    assert len(fake.calls) == before and Job.objects.get(pk=job.pk).finished_at == job.finished_at

    client.force_login(UserFactory(is_staff=True))
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post("/api/v1/crowd/prolific/actions/", {"action": "sync", "scope": scope},
                             content_type="application/json")
    assert answer.status_code == 202 and answer.json()["id"] != job.pk  # the last one ended: a new job
    again = Job.objects.get(pk=answer.json()["id"])
    assert (again.status, again.report) == ("done", {"submissions": 25})
    assert client.get(f"/api/v1/jobs/{again.pk}/").json()["kind"] == "prolific_sync"


def test_review_and_pay_run_as_jobs_from_the_command_and_print_their_reports(fake, campaign):
    study_id = submitted(fake, campaign, ["GOOD", "POOR"])
    ContextChange.objects.filter(author__crowd_worker__worker_id="GOOD").update(status="approved")
    ContextChange.objects.filter(author__crowd_worker__worker_id="POOR").update(status="rejected")
    extra = ContextChange.objects.filter(author__crowd_worker__worker_id="GOOD").first()
    for _ in range(2):  # three approved descriptions: $3, the reward $1, a bonus of $2
        extra.pk = None
        extra.save()
    scope = f"campaign:{campaign.pk}"
    out = io.StringIO()
    call_command("prolific", "review", "--scope", scope, "--reject-message", REJECTION,
                 "--rejection-category", "LOW_EFFORT", stdout=out)
    printed = json.loads(out.getvalue())
    review = Job.objects.get(pk=printed["job"])
    assert printed == {"job": review.pk, "approved": 1, "rejected": 1} and review.kind == "prolific_review"
    assert (review.done, review.total, review.message) == (2, 2, "1 approved, 1 rejected")
    assert sorted(PlatformSubmission.objects.values_list("decision", flat=True)) == ["APPROVE", "REJECT"]
    fake.flush()

    out = io.StringIO()
    call_command("prolific", "pay", "--scope", scope, stdout=out)
    printed = json.loads(out.getvalue())
    pay = Job.objects.get(pk=printed["job"])
    assert pay.kind == "prolific_pay" and pay.status == "done" and pay.report["bonuses"] == {"GOOD": "2.00"}
    assert pay.report["pay"] == "sent" and fake.pay_calls == [pay.report["bulk_bonus"]]
    assert ProlificBonus.objects.get().participant_id == "GOOD"
    assert calls(fake, "POST", r"submissions/bonus-payments/") == [{"study_id": study_id,
                                                                     "csv_bonuses": "GOOD,2.00\n"}]
    tasks.run_prolific_verb(pay.pk, "pay", scope, {})  # redelivered: never paid twice
    assert len(fake.pay_calls) == 1


def test_prolific_refusing_fails_the_job_with_its_reason(fake, campaign, settings):
    published(fake, campaign)
    settings.PROLIFIC_API_TOKEN = "revoked"
    with pytest.raises(CommandError, match="failed: Prolific answered 401: Invalid token."):
        call_command("prolific", "sync", "--scope", f"campaign:{campaign.pk}", stdout=io.StringIO())
    job = Job.objects.get(kind="prolific_sync")
    assert (job.status, job.message) == ("failed", "Prolific answered 401: Invalid token.")


def test_a_cancel_between_submissions_stops_further_calls(fake, campaign):
    submitted(fake, campaign, ["ONE", "TWO", "THREE"])
    ContextChange.objects.update(status="approved")
    scope, admin = f"campaign:{campaign.pk}", UserFactory(is_staff=True)
    job = prolific_jobs.start_prolific_job("review", scope, admin, send=False)

    class CancelledAfterOne(ProlificClient):
        def approve(self, submission_id):
            jobs.cancel_job(job.pk, admin)  # the admin cancels while the first approval is on its way
            return super().approve(submission_id)

    prolific_jobs.run_prolific_job(job.pk, "review", scope, client=CancelledAfterOne())
    job.refresh_from_db()
    assert job.status == "cancelled"  # its progress after the cancel changed nothing
    assert len(calls(fake, "POST", r"submissions/\w+/transition/")) == 1
    assert sorted(PlatformSubmission.objects.values_list("decision", flat=True)) == ["", "", "APPROVE"]
