"""What the OpenAI-compatible adapter does when its endpoint fails (modeleval/clients/endpoint_client.py), as the
OpenAI SDK and lmms-eval do it: a 5xx, a timeout or a refused connection is retried with backoff up to
the model's `max_retries`, a 429 waits as its Retry-After says (bounded), a 400, 401, 403 or 404 is
not retried, and each item whose tries ran out records the status and the endpoint's message, which
the run's progress lists. Every case runs a real run (or the real client) against a loopback server
(tests/chat_server.py's strict one, tests/latency_endpoint.py's in-flight one) and counts the
requests it saw."""

import socket
import time

import pytest

from modeleval import services
from modeleval.clients.endpoint_client import EndpointClient, EndpointError
from modeleval.models import ModelSpec, Prediction
from tests.chat_server import ChatServer, user_text
from tests.factories import ItemFactory
from tests.latency_endpoint import LatencyEndpoint

pytestmark = pytest.mark.django_db

SERVED = "served-model"


@pytest.fixture
def servers():
    """Starts loopback servers (a ChatServer, or a LatencyEndpoint with `in_flight=True`) and closes
    them after the test."""
    started = []

    def start(in_flight=False, **options):
        started.append(LatencyEndpoint(**options) if in_flight else ChatServer(**{"reply": "window", **options}))
        return started[-1]

    yield start
    for server in started:
        server.close()


def endpoint_model(url: str, name: str = "served", **config) -> ModelSpec:
    return ModelSpec.objects.create(
        name=name, adapter="openai_compatible", modality="caption_only",
        config={"endpoint": url, "model": SERVED, "api_key_env": "HYPOLAB_MODEL_KEY_TEST", "backoff_s": 0.05,
                **config},
    )


def items(n: int):
    first = ItemFactory(question="Which object is left of the chair, number 0?", external_id="q0")
    return [first] + [ItemFactory(change__scene__benchmark=first.benchmark, external_id=f"q{i}",
                                  question=f"Which object is left of the chair, number {i}?") for i in range(1, n)]


def launch(model, benchmark, capture):
    with capture(execute=True):
        run = services.launch_run(model.pk, benchmark, None)
    run.refresh_from_db()
    return run


def the_error(run) -> str:
    return Prediction.objects.get(run=run).error


def gaps(server) -> list[float]:
    """Seconds between one request and the next, as the server saw them."""
    times = [request["at"] for request in server.requests]
    return [later - earlier for earlier, later in zip(times, times[1:], strict=False)]


def test_a_5xx_is_retried_with_backoff_and_the_answer_that_follows_is_the_items(
        servers, django_capture_on_commit_callbacks):
    server = servers(script=[(500, {}, "Internal error"), (503, {}, "The engine is currently overloaded")])
    batch = items(1)
    run = launch(endpoint_model(server.url, backoff_s=0.2, max_retries=3), batch[0].benchmark,
                 django_capture_on_commit_callbacks)
    assert len(server.requests) == 3 and server.refused == []
    first, second = gaps(server)
    assert 0.15 <= first < 1.0 and 0.3 <= second < 1.5  # 0.2 s, then 0.4 s, less up to a quarter
    prediction = Prediction.objects.get(run=run)
    assert prediction.output == "window" and prediction.error == ""
    progress = services.run_progress(run)
    assert run.status == "finished" and progress["errors"] == 0 and progress["failures"] == []


def test_retries_run_out_and_the_run_says_which_items_failed_and_why(servers, django_capture_on_commit_callbacks):
    server = servers()
    server.fail_with, server.fail_message = 503, "The engine is currently overloaded, please try again later"
    server.fail_if = lambda body: "number 1?" in user_text(body)
    batch = items(3)
    run = launch(endpoint_model(server.url, max_retries=2), batch[0].benchmark, django_capture_on_commit_callbacks)
    asked = [user_text(request["body"]) for request in server.requests]
    assert len(asked) == 5 and sum("number 1?" in text for text in asked) == 3  # one try and two retries
    failed = Prediction.objects.get(run=run, item=batch[1])
    expected = ("EndpointError: HTTP 503 Service Unavailable from the endpoint after 3 tries: "
                "The engine is currently overloaded, please try again later")
    assert failed.error == expected and failed.output == ""
    assert set(Prediction.objects.filter(run=run).exclude(item=batch[1]).values_list("output", "error")) == {
        ("window", "")}
    assert run.status == "finished" and run.scores["inference_errors"] == 1
    progress = services.run_progress(run)
    assert progress["errors"] == 1 and progress["summary"]["inference_errors"] == 1
    assert progress["failures"] == [{"item": batch[1].pk, "external_id": "q1", "variant": failed.variant,
                                     "repeat": 0, "error": expected}]


