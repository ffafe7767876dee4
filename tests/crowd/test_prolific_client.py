"""A campaign run on Prolific end to end against the loopback fake (tests/prolific_fake.py), which
implements Prolific's documented endpoints and signs its webhook deliveries the documented way:
hooks set up → publish → participants enter through the placeholders → submit → AWAITING REVIEW
delivery → approve and reject with the documented bodies → bonus set up and paid exactly once (a 429
on the pay call included); redelivery, out-of-order events, a wrong signature."""

import io
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation import services as annotation_services
from annotation.models import Assignment, Campaign
from benchmarks.models import ContextChange
from core import roles
from crowd import prolific_services
from crowd.models import PlatformSubmission, ProlificBonus, ProlificHookSecret, ProlificStudy, WebhookEvent
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory
from tests.prolific_fake import FakeProlific, post_delivery

pytestmark = pytest.mark.django_db

HOOK_URL = "http://testserver/api/v1/crowd/prolific/webhook/"
REJECTION = ("Thank you for taking part. Your descriptions did not follow the study's instructions: each one had "
             "to name the object that moved and where it went.")
TEXT = "The chair has been moved from the desk to the window next to the bookshelf."


@pytest.fixture
def fake(settings):
    with FakeProlific(subscription_body="flat") as fake:
        settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL = fake.token, fake.base_url
        settings.PROLIFIC_WEBHOOK_SECRET = ""  # only the secret set up through the API signs
        hooks = Client()
        fake.transport = lambda url, headers, body: post_delivery(hooks, headers, body, urlsplit(url).path).status_code
        yield fake


@pytest.fixture
def campaign():
    benchmark = BenchmarkFactory()
    scenes = [SceneFactory(benchmark=benchmark) for _ in range(2)]
    return annotation_services.create_campaign(benchmark, "Moves", "movement", scenes, pay_cents=100, pay_unit=1,
                                               descriptions_per_assignment=1)


def published(fake, campaign):
    prolific_services.set_up_hooks(fake.workspace_id, HOOK_URL)
    result = prolific_services.publish(f"campaign:{campaign.pk}", "http://testserver")
    fake.flush()
    return result["study"], result["completion_code"]


def enter(fake, study_id, pid):
    """The participant opens the study URL with Prolific's placeholders filled in."""
    browser = Client()
    url = urlsplit(fake.enter(study_id, pid))
    response = browser.post(url.path, {k: v[0] for k, v in parse_qs(url.query).items()})
    assert response.status_code in (200, 302), response.content[:300]
    return browser, parse_qs(url.query)["SESSION_ID"][0]


