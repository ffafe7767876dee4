"""#44: the Prolific fake's clocks follow the real order of things (../shared/CROWD-CONTRACTS.md §1.5,
§2.3), on the clock the platform reads: a submission starts when its participant enters and completes
after that; a status has changed (the REST API shows it) before its event's X-Timestamp; a delivery is
signed when it is sent, never before its X-Timestamp, on a retry too (re-signed or not). The old fake's
fixed August 2026 datetimes and X-Timestamps pushed a second ahead per event hid same-second ties."""

import json
import time
from datetime import datetime

import pytest

from tests.crowd import test_prolific_client as flow
from tests.crowd.test_prolific_client import enter, published, submit

pytestmark = pytest.mark.django_db
fake, campaign = flow.fake, flow.campaign


def seconds(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def polled(fake, submission_id: str) -> dict:
    """The submission as the fake's REST API answers it now."""
    status, body, _ = fake.handle("GET", f"/api/v1/submissions/{submission_id}/", b"",
                                  {"Authorization": f"Token {fake.token}"})
    assert status == 200
    return body


@pytest.fixture
def heard(fake):
    """Every submission delivery: its headers, its payload, the submission as polled when it arrived."""
    deliveries, send = [], fake.transport

    def transport(url, headers, body):
        payload = json.loads(body)
        if payload["event_type"] == "submission.status.change":
            deliveries.append((headers, payload, polled(fake, payload["resource_id"]), time.time()))
        return send(url, headers, body)

    fake.transport = transport
    return deliveries


@pytest.mark.parametrize("resign_retries", [True, False])
def test_the_fakes_timestamps_follow_the_real_order(fake, campaign, heard, resign_retries):
    fake.resign_retries = resign_retries
    before = time.time()
    study_id, code = published(fake, campaign)
    browser, submission = enter(fake, study_id, "PID1")
    entered = time.time()
    submit(browser, "PID1")
    fake.complete(submission, code)
    send, attempts = fake.transport, []

    def first_attempt_fails(url, headers, body):
        attempts.append(headers)
        return 500 if len(attempts) == 1 else send(url, headers, body)

    fake.transport = first_attempt_fails
    assert fake.flush() == [200]
    fake.transport = send
    fake.handle("POST", f"/api/v1/submissions/{submission}/transition/", json.dumps({"action": "APPROVE"}).encode(),
                {"Authorization": f"Token {fake.token}"})
    assert fake.flush() == [200]

    shown = polled(fake, submission)
    assert before <= seconds(shown["started_at"]) <= entered
    assert seconds(shown["started_at"]) <= seconds(shown["completed_at"]) <= time.time()
    assert [payload["status"] for _, payload, _, _ in heard] == ["AWAITING REVIEW", "APPROVED"]
    for headers, payload, at_arrival, arrived in heard:
        assert at_arrival["status"] == payload["status"]  # the change happened before its webhook
        assert int(seconds(at_arrival["completed_at"])) <= int(headers["X-Timestamp"])
        assert int(headers["X-Timestamp"]) <= int(headers["X-Prolific-Request-Timestamp"]) <= arrived
    assert attempts[0]["X-Timestamp"] == attempts[1]["X-Timestamp"]  # the same event on its retry
    assert all(int(a["X-Timestamp"]) <= int(a["X-Prolific-Request-Timestamp"]) for a in attempts)


def test_a_return_request_is_stamped_when_it_is_made(fake, campaign):
    study_id, _ = published(fake, campaign)
    _, submission = enter(fake, study_id, "PID1")
    before = time.time()
    status, answer, _ = fake.handle("POST", f"/api/v1/submissions/{submission}/request-return/",
                                    json.dumps({"request_return_reasons": ["Didn't finish the study"]}).encode(),
                                    {"Authorization": f"Token {fake.token}"})
    assert status == 200
    assert before - 1 < seconds(answer["return_requested"]) <= time.time()
    assert seconds(polled(fake, submission)["started_at"]) <= seconds(answer["return_requested"])
