"""#44: webhooks ordered by what is signed. X-Event-ID and X-Timestamp are not covered by Prolific's
signature: a captured delivery re-sent under a new event id is dropped (the same signature, which covers
the request timestamp and the body), and an X-Timestamp later than the signed request timestamp is
capped at it, so a far-future one cannot freeze a submission's status."""

import time

import pytest

from annotation import services as annotation_services
from annotation.models import Assignment
from crowd.models import PlatformSubmission, WebhookEvent
from crowd.webhooks import event_time
from tests.factories import BenchmarkFactory, SceneFactory
from tests.prolific_fake import delivery, post_delivery

SECRET = "workspace-secret"

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def secret(settings):
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET


@pytest.fixture
def leased(client):
    benchmark = BenchmarkFactory()
    campaign = annotation_services.create_campaign(benchmark, "Moves", "movement", [SceneFactory(benchmark=benchmark)])
    entered = client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": "PID1", "STUDY_ID": "STUDY1",
                                                              "SESSION_ID": "SUB1"})
    assert entered.status_code == 302
    return campaign


def event(status):
    return {"resource_id": "SUB1", "event_type": "submission.status.change", "participant_id": "PID1",
            "status": status}


def test_a_captured_return_re_sent_with_a_new_event_id_frees_nothing(client, leased):
    now = int(time.time())
    headers, body = delivery(SECRET, event("RETURNED"), "evt-1", now, timestamp=str(now))
    assert post_delivery(client, headers, body).json() == {"handled": True}
    Assignment.objects.update(status="leased")  # the participant's new lease since
    for new_id in ("evt-forged-1", "evt-forged-2"):
        replay = post_delivery(client, {**headers, "X-Event-ID": new_id}, body)
        assert replay.status_code == 200 and replay.json() == {"handled": False}
    assert Assignment.objects.get().status == "leased"
    assert WebhookEvent.objects.count() == 1


def test_a_far_future_x_timestamp_is_capped_at_the_signed_time(client, leased):
    now = int(time.time())
    headers, body = delivery(SECRET, event("AWAITING REVIEW"), "evt-1", now + 10**8, timestamp=str(now))
    assert post_delivery(client, headers, body).json() == {"handled": True}
    submission = PlatformSubmission.objects.get()
    assert submission.status_at == now and WebhookEvent.objects.get().sent_at == now
    # The next genuine event, signed a minute later, is newer and applies.
    later = delivery(SECRET, event("APPROVED"), "evt-2", now + 60, timestamp=str(now + 60))
    assert post_delivery(client, *later).json() == {"handled": True}
    assert PlatformSubmission.objects.get().status == "APPROVED"


def test_a_genuine_retry_keeps_its_event_time_and_is_handled_once(client, leased):
    now = int(time.time())
    first = delivery(SECRET, event("APPROVED"), "evt-2", now - 30, timestamp=str(now - 30))
    assert post_delivery(client, *first).json() == {"handled": True}
    # An older event retried (re-signed) later: its own X-Timestamp orders it, so it is stale.
    retried = delivery(SECRET, event("RETURNED"), "evt-1", now - 60, timestamp=str(now))
    assert post_delivery(client, *retried).json() == {"handled": True}
    assert PlatformSubmission.objects.get().status == "APPROVED"
    assert WebhookEvent.objects.get(event_id="evt-1").stale
    assert Assignment.objects.get().status == "leased"


def test_event_time():
    assert event_time("200", 100) == 100
    assert event_time("50", 100) == 50
    assert event_time(None, 100) == 100 and event_time("bad", 100) == 100
    assert event_time("50", None) == 0
    assert event_time("1780000000000", 1_790_000_000) == 1_780_000_000  # milliseconds read as such
