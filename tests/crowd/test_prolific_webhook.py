"""Prolific's webhook receiver against deliveries signed and shaped exactly as Prolific documents them
(tests/prolific_fake.py; ../shared/CROWD-CONTRACTS.md §1): the signature over the request timestamp and
the raw body, the event id in X-Event-ID, the order from X-Timestamp, every submission status, study
events, and a return that frees only the campaign the submission entered."""

import hashlib
import hmac
import json

import pytest

from annotation import services as annotation_services
from annotation.models import Assignment
from crowd.models import PlatformSubmission, ProlificHookSecret, ProlificStudy, WebhookEvent
from tests.factories import BenchmarkFactory, SceneFactory
from tests.prolific_fake import delivery, post_delivery, sign

SECRET = "workspace-secret"
T0 = 1_780_000_000

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def secret(settings):
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET


def campaign(name="Moves"):
    benchmark = BenchmarkFactory()
    return annotation_services.create_campaign(benchmark, name, "movement", [SceneFactory(benchmark=benchmark)])


def enter(client, target, pid="PID1", session="SUB1"):
    response = client.post(f"/crowd/campaigns/{target.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "STUDY1",
                                                            "SESSION_ID": session})
    assert response.status_code in (200, 302), response.content[:300]


def submission_event(status, submission="SUB1", pid="PID1"):
    return {"resource_id": submission, "event_type": "submission.status.change", "participant_id": pid,
            "status": status}


def send(client, payload, event_id="evt-1", sent_at=T0, secret=SECRET, **options):
    return post_delivery(client, *delivery(secret, payload, event_id, sent_at, **options))


def test_a_documented_return_is_accepted_and_frees_only_the_campaign_it_entered(client):
    first, second = campaign("First"), campaign("Second")
    enter(client, first, session="SUB1")
    enter(client, second, session="SUB2")  # the same browser, the participant's next study
    assert Assignment.objects.filter(status="leased").count() == 2
    response = send(client, submission_event("RETURNED", "SUB1"))
    assert response.status_code == 200 and response.json() == {"handled": True}
    assert Assignment.objects.get(campaign=first).status == "released"
    assert Assignment.objects.get(campaign=second).status == "leased"
    assert PlatformSubmission.objects.get(submission_id="SUB1").status == "RETURNED"
    assert WebhookEvent.objects.get().verified_by == "raw"


@pytest.mark.parametrize("status", ["TIMED-OUT", "timed_out", "REJECTED"])
def test_timed_out_and_rejected_free_the_work_too(client, status):
    enter(client, campaign())
    assert send(client, submission_event(status)).status_code == 200
    assert Assignment.objects.get().status == "released"


def test_a_redelivery_is_acknowledged_and_changes_nothing(client):
    enter(client, campaign())
    assert send(client, submission_event("RETURNED")).json() == {"handled": True}
    Assignment.objects.update(status="leased")  # leased again since
    again = send(client, submission_event("RETURNED"), sent_at=T0, timestamp=str(T0 + 60))  # re-signed retry
    assert again.status_code == 200 and again.json() == {"handled": False}
    assert Assignment.objects.get().status == "leased" and WebhookEvent.objects.count() == 1


@pytest.mark.parametrize("signature", ["wrong-secret", "hex", "no-timestamp", "none"])
def test_a_wrongly_signed_delivery_is_refused_and_changes_nothing(client, signature):
    enter(client, campaign())
    headers, body = delivery(SECRET, submission_event("RETURNED"), "evt-bad", T0)
    if signature == "wrong-secret":
        headers, body = delivery("rotated-away", submission_event("RETURNED"), "evt-bad", T0)
    elif signature == "hex":  # the project's old reading: a hex HMAC of the body alone
        headers["X-Prolific-Request-Signature"] = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    elif signature == "no-timestamp":
        del headers["X-Prolific-Request-Timestamp"]
    else:
        del headers["X-Prolific-Request-Signature"]
    assert post_delivery(client, headers, body).status_code == 403
    assert Assignment.objects.get().status == "leased" and not WebhookEvent.objects.exists()


