"""Hardening of writes and credentials: a model sends only a model key, only to an allowed http(s)
host (modeleval/clients/secrets.py, checked by the API, the admin form and the adapter); a crowd account is
bound to the platform session it was first entered with, and a crowd link never replaces a signed-in
staff account (crowd.services.enter_from_crowd_link); and double clicks or concurrent identical
writes make one row, the others answering 409 or the first answer again (Idempotency-Key,
core/idempotency.py). The concurrent tests fire 8 requests at once from 8 threads, each with
its own client and database connection, against real PostgreSQL."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import services as annotation_services
from annotation.models import Assignment
from benchmarks.models import Item, Release
from core import roles
from core.errors import DomainError
from core.models import IdempotentRequest
from crowd.models import CrowdWorker
from humaneval.models import EvalSession, Study
from humaneval.services.design import StudyDesign, create_study
from modeleval import services as modeleval_services
from modeleval.admin import ModelSpecForm
from modeleval.clients.adapters import load_adapter, model_settings_key
from modeleval.models import ModelSpec, Run
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, SceneFactory, UserFactory
from tests.together import fire

needs_postgres = pytest.mark.postgresql(reason="concurrent writes need PostgreSQL")

N = 8


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def admin_user():
    return UserFactory(is_staff=True, is_superuser=True)


def link(pid, session="SE1", study="ST"):
    return {"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session}


def make_campaign():
    benchmark = BenchmarkFactory()
    scenes = [SceneFactory(benchmark=benchmark) for _ in range(2)]
    return annotation_services.create_campaign(benchmark, "Moves", "movement", scenes)


def approved_items(n=2):
    first = ItemFactory()
    return [first] + [ItemFactory(change__scene__benchmark=first.benchmark) for _ in range(n - 1)]


# --- 1. Secrets stay home ------------------------------------------------------------------------


def model_payload(**config):
    return {"name": "hosted", "adapter": "openai_compatible", "modality": "caption_only",
            "config": {"endpoint": "https://api.example.org/v1", "model": "m", **config}}


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "S3_SECRET_ACCESS_KEY", "HYPOLAB_MODEL_KEY_",
                                  "PATH; rm -rf"])
def test_a_model_may_not_name_a_variable_that_is_not_a_model_key(name):
    response = token_client(admin_user()).post("/api/v1/models/", model_payload(api_key_env=name), format="json")
    assert response.status_code == 400, response.json()
    assert list(response.json()) == ["config"] and "api_key_env" in response.json()["config"][0]
    assert not ModelSpec.objects.exists()


@pytest.mark.django_db
def test_a_model_key_by_prefix_or_listed_in_model_api_keys_is_allowed(settings):
    settings.MODEL_ENDPOINT_ALLOW = ["api.example.org"]
    client = token_client(admin_user())
    created = client.post("/api/v1/models/", model_payload(api_key_env="HYPOLAB_MODEL_KEY_X"), format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["config"]["api_key_env"] == "HYPOLAB_MODEL_KEY_X"
    settings.MODEL_API_KEYS = ["OPENAI_API_KEY"]
    listed = client.post("/api/v1/models/", {**model_payload(api_key_env="OPENAI_API_KEY"), "name": "openai"},
                         format="json")
    assert listed.status_code == 201, listed.json()
    assert ModelSpec.objects.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(("endpoint", "reason"), [
    ("https://evil.example.net/v1", "MODEL_ENDPOINT_ALLOW"),
    ("file:///etc/passwd", "http"),
    ("ftp://api.example.org/v1", "http"),
    ("https://user:pw@api.example.org/v1", "credentials"),
    ("", "endpoint"),
])
def test_an_endpoint_outside_the_allowed_hosts_or_not_http_is_refused(settings, endpoint, reason):
    settings.MODEL_ENDPOINT_ALLOW = ["api.example.org", "vllm.internal"]
    client = token_client(admin_user())
    response = client.post("/api/v1/models/", model_payload(endpoint=endpoint), format="json")
    assert response.status_code == 400, response.json()
    assert list(response.json()) == ["endpoint"] and reason in response.json()["endpoint"][0]
    allowed = client.post("/api/v1/models/", model_payload(endpoint="https://API.example.org./v1"), format="json")
    assert allowed.status_code == 201, allowed.json()


@pytest.mark.django_db
def test_with_no_allow_list_only_loopback_will_do(settings):
    settings.MODEL_ENDPOINT_ALLOW = []  # #44: empty is loopback only, not every host
    client = token_client(admin_user())
    for host in ("10.0.0.7:8000", "api.example.org", "169.254.169.254"):
        response = client.post("/api/v1/models/", model_payload(endpoint=f"http://{host}/v1"), format="json")
        assert response.status_code == 400 and "MODEL_ENDPOINT_ALLOW" in response.json()["endpoint"][0], host
    for n, host in enumerate(("127.0.0.1:8000", "localhost:9000", "[::1]:8000")):
        response = client.post("/api/v1/models/", {**model_payload(endpoint=f"http://{host}/v1"), "name": f"local{n}"},
                               format="json")
        assert response.status_code == 201, (host, response.json())
    settings.MODEL_ENDPOINT_ALLOW = ["vllm.internal"]  # loopback plus the hosts an admin names
    response = client.post("/api/v1/models/", {**model_payload(endpoint="http://127.0.0.1:8001/v1"), "name": "l9"},
                           format="json")
    assert response.status_code == 201, response.json()


@pytest.mark.django_db
def test_the_admin_form_refuses_the_same(settings, client):
    settings.MODEL_ENDPOINT_ALLOW = ["api.example.org"]
    fields = {"name": "hosted", "adapter": "openai_compatible", "modality": "caption_only", "seed": 0,
              "max_new_tokens": 128, "temperature": 0.0, "family": ""}
    secret = ModelSpecForm(data={**fields, "config": json.dumps(
        {"endpoint": "https://api.example.org/v1", "api_key_env": "SECRET_KEY"})})
    assert not secret.is_valid() and "SECRET_KEY" in secret.errors["config"][0]
    elsewhere = ModelSpecForm(data={**fields, "config": json.dumps({"endpoint": "https://evil.example.net/v1"})})
    assert not elsewhere.is_valid() and elsewhere.errors["config"][0].startswith("endpoint:")
    fine = ModelSpecForm(data={**fields, "config": json.dumps(
        {"endpoint": "https://api.example.org/v1", "api_key_env": "HYPOLAB_MODEL_KEY_OPENAI"})})
    assert fine.is_valid(), fine.errors
    # Through the admin's own page too.
    client.force_login(admin_user())
    page = client.post("/admin/modeleval/modelspec/add/", {**fields, "config": json.dumps(
        {"endpoint": "https://api.example.org/v1", "api_key_env": "DATABASE_URL"})})
    assert page.status_code == 200 and "DATABASE_URL" in page.content.decode()
    assert not ModelSpec.objects.exists()


@pytest.mark.django_db
def test_an_old_row_with_a_secret_is_refused_when_loaded_and_when_launched(monkeypatch, settings):
    settings.MODEL_ENDPOINT_ALLOW = ["collector.example.net"]  # the host is allowed: the secret is what is refused
    monkeypatch.setenv("SECRET_KEY", "the-real-secret")
    item = ItemFactory()
    old = ModelSpec.objects.create(  # written before the rule, straight into the table
        name="leaky", adapter="openai_compatible",
        config={"endpoint": "https://collector.example.net/v1", "api_key_env": "SECRET_KEY"},
    )
    with pytest.raises(DomainError) as refused:
        load_adapter(old.pk, model_settings_key(old), item.benchmark_id)
    assert refused.value.field == "config"
    with pytest.raises(DomainError) as launch:
        modeleval_services.launch_run(old.pk, item.benchmark, None)
    assert launch.value.field == "config" and not Run.objects.exists()
    response = token_client(admin_user()).post("/api/v1/runs/", {"model": old.pk, "benchmark": item.benchmark.slug},
                                               format="json")
    assert response.status_code == 400 and "config" in response.json()


@pytest.mark.django_db
def test_an_old_row_with_an_endpoint_outside_the_allow_list_is_refused_at_load(settings):
    settings.MODEL_ENDPOINT_ALLOW = ["vllm.internal"]
    old = ModelSpec.objects.create(name="elsewhere", adapter="openai_compatible",
                                   config={"endpoint": "https://collector.example.net/v1"})
    with pytest.raises(DomainError) as refused:
        load_adapter(old.pk, model_settings_key(old) + "allow", 0)
    assert refused.value.field == "endpoint"


# --- 2. Crowd credentials ------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_second_browser_with_the_same_pid_and_another_session_is_refused(prolific_silent):
    campaign = make_campaign()
    owner = Client()
    first = owner.post(f"/crowd/campaigns/{campaign.pk}/", link("VICTIM", "SE1"))
    assert first.status_code == 302
    intruder = Client()
    refused = intruder.post(f"/crowd/campaigns/{campaign.pk}/", link("VICTIM", "GUESSED"))
    assert refused.status_code == 403
    page = refused.content.decode()
    assert "is already in use by another session" in page and "SESSION_ID" in page
    assert "_auth_user_id" not in intruder.session
    assert intruder.get(f"/annotate/{Assignment.objects.get().pk}/").status_code != 200
    # The owner's own link still works, from another browser too.
    again = Client().post(f"/crowd/campaigns/{campaign.pk}/", link("VICTIM", "SE1"))
    assert again.status_code == 302 and again["Location"] == first["Location"]
    assert CrowdWorker.objects.get().session_id == "SE1"


@pytest.mark.django_db
def test_the_study_link_is_bound_to_the_session_too(prolific_silent):
    items = approved_items()
    study = create_study(items[0].benchmark, StudyDesign("S", [i.pk for i in items]), None)
    assert Client().post(f"/crowd/studies/{study.pk}/", link("EVAL", "S1")).status_code == 302
    refused = Client().post(f"/crowd/studies/{study.pk}/", link("EVAL", "S2"))
    assert refused.status_code == 403 and b"is already in use by another session" in refused.content
    assert EvalSession.objects.count() == 1


@pytest.mark.django_db
def test_the_same_browser_moves_its_binding_to_the_workers_next_session(prolific_silent):
    campaign = make_campaign()
    browser = Client()
    assert browser.post(f"/crowd/campaigns/{campaign.pk}/", link("MOVER", "SE1")).status_code == 302
    assert browser.post(f"/crowd/campaigns/{campaign.pk}/", link("MOVER", "SE2", study="ST2")).status_code == 302
    worker = CrowdWorker.objects.get()
    assert (worker.session_id, worker.study_id) == ("SE2", "ST2")
    assert Client().post(f"/crowd/campaigns/{campaign.pk}/", link("MOVER", "SE1")).status_code == 403


@pytest.mark.django_db
@pytest.mark.parametrize(("params", "field"), [
    ({"PROLIFIC_PID": "W1"}, "STUDY_ID"),
    ({"PROLIFIC_PID": "W1", "STUDY_ID": "ST"}, "SESSION_ID"),
    ({"worker_id": "W1"}, "assignmentId"),
    ({"workerId": "W1", "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}, "assignmentId"),
])
def test_a_link_without_the_platforms_session_signs_nobody_in(client, params, field):
    campaign = make_campaign()
    response = client.post(f"/crowd/campaigns/{campaign.pk}/", params)
    assert response.status_code == 400 and field in response.content.decode()
    assert "_auth_user_id" not in client.session and not CrowdWorker.objects.exists()


@pytest.mark.django_db
def test_mturk_and_cloudresearch_links_bind_the_assignment_id(client):
    campaign = make_campaign()
    assert client.post(f"/crowd/campaigns/{campaign.pk}/", {"workerId": "A1B2", "assignmentId": "3X9",
                                                            "hitId": "H"}).status_code == 302
    worker = CrowdWorker.objects.get()
    assert (worker.platform, worker.worker_id, worker.session_id) == ("generic", "A1B2", "3X9")
    other = Client().post(f"/crowd/campaigns/{campaign.pk}/", {"workerId": "A1B2", "assignmentId": "4Y0"})
    assert other.status_code == 403 and b"assignmentId" in other.content


@pytest.mark.django_db
@pytest.mark.parametrize("staff", ["admin", "reviewer"])
def test_a_signed_in_staff_member_opening_a_crowd_link_stays_signed_in(client, staff):
    user = admin_user() if staff == "admin" else UserFactory(role=roles.REVIEWER)
    client.force_login(user)
    campaign = make_campaign()
    items = approved_items()
    study = create_study(items[0].benchmark, StudyDesign("S", [i.pk for i in items]), None)
    for url in (f"/crowd/campaigns/{campaign.pk}/", f"/crowd/studies/{study.pk}/"):
        response = client.post(url, link("PID9"))
        assert response.status_code == 409
        assert f"You are signed in as {user.username}" in response.content.decode()
        assert client.session["_auth_user_id"] == str(user.pk)
    assert not CrowdWorker.objects.exists() and not EvalSession.objects.exists()
    assert not get_user_model().objects.filter(username="prolific-PID9").exists()
    assert client.get("/api/v1/review/queue/").status_code == 200  # still the reviewer


@pytest.mark.django_db
def test_a_signed_in_crowd_worker_may_open_another_workers_own_link(client):
    campaign = make_campaign()
    assert client.post(f"/crowd/campaigns/{campaign.pk}/", link("FIRST", "A")).status_code == 302
    assert client.post(f"/crowd/campaigns/{campaign.pk}/", link("SECOND", "B")).status_code == 302
    assert client.session["_auth_user_id"] == str(CrowdWorker.objects.get(worker_id="SECOND").user_id)


# --- 3. Idempotent writes ------------------------------------------------------------------------


def statuses(responses) -> list[int]:
    return sorted(r.status_code for r in responses)


QUESTION = {"question": "What is now directly left of the chair?", "answer": "window", "question_type": ["Direction"]}


def post_together(user, url: str, body: dict, **headers) -> list:
    """N API clients of `user` post the same body at once."""
    clients = [token_client(user) for _ in range(N)]
    return fire(lambda i: clients[i].post(url, body, format="json", **headers), N)


def assert_made_once_and_replayed(responses, rows, id_field="id") -> None:
    """Every post answered 201 with the one row made: the first's answer, replayed to the others."""
    assert statuses(responses) == [201] * N, [r.content[:200] for r in responses]
    assert sum(r.has_header("Idempotent-Replayed") for r in responses) == N - 1
    assert {r.json()[id_field] for r in responses} == {rows.get().pk}