def test_the_run_api_lists_the_failed_items(servers, client, django_capture_on_commit_callbacks):
    from core import roles
    from tests.factories import UserFactory

    server = servers()
    server.fail_with, server.fail_message = 500, "CUDA out of memory"
    batch = items(2)
    run = launch(endpoint_model(server.url, max_retries=1), batch[0].benchmark, django_capture_on_commit_callbacks)
    client.force_login(UserFactory(role=roles.ADMIN))
    answer = client.get(f"/api/v1/runs/{run.pk}/").json()
    assert answer["errors"] == 2 and len(server.requests) == 4
    assert [(failure["item"], failure["error"]) for failure in answer["failures"]] == [
        (item.pk, "EndpointError: HTTP 500 Internal Server Error from the endpoint after 2 tries: CUDA out of memory")
        for item in batch]


@pytest.mark.parametrize("status, phrase", [(400, "Bad Request"), (403, "Forbidden"), (404, "Not Found"),
                                            (422, "Unprocessable Entity")])
def test_a_client_error_is_not_retried_and_says_the_status_and_the_endpoints_message(
        servers, status, phrase, django_capture_on_commit_callbacks):
    server = servers()
    server.fail_with, server.fail_message = status, "Invalid 'messages[0].content[1].image_url.url': too large."
    batch = items(1)
    run = launch(endpoint_model(server.url, max_retries=3), batch[0].benchmark, django_capture_on_commit_callbacks)
    assert len(server.requests) == 1
    assert the_error(run) == (f"EndpointError: HTTP {status} {phrase} from the endpoint, not retried: "
                              "Invalid 'messages[0].content[1].image_url.url': too large.")
    assert run.status == "finished" and services.run_progress(run)["errors"] == 1