def test_an_older_event_never_overwrites_a_newer_state(client):
    enter(client, campaign())
    assert send(client, submission_event("APPROVED"), "evt-2", sent_at=T0 + 10).json() == {"handled": True}
    late = send(client, submission_event("AWAITING REVIEW"), "evt-1", sent_at=T0)
    assert late.json() == {"handled": True}
    assert PlatformSubmission.objects.get().status == "APPROVED"
    assert WebhookEvent.objects.get(event_id="evt-1").stale
    stale_return = send(client, submission_event("RETURNED"), "evt-0", sent_at=T0 - 5)
    assert stale_return.status_code == 200 and Assignment.objects.get().status == "leased"


def test_every_documented_status_is_recorded_and_unknown_ones_tolerated(client):
    enter(client, campaign())
    for step, status in enumerate(["RESERVED", "ACTIVE", "PROCESSING", "AWAITING_REVIEW", "SCREENED OUT",
                                   "PARTIALLY APPROVED", "APPROVED"]):
        assert send(client, submission_event(status), f"evt-{step}", sent_at=T0 + step).status_code == 200
        assert PlatformSubmission.objects.get().status == status.replace("_", " ")
    assert Assignment.objects.get().status == "leased"


def test_compact_json_verifies_over_the_raw_body_and_the_docs_form_is_a_logged_fallback(client, caplog):
    enter(client, campaign())
    assert send(client, submission_event("ACTIVE"), "evt-compact", compact=True).status_code == 200
    assert WebhookEvent.objects.get(event_id="evt-compact").verified_by == "raw"
    # Signed over the body as the docs' example re-serialises it, sent compact.
    payload = submission_event("AWAITING REVIEW")
    body = json.dumps(payload, separators=(",", ":")).encode()
    headers = {"X-Prolific-Request-Timestamp": str(T0), "X-Event-ID": "evt-docs", "X-Timestamp": str(T0 + 1),
               "X-Prolific-Request-Signature": sign(SECRET, str(T0), json.dumps(payload).encode())}
    assert post_delivery(client, headers, body).status_code == 200
    assert WebhookEvent.objects.get(event_id="evt-docs").verified_by == "reserialised"
    assert "re-serialised" in caplog.text


def test_study_events_are_recorded_and_unknown_types_acknowledged(client):
    status = {"resource_id": "STUDY1", "event_type": "study.status.change", "metadata": {"reason": "slots"},
              "status": "PAUSED"}
    assert send(client, status, "evt-s1", sent_at=T0 + 5).status_code == 200
    progress = {"resource_id": "STUDY1", "event_type": "study.progress.change"}
    assert send(client, progress, "evt-s2", sent_at=T0 + 6).status_code == 200
    study = ProlificStudy.objects.get(prolific_id="STUDY1")
    assert study.status == "PAUSED" and study.last_event["event_type"] == "study.progress.change"
    older = send(client, {**status, "status": "ACTIVE"}, "evt-s0", sent_at=T0)
    assert older.status_code == 200 and ProlificStudy.objects.get().status == "PAUSED"
    odd = send(client, {"resource_id": "X", "event_type": "participant.submission.created"}, "evt-u")
    assert odd.status_code == 200 and WebhookEvent.objects.filter(event_id="evt-u").exists()


def test_a_delivery_without_an_event_id_is_refused_by_name(client):
    headers, body = delivery(SECRET, submission_event("RETURNED"), "", T0)
    response = post_delivery(client, headers, body)
    assert response.status_code == 400 and list(response.json()) == ["X-Event-ID"]


def test_the_stored_workspace_secret_signs_and_the_one_before_it_lasts_a_day(client, settings):
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    ProlificHookSecret.objects.create(workspace_id="w", value="old")
    ProlificHookSecret.objects.create(workspace_id="w", value="new")
    assert send(client, submission_event("ACTIVE"), "evt-new", secret="new").status_code == 200
    assert send(client, submission_event("ACTIVE"), "evt-old", secret="old").status_code == 200
    ProlificHookSecret.objects.filter(value="old").update(created_at="2020-01-01T00:00:00Z")
    ProlificHookSecret.objects.filter(value="new").update(created_at="2020-01-02T00:00:00Z")
    assert send(client, submission_event("ACTIVE"), "evt-old-2", secret="old").status_code == 403