@pytest.mark.django_db
def test_the_same_key_replays_the_answer_and_another_body_with_it_is_a_conflict():
    items = approved_items()
    client = token_client(admin_user())
    body = {"benchmark": items[0].benchmark.slug, "name": "Pilot", "items": [i.pk for i in items]}
    first = client.post("/api/v1/studies/", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = client.post("/api/v1/studies/", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    other = client.post("/api/v1/studies/", {**body, "name": "Other"}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert other.status_code == 409 and "Idempotency-Key" in other.json()
    assert Study.objects.count() == 1
    # Without a key, or with a new one, a second study is a second study.
    assert client.post("/api/v1/studies/", body, format="json", HTTP_IDEMPOTENCY_KEY="k-2").status_code == 201
    assert Study.objects.count() == 2
    # Another user's key is theirs alone.
    elsewhere = token_client(admin_user()).post("/api/v1/studies/", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert elsewhere.status_code == 201 and Study.objects.count() == 3


@pytest.mark.django_db
def test_a_refused_request_keeps_no_key_and_a_bad_key_is_named():
    items = approved_items()
    client = token_client(admin_user())
    body = {"benchmark": items[0].benchmark.slug, "name": "Pilot", "items": [i.pk for i in items]}
    refused = client.post("/api/v1/studies/", {**body, "items": [999999]}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert refused.status_code == 400 and not IdempotentRequest.objects.exists()
    assert client.post("/api/v1/studies/", body, format="json", HTTP_IDEMPOTENCY_KEY="k").status_code == 201
    bad = client.post("/api/v1/studies/", body, format="json", HTTP_IDEMPOTENCY_KEY="a key with spaces")
    assert bad.status_code == 400 and "Idempotency-Key" in bad.json()
    assert Study.objects.count() == 1


@pytest.mark.django_db
def test_the_same_question_twice_on_a_change_is_a_conflict_naming_the_first():
    change = ChangeFactory(status="approved")
    client = token_client(UserFactory(role=roles.REVIEWER))
    first = client.post(f"/api/v1/changes/{change.pk}/questions/", QUESTION, format="json")
    assert first.status_code == 201
    again = client.post(f"/api/v1/changes/{change.pk}/questions/",
                        {**QUESTION, "question": "  what is now directly left of the chair?"}, format="json")
    assert again.status_code == 409 and again.json()["item"] == first.json()["id"]
    assert Item.objects.count() == 1


@pytest.mark.django_db(transaction=True)
@needs_postgres
def test_eight_identical_question_posts_make_one_item():
    change = ChangeFactory(status="approved")
    responses = post_together(UserFactory(role=roles.REVIEWER), f"/api/v1/changes/{change.pk}/questions/", QUESTION)
    assert statuses(responses) == [201] + [409] * (N - 1)
    assert Item.objects.filter(change=change).count() == 1


@pytest.mark.django_db(transaction=True)
@needs_postgres
def test_eight_identical_question_posts_with_one_key_make_one_item_and_replay_it():
    change = ChangeFactory(status="approved")
    responses = post_together(UserFactory(role=roles.REVIEWER), f"/api/v1/changes/{change.pk}/questions/", QUESTION,
                              HTTP_IDEMPOTENCY_KEY="q-1")
    assert_made_once_and_replayed(responses, Item.objects.filter(change=change))


@pytest.mark.django_db(transaction=True)
@needs_postgres
def test_eight_exports_of_one_version_make_one_release():
    items = approved_items()
    body = {"benchmark": items[0].benchmark.slug, "version": "1.0.0"}
    responses = post_together(admin_user(), "/api/v1/releases/", body)
    assert statuses(responses) == [201] + [409] * (N - 1), [r.content[:200] for r in responses]
    assert all("version" in r.json() for r in responses if r.status_code == 409)
    assert Release.objects.filter(benchmark=items[0].benchmark, version="1.0.0").count() == 1


@pytest.mark.django_db(transaction=True)
@needs_postgres
def test_eight_run_launches_with_one_key_make_one_run():
    items = approved_items()
    model = modeleval_services.ensure_baseline_model()
    body = {"model": model.pk, "benchmark": items[0].benchmark.slug}
    responses = post_together(admin_user(), "/api/v1/runs/", body, HTTP_IDEMPOTENCY_KEY="launch-7f3a")
    # The first launches; the others wait for it on the key and get its answer again.
    assert_made_once_and_replayed(responses, Run.objects, id_field="run")


@pytest.mark.django_db(transaction=True)
@needs_postgres
def test_eight_study_creations_with_one_key_make_one_study():
    items = approved_items()
    body = {"benchmark": items[0].benchmark.slug, "name": "Pilot", "items": [i.pk for i in items]}
    responses = post_together(admin_user(), "/api/v1/studies/", body, HTTP_IDEMPOTENCY_KEY="study-1")
    assert_made_once_and_replayed(responses, Study.objects)


@pytest.mark.django_db(transaction=True)
@needs_postgres
def test_eight_first_entries_on_one_new_pid_make_one_account_and_one_lease():
    campaign = make_campaign()
    clients = [Client() for _ in range(N)]
    responses = fire(lambda i: clients[i].post(f"/crowd/campaigns/{campaign.pk}/", link("NEWCOMER", "SE1")), N)
    assert statuses(responses) == [302] * N, [r.content[:300] for r in responses]
    assert len({r["Location"] for r in responses}) == 1
    assert CrowdWorker.objects.filter(worker_id="NEWCOMER").count() == 1
    assert Assignment.objects.count() == 1


@pytest.mark.django_db(transaction=True)
@needs_postgres
def test_eight_first_entries_on_a_study_link_make_one_account_and_one_session():
    items = approved_items()
    study = create_study(items[0].benchmark, StudyDesign("S", [i.pk for i in items]), None)
    clients = [Client() for _ in range(N)]
    responses = fire(lambda i: clients[i].post(f"/crowd/studies/{study.pk}/", link("EVALNEW", "SE1")), N)
    assert statuses(responses) == [302] * N, [r.content[:300] for r in responses]
    assert CrowdWorker.objects.filter(worker_id="EVALNEW").count() == 1
    assert EvalSession.objects.count() == 1


@pytest.mark.django_db
def test_keys_older_than_a_day_are_purged_by_the_beat_task():
    from datetime import timedelta

    from django.utils import timezone

    from config.celery import app
    from core.tasks import purge_idempotency_keys

    user = admin_user()
    old = IdempotentRequest.objects.create(user=user, key="old", path="/api/v1/studies/", fingerprint="x", status=201)
    IdempotentRequest.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=25))
    IdempotentRequest.objects.create(user=user, key="new", path="/api/v1/studies/", fingerprint="x", status=201)
    assert purge_idempotency_keys() == 1
    assert list(IdempotentRequest.objects.values_list("key", flat=True)) == ["new"]
    assert app.conf.beat_schedule["purge-idempotency-keys"]["task"] == "core.tasks.purge_idempotency_keys"