def submit(browser, pid):
    assignment = Assignment.objects.get(worker__crowd_worker__worker_id=pid)
    response = browser.post(f"/api/v1/assignments/{assignment.pk}/submit/", {"text": TEXT},
                            content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()["completion_url"]


def calls(fake, method, pattern):
    return [body for m, path, body in fake.calls if m == method and re.fullmatch(pattern, path)]


@pytest.mark.parametrize("body_shape", ["flat", "results"])
def test_hooks_are_set_up_with_a_stored_secret_and_confirmed_subscriptions(fake, body_shape):
    fake.subscription_body = body_shape
    result = prolific_services.set_up_hooks(fake.workspace_id, HOOK_URL)
    assert len(result["subscriptions"]) == 4 and all(s["confirmed"] for s in fake.subscriptions.values())
    assert ProlificHookSecret.objects.get().value == fake.secrets[fake.workspace_id]["value"]
    confirm = calls(fake, "POST", r"hooks/subscriptions/\w+/")
    assert [body["secret"] for body in confirm] == [s["hook_secret"] for s in fake.subscriptions.values()]


def test_a_campaign_runs_on_prolific_from_publish_to_a_bonus_paid_once(fake, campaign):
    study_id, code = published(fake, campaign)
    study = fake.studies[study_id]
    assert study["status"] == "ACTIVE" and study["reward"] == 100 and study["total_available_places"] == 2
    assert study["external_study_url"] == (f"http://testserver/crowd/campaigns/{campaign.pk}/?PROLIFIC_PID="
                                           "{{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    assert study["completion_codes"][0]["code"] == code
    assert study["completion_codes"][0]["actions"] == [{"action": "MANUALLY_REVIEW"}]
    assert ProlificStudy.objects.get(prolific_id=study_id).status == "ACTIVE"

    good, good_submission = enter(fake, study_id, "GOOD")
    poor, poor_submission = enter(fake, study_id, "POOR")
    assert PlatformSubmission.objects.get(submission_id=good_submission).scope == f"campaign:{campaign.pk}"
    for browser, pid, submission in ((good, "GOOD", good_submission), (poor, "POOR", poor_submission)):
        back = submit(browser, pid)
        assert back == f"https://app.prolific.com/submissions/complete?cc={code}"
        assert fake.complete(submission, parse_qs(urlsplit(back).query)["cc"][0]) == "AWAITING REVIEW"
    assert fake.flush() == [200, 200]
    assert PlatformSubmission.objects.get(submission_id=good_submission).status == "AWAITING REVIEW"

    # The platform's decisions: GOOD's work approved (three descriptions: $3, reward $1, bonus $2), POOR's refused.
    ContextChange.objects.filter(author__crowd_worker__worker_id="GOOD").update(status="approved")
    ContextChange.objects.filter(author__crowd_worker__worker_id="POOR").update(status="rejected")
    extra = ContextChange.objects.filter(author__crowd_worker__worker_id="GOOD").first()
    for _ in range(2):
        extra.pk = None
        extra.save()
    assert prolific_services.review(f"campaign:{campaign.pk}", REJECTION, "LOW_EFFORT") == {"approved": 1,
                                                                                           "rejected": 1}
    assert calls(fake, "POST", rf"submissions/{good_submission}/transition/") == [{"action": "APPROVE"}]
    assert calls(fake, "POST", rf"submissions/{poor_submission}/transition/") == [
        {"action": "REJECT", "message": REJECTION, "rejection_category": "LOW_EFFORT"}]
    fake.flush()
    assert PlatformSubmission.objects.get(submission_id=good_submission).status == "APPROVED"
    assert PlatformSubmission.objects.get(submission_id=poor_submission).status == "REJECTED"

    fake.fail("POST", r"bulk-bonus-payments/\w+/pay/", status=429)  # wallet contention, nothing paid
    result = prolific_services.pay_bonuses(f"campaign:{campaign.pk}", sleep=lambda s: None)
    assert result["bonuses"] == {"GOOD": "2.00"}
    assert calls(fake, "POST", r"submissions/bonus-payments/") == [{"study_id": study_id,
                                                                     "csv_bonuses": "GOOD,2.00\n"}]
    assert fake.pay_calls == [result["bulk_bonus"]]  # the 429 paid nothing; the one re-send paid once
    assert fake.submissions[good_submission]["bonus_payments"] == [200]
    again = prolific_services.pay_bonuses(f"campaign:{campaign.pk}")
    assert again["bonuses"] == {} and fake.pay_calls == [result["bulk_bonus"]]
    assert ProlificBonus.objects.get().state == "paid"  # reconciled from the submission's bonus_payments

    prolific_services.message(f"campaign:{campaign.pk}", ["GOOD"], "Thank you!")
    assert fake.messages == [{"ids": ["GOOD"], "study_id": study_id, "body": "Thank you!"}]


def test_a_pay_call_that_got_no_answer_is_not_sent_again(fake, campaign):
    study_id, code = published(fake, campaign)
    browser, submission = enter(fake, study_id, "GOOD")
    submit(browser, "GOOD")
    fake.complete(submission, code)
    fake.flush()
    ContextChange.objects.update(status="approved")
    ContextChange.objects.create(**{f: getattr(ContextChange.objects.first(), f)
                                    for f in ("scene", "change_type", "raw_text", "author", "status", "provenance")})
    prolific_services.review(f"campaign:{campaign.pk}")
    fake.flush()
    fake.fail("POST", r"bulk-bonus-payments/\w+/pay/", status=500)  # an unknown outcome
    result = prolific_services.pay_bonuses(f"campaign:{campaign.pk}", sleep=lambda s: None)
    assert result["pay"].startswith("unknown")
    assert fake.pay_calls == [] and ProlificBonus.objects.get().state == "pay_sent"
    assert prolific_services.pay_bonuses(f"campaign:{campaign.pk}")["bonuses"] == {}
    assert fake.pay_calls == []  # left for a person to check, never paid twice


def test_a_429_on_the_approve_call_is_retried_and_approves_once(fake, campaign):
    study_id, code = published(fake, campaign)
    browser, submission = enter(fake, study_id, "GOOD")
    submit(browser, "GOOD")
    fake.complete(submission, code)
    fake.flush()
    ContextChange.objects.update(status="approved")
    fake.fail("POST", rf"submissions/{submission}/transition/", status=429, times=2)
    client = prolific_services.ProlificClient(sleep=lambda s: None)
    assert prolific_services.review(f"campaign:{campaign.pk}", client=client)["approved"] == 1
    assert len(calls(fake, "POST", rf"submissions/{submission}/transition/")) == 3
    fake.flush()
    assert PlatformSubmission.objects.get(submission_id=submission).status == "APPROVED"


def test_redelivered_out_of_order_and_wrongly_signed_events_from_the_fake(fake, campaign):
    study_id, code = published(fake, campaign)
    browser, submission = enter(fake, study_id, "GONE")
    awaiting = fake.set_submission_status(submission, "AWAITING REVIEW")
    approved = fake.set_submission_status(submission, "APPROVED")  # most often in the same second: ranked
    fake.outbox.reverse()  # the newer event arrives first
    assert fake.flush() == [200, 200]
    assert PlatformSubmission.objects.get(submission_id=submission).status == "APPROVED"
    subscription = next(s for s in fake.subscriptions.values() if s["event_type"] == "submission.status.change")
    before = WebhookEvent.objects.count()
    assert fake.deliver(approved, subscription) == 200 and fake.deliver(awaiting, subscription) == 200
    assert WebhookEvent.objects.count() == before  # redeliveries: acknowledged, nothing recorded or changed

    fake.create_secret({"workspace_id": fake.workspace_id}, {})  # rotated on Prolific, not here
    fake.retries = 2
    fake.set_submission_status(submission, "RETURNED")
    assert fake.flush() == [403]
    assert fake.events[-1]["status"] == "FAILED"
    assert Assignment.objects.get().status == "leased"


def test_dry_runs_send_nothing_and_the_actions_are_for_admins_only(fake, campaign, client):
    plan = prolific_services.publish(f"campaign:{campaign.pk}", "http://testserver", dry_run=True)
    assert plan["requests"][0][2]["reward"] == 100 and fake.calls == []
    annotator = UserFactory()
    roles.grant_role(annotator, roles.ANNOTATOR)
    client.force_login(annotator)
    body = {"action": "publish", "scope": f"campaign:{campaign.pk}", "dry_run": True}
    assert client.post("/api/v1/crowd/prolific/actions/", body, content_type="application/json").status_code == 403
    client.force_login(UserFactory(is_staff=True))
    answer = client.post("/api/v1/crowd/prolific/actions/", body, content_type="application/json")
    assert answer.status_code == 200 and answer.json()["dry_run"] is True and fake.calls == []
    assert client.post("/api/v1/crowd/prolific/actions/", {**body, "dry_run": False},
                       content_type="application/json").status_code == 200
    assert Campaign.objects.get().completion_url.startswith("https://app.prolific.com/submissions/complete?cc=")
    again = client.post("/api/v1/crowd/prolific/actions/", {**body, "dry_run": False}, content_type="application/json")
    assert again.status_code == 409 and list(again.json()) == ["scope"]
    short = client.post("/api/v1/crowd/prolific/actions/", {"action": "review", "scope": f"campaign:{campaign.pk}",
                                                            "reject_message": "Too short.",
                                                            "rejection_category": "LOW_EFFORT"},
                        content_type="application/json")
    assert short.status_code == 400 and list(short.json()) == ["message"]


def test_the_command_prints_a_dry_run_and_names_a_bad_scope(fake, campaign):
    out = io.StringIO()
    call_command("prolific", "publish", "--scope", f"campaign:{campaign.pk}", "--site-url", "https://example.org",
                 "--dry-run", stdout=out)
    plan = json.loads(out.getvalue())
    assert plan["dry_run"] and plan["requests"][0][2]["external_study_url"].startswith(
        f"https://example.org/crowd/campaigns/{campaign.pk}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}")
    assert fake.calls == []
    with pytest.raises(CommandError, match="scope: There is no campaign 999999"):
        call_command("prolific", "publish", "--scope", "campaign:999999", "--site-url", "https://example.org")


def test_sync_reads_every_page_of_submissions(fake, campaign):
    study_id, _ = published(fake, campaign)
    for n in range(25):
        fake.enter(study_id, f"P{n:02d}")
    fake.flush()
    client = prolific_services.ProlificClient()
    assert len(client.submissions(study_id, page_size=10)) == 25
    assert len(calls(fake, "GET", r"submissions/")) == 3
    assert prolific_services.sync_submissions(f"campaign:{campaign.pk}") == {"submissions": 25}
    assert PlatformSubmission.objects.filter(study_id=study_id, status="ACTIVE").count() == 25