def test_a_wrong_key_is_a_401_that_is_not_retried(servers, monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setenv("HYPOLAB_MODEL_KEY_TEST", "sk-wrong-key")
    server = servers(api_key="sk-right-key")
    batch = items(2)
    run = launch(endpoint_model(server.url, max_retries=3), batch[0].benchmark, django_capture_on_commit_callbacks)
    assert len(server.requests) == 2 and [request["auth"] for request in server.requests] == ["Bearer sk-wrong-key"] * 2
    errors = set(Prediction.objects.filter(run=run).values_list("error", flat=True))
    assert errors == {"EndpointError: HTTP 401 Unauthorized from the endpoint, not retried: "
                      "Incorrect API key provided: sk-***ey."}
    assert [failure["item"] for failure in services.run_progress(run)["failures"]] == [item.pk for item in batch]


def test_a_429_waits_as_long_as_its_retry_after_says_not_the_backoff(servers, django_capture_on_commit_callbacks):
    server = servers(script=[(429, {"Retry-After": "1"}, "Rate limit reached for requests")])
    batch = items(1)
    # a backoff of 5 s would wait at least 3.75 s: the gap shows which one was honoured
    run = launch(endpoint_model(server.url, backoff_s=5.0), batch[0].benchmark, django_capture_on_commit_callbacks)
    assert len(server.requests) == 2 and 1.0 <= gaps(server)[0] < 2.5
    prediction = Prediction.objects.get(run=run)
    assert prediction.output == "window" and prediction.error == "" and run.status == "finished"


def test_a_429_whose_retries_run_out_says_so(servers, django_capture_on_commit_callbacks):
    server = servers(script=[(429, {"Retry-After": "0"}, "Rate limit reached for requests")] * 3)
    batch = items(1)
    run = launch(endpoint_model(server.url, max_retries=2), batch[0].benchmark, django_capture_on_commit_callbacks)
    assert len(server.requests) == 3
    assert the_error(run) == ("EndpointError: HTTP 429 Too Many Requests from the endpoint after 3 tries: "
                              "Rate limit reached for requests")


@pytest.mark.parametrize("headers", [{"Retry-After": "3600"}, {"retry-after-ms": "600000"}])
def test_a_retry_after_longer_than_the_bound_waits_the_bound(servers, headers):
    server = servers(script=[(429, headers, "Rate limit reached")])
    client = EndpointClient(server.url + "/chat/completions", max_retries=1, max_wait_s=0.3)
    assert client.answer({"model": SERVED, "messages": [{"role": "user", "content": "hi"}]}) == "window"
    assert len(server.requests) == 2 and 0.3 <= gaps(server)[0] < 1.5


def test_retry_after_ms_is_read_before_retry_after(servers):
    server = servers(script=[(503, {"retry-after-ms": "400", "Retry-After": "20"}, "Loading the model")])
    client = EndpointClient(server.url + "/chat/completions", max_retries=1, backoff_s=10.0)
    assert client.answer({"model": SERVED, "messages": [{"role": "user", "content": "hi"}]}) == "window"
    assert 0.4 <= gaps(server)[0] < 2.0


def test_x_should_retry_overrides_the_status(servers):
    hi = {"model": SERVED, "messages": [{"role": "user", "content": "hi"}]}
    retried = servers(script=[(400, {"x-should-retry": "true"}, "Try again")])
    assert EndpointClient(retried.url + "/chat/completions", backoff_s=0.01).answer(hi) == "window"
    assert len(retried.requests) == 2
    kept = servers(script=[(503, {"x-should-retry": "false"}, "Do not try again")])
    with pytest.raises(EndpointError) as refused:
        EndpointClient(kept.url + "/chat/completions", backoff_s=0.01).answer(hi)
    assert len(kept.requests) == 1 and refused.value.status == 503 and refused.value.tries == 1
    assert str(refused.value) == "HTTP 503 Service Unavailable from the endpoint, not retried: Do not try again"


def test_a_timeout_is_retried_then_recorded_with_its_tries(servers, django_capture_on_commit_callbacks):
    server = servers()
    server.slow = True
    batch = items(1)
    run = launch(endpoint_model(server.url, timeout_s=0.3, max_retries=1), batch[0].benchmark,
                 django_capture_on_commit_callbacks)
    assert len(server.requests) == 2
    assert the_error(run) == "EndpointError: no answer within 0.3 s, 2 tries"


def test_a_refused_connection_whose_retries_run_out_names_the_failure(django_capture_on_commit_callbacks):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    batch = items(1)
    started = time.monotonic()
    run = launch(endpoint_model(f"http://127.0.0.1:{port}/v1", backoff_s=0.1, max_retries=2), batch[0].benchmark,
                 django_capture_on_commit_callbacks)
    assert time.monotonic() - started >= 0.2  # 0.1 s and 0.2 s of backoff, less up to a quarter
    error = the_error(run)
    assert error.startswith("EndpointError: cannot reach the endpoint after 3 tries (ConnectError:"), error
    assert run.status == "finished" and services.run_progress(run)["failures"][0]["error"] == error


MESSAGE = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
MALFORMED = [
    ({"model": SERVED, "messages": []}, "'messages' must be a non-empty array."),
    ({"model": SERVED, "messages": [{"content": "hi"}]}, "Each message needs a role"),
    ({"model": SERVED, "messages": [{"role": "user", "content": [{"type": "image", "data": "..."}]}]},
     "A content part is {type: text, text} or {type: image_url, image_url: {url}}."),
    ({"model": SERVED, "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "data:x"}]}]},
     "A content part is"),
    ({"model": SERVED, "messages": [{"role": "user", "content": 7}]}, "A message's content is a text"),
    ({"messages": [MESSAGE]}, "you must provide a model parameter"),
    ({"model": SERVED, "messages": [MESSAGE], "top_k": 5}, "Unrecognized request argument supplied: top_k"),
    ({"model": SERVED, "messages": [MESSAGE], "temperature": 3}, "Invalid 'temperature'"),
    ({"model": "o3", "messages": [MESSAGE], "max_tokens": 8}, "Unsupported parameter: 'max_tokens'"),
]


@pytest.mark.parametrize("body, message", MALFORMED)
def test_the_in_flight_fake_refuses_a_malformed_request_as_the_strict_one_does(servers, body, message):
    answers = []
    for server in (servers(), servers(in_flight=True)):
        client = EndpointClient(server.url + "/chat/completions", max_retries=3, backoff_s=0.01)
        with pytest.raises(EndpointError) as refused:
            client.answer(body)
        assert len(server.requests) == 1 and len(server.refused) == 1  # a 400 is not retried
        answers.append(str(refused.value))
    assert answers[0] == answers[1] and answers[0].startswith("HTTP 400 Bad Request from the endpoint, not retried: ")
    assert message in answers[0]


def test_the_in_flight_fake_refuses_a_model_it_does_not_serve_and_a_wrong_key(
        servers, monkeypatch, django_capture_on_commit_callbacks):
    endpoint = servers(in_flight=True, served_model=SERVED)
    batch = items(2)
    run = launch(endpoint_model(endpoint.url, model="gpt-4o-mini", max_retries=3), batch[0].benchmark,
                 django_capture_on_commit_callbacks)
    assert len(endpoint.requests) == 2 and endpoint.peak == 0  # refused at once, never held
    assert set(Prediction.objects.filter(run=run).values_list("error", flat=True)) == {
        "EndpointError: HTTP 404 Not Found from the endpoint, not retried: "
        "The model `gpt-4o-mini` does not exist or you do not have access to it."}
    monkeypatch.setenv("HYPOLAB_MODEL_KEY_TEST", "sk-wrong-key")
    keyed = servers(in_flight=True, api_key="sk-right-key")
    run = launch(endpoint_model(keyed.url, "keyed", max_retries=3), batch[0].benchmark, django_capture_on_commit_callbacks)
    assert len(keyed.requests) == 2 and services.run_progress(run)["errors"] == 2
    assert "HTTP 401 Unauthorized from the endpoint, not retried: Incorrect API key provided" in the_errors(run)


def the_errors(run) -> str:
    return "\n".join(Prediction.objects.filter(run=run).values_list("error", flat=True))


def test_the_in_flight_fake_answers_a_well_formed_run(servers, django_capture_on_commit_callbacks):
    endpoint = servers(in_flight=True, served_model=SERVED, reply=lambda body: "window")
    batch = items(3)
    run = launch(endpoint_model(endpoint.url), batch[0].benchmark, django_capture_on_commit_callbacks)
    assert len(endpoint.requests) == 3 and endpoint.refused == []
    assert run.status == "finished" and services.run_progress(run)["errors"] == 0
