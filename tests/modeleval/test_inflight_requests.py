"""The OpenAI-compatible adapter keeps requests in flight (modeleval/clients/endpoint_client.py), against an
endpoint on loopback that answers after a fixed latency and counts the requests it holds at once."""

import hashlib
import socket
import threading
import time
from datetime import UTC, datetime
from email.utils import format_datetime, formatdate

import pytest

from core import roles
from modeleval import services
from modeleval.clients.endpoint_client import retry_after_s
from modeleval.models import ModelSpec, Prediction
from modeleval.runs import inference
from tests.factories import ItemFactory, UserFactory
from tests.latency_endpoint import LatencyEndpoint

pytestmark = pytest.mark.django_db


def prompt_digest(body: dict) -> str:
    """The answer names the prompt it was asked, so a prediction shows which request it came from."""
    return hashlib.sha256(body["messages"][0]["content"][0]["text"].encode()).hexdigest()


@pytest.fixture
def endpoints():
    started = []

    def start(**options):
        started.append(LatencyEndpoint(**{"reply": prompt_digest, **options}))
        return started[-1]

    yield start
    for endpoint in started:
        endpoint.close()


def endpoint_model(url: str, **config) -> ModelSpec:
    return ModelSpec.objects.create(
        name="served", adapter="openai_compatible", modality="caption_only",
        config={"endpoint": url, "model": "served-model", "api_key_env": "HYPOLAB_MODEL_KEY_TEST", "backoff_s": 0.05,
                **config},
    )


def items(n: int):
    first = ItemFactory(question="Which object is left of the chair, number 0?")
    return [first] + [ItemFactory(change__scene__benchmark=first.benchmark,
                                  question=f"Which object is left of the chair, number {i}?") for i in range(1, n)]


def launch(model, benchmark, capture, **options):
    with capture(execute=True):
        run = services.launch_run(model.pk, benchmark, None, **options)
    run.refresh_from_db()
    return run


def assert_each_answer_is_its_own(run, expected: int):
    rows = list(Prediction.objects.filter(run=run).values_list("item_id", "variant", "repeat", "output",
                                                               "prompt_sha256", "error"))
    assert len(rows) == len({row[:3] for row in rows}) == expected
    assert all(error == "" and output == digest for *_, output, digest, error in rows), rows[:3]


def test_sixteen_requests_are_in_flight_at_once_and_each_answer_lands_on_its_item(
        endpoints, django_capture_on_commit_callbacks):
    endpoint = endpoints(latency_s=0.3)
    batch = items(16)
    started = time.monotonic()
    run = launch(endpoint_model(endpoint.url), batch[0].benchmark, django_capture_on_commit_callbacks, repeats=2)
    elapsed = time.monotonic() - started
    assert endpoint.peak == 16  # the model's default window, never more
    assert run.status == "finished" and run.total == 32
    assert_each_answer_is_its_own(run, 32)
    assert elapsed < 32 * 0.3 / 2  # one at a time takes 9.6 s; two windows of 16 take 0.6 s


def test_the_window_is_the_models_max_in_flight(endpoints, django_capture_on_commit_callbacks):
    endpoint = endpoints(latency_s=0.1)
    batch = items(12)
    run = launch(endpoint_model(endpoint.url, max_in_flight=4), batch[0].benchmark, django_capture_on_commit_callbacks)
    assert endpoint.peak == 4 and run.status == "finished"
    assert_each_answer_is_its_own(run, 12)


def test_a_429_with_a_date_retry_after_is_waited_out_and_ends_in_the_right_answer(
        endpoints, django_capture_on_commit_callbacks):
    # An HTTP date has whole seconds: two seconds ahead is one to two seconds of waiting.
    retry_at = formatdate(time.time() + 2, usegmt=True)
    endpoint = endpoints(script=[(429, {"Retry-After": retry_at})])
    batch = items(1)
    started = time.monotonic()
    run = launch(endpoint_model(endpoint.url), batch[0].benchmark, django_capture_on_commit_callbacks)
    assert time.monotonic() - started >= 0.9
    assert len(endpoint.requests) == 2 and run.status == "finished"
    assert_each_answer_is_its_own(run, 1)


def test_a_refused_connection_is_retried_until_the_endpoint_is_up(endpoints, django_capture_on_commit_callbacks):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port when the run starts; the endpoint comes up 0.3 s later.
    late = []
    timer = threading.Timer(0.3, lambda: late.append(endpoints(port=port)))
    timer.start()
    batch = items(3)
    try:
        run = launch(endpoint_model(f"http://127.0.0.1:{port}/v1", backoff_s=0.2, max_retries=5),
                     batch[0].benchmark, django_capture_on_commit_callbacks)
    finally:
        timer.join()
    assert run.status == "finished" and len(late[0].requests) == 3
    assert_each_answer_is_its_own(run, 3)


def test_a_redirect_is_not_followed_so_the_key_goes_nowhere_else(endpoints, monkeypatch,
                                                               django_capture_on_commit_callbacks):
    monkeypatch.setenv("HYPOLAB_MODEL_KEY_TEST", "sk-secret")
    elsewhere = endpoints()
    endpoint = endpoints(script=[(307, {"Location": f"http://localhost:{elsewhere.port}/v1/chat/completions"})])
    batch = items(1)
    run = launch(endpoint_model(endpoint.url), batch[0].benchmark, django_capture_on_commit_callbacks)
    assert [request["auth"] for request in endpoint.requests] == ["Bearer sk-secret"]
    assert elsewhere.requests == []
    prediction = Prediction.objects.get(run=run)
    assert prediction.output == "" and "redirects (HTTP 307)" in prediction.error and "not followed" in prediction.error


def test_retry_after_reads_seconds_and_http_dates():
    now = 1_800_000_000.0
    assert retry_after_s("3", now) == 3.0
    assert retry_after_s(format_datetime_at(now + 7), now) == 7.0
    assert retry_after_s(format_datetime_at(now - 7), now) == 0.0  # a date already past: go at once
    assert retry_after_s("soon", now) is None and retry_after_s(None, now) is None


def format_datetime_at(timestamp: float) -> str:
    return format_datetime(datetime.fromtimestamp(timestamp, UTC), usegmt=True)


@pytest.mark.parametrize("window", [0, 257, "16", 2.5])
def test_a_max_in_flight_that_is_not_a_window_is_a_400_naming_config(client, window):
    client.force_login(UserFactory(role=roles.ADMIN))
    body = {"name": "served", "adapter": "openai_compatible",
            "config": {"endpoint": "http://127.0.0.1:9/v1", "max_in_flight": window}}
    response = client.post("/api/v1/models/", body, content_type="application/json")
    assert response.status_code == 400 and "max_in_flight" in str(response.json())
    assert not ModelSpec.objects.exists()


def test_the_window_stays_full_while_earlier_answers_are_being_written(
        endpoints, django_capture_on_commit_callbacks, monkeypatch):
    """A write of predictions that outlasts a round of answers (a slow disk, a busy database) does not
    leave the endpoint idle: the requests after it are already queued in the client's loop, so at the
    end of each later write the endpoint still holds a full window (before, two windows were queued and
    both were answered long before the write ended)."""
    endpoint = endpoints(latency_s=0.1)
    batch = items(60)
    seen_at_write_end = []
    flush = inference._flush

    def slow_flush(predictions, on_write=None):
        if predictions:
            time.sleep(0.45)  # four rounds of answers
            seen_at_write_end.append(endpoint.in_flight)
        return flush(predictions, on_write)

    monkeypatch.setattr(inference, "FLUSH_EVERY_N", 10)
    monkeypatch.setattr(inference, "_flush", slow_flush)
    run = launch(endpoint_model(endpoint.url, max_in_flight=4), batch[0].benchmark,
                 django_capture_on_commit_callbacks)
    assert run.status == "finished" and endpoint.peak == 4
    assert_each_answer_is_its_own(run, 60)
    # the first write teaches the client how long writes last; the last ones come when no work is left
    assert 4 in seen_at_write_end[1:-1], seen_at_write_end
