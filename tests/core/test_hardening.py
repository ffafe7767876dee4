"""Hardening against a security probe: login lockout and crowd-entry throttling (config/throttle.py),
bad input refused with 400 instead of 500 (config/middleware.py), http(s)-only completion URLs,
webhook event ids that fit, and sessions and cache falling back to the database when Redis is down
(config/cache.py, config/sessions.py)."""

import json
import time
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import services
from annotation.models import Assignment, AssignmentDraft, Campaign
from config import cache as fallback_cache
from core import roles
from core.validation import is_http_url, json_body_problem
from crowd.models import WebhookEvent
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory
from tests.prolific_fake import delivery, post_delivery
from tests.redis_server import own_redis_server, start_redis, stop_redis

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"


def make_campaign(**options):
    benchmark = BenchmarkFactory()
    return services.create_campaign(benchmark, "Moves", "movement", [SceneFactory(benchmark=benchmark)], **options)


def enter(client, campaign, pid="PID1"):
    return client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "S", "SESSION_ID": "X"})


# --- A. Login lockout ----------------------------------------------------------------------------


def test_ten_failed_logins_lock_the_account_even_for_the_right_password_until_the_lock_ends(client):
    user = UserFactory(username="curator", role=roles.REVIEWER)
    for attempt in range(9):
        response = client.post(LOGIN, {"username": "curator", "password": f"wrong{attempt}"})
        assert response.status_code == 200 and b"didn't match" in response.content
    tenth = client.post(LOGIN, {"username": "curator", "password": "wrong9"})
    assert tenth.status_code == 429
    right = client.post(LOGIN, {"username": "curator", "password": "pw"})
    assert right.status_code == 429 and int(right["Retry-After"]) == 15 * 60
    page = right.content.decode()
    assert 'id="lockout"' in page and "Too many failed logins" in page and "15 minutes" in page
    assert '<input name="username"' in page  # the login page itself, with its form
    assert "_auth_user_id" not in client.session
    # The account is locked from that address only: failures from anyone's address never lock out its owner.
    elsewhere = Client(REMOTE_ADDR="198.51.100.7")
    assert elsewhere.post(LOGIN, {"username": "curator", "password": "pw"}).status_code == 302
    # The lock ends 15 minutes after the last attempt.
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    signed_in = client.post(LOGIN, {"username": "curator", "password": "pw"})
    assert signed_in.status_code == 302 and client.session["_auth_user_id"] == str(user.pk)


def test_ten_failures_from_one_address_lock_that_address_for_every_account(client):
    UserFactory(username="someone")
    attacker = Client(REMOTE_ADDR="203.0.113.50")
    for attempt in range(10):
        attacker.post(LOGIN, {"username": f"guess{attempt}", "password": "x"})
    assert attacker.post(LOGIN, {"username": "someone", "password": "pw"}).status_code == 429
    # The account itself was never tried: from another address it signs in.
    assert Client(REMOTE_ADDR="203.0.113.51").post(LOGIN, {"username": "someone", "password": "pw"}).status_code == 302


def test_the_admin_login_and_json_clients_are_locked_out_too():
    UserFactory(username="boss", is_staff=True, is_superuser=True)
    browser = Client(REMOTE_ADDR="192.0.2.10")
    for attempt in range(10):
        browser.post("/admin/login/", {"username": "boss", "password": f"no{attempt}"})
    locked = browser.post("/admin/login/", {"username": "boss", "password": "pw"})
    assert locked.status_code == 429 and b"Too many failed logins" in locked.content
    script = Client(REMOTE_ADDR="192.0.2.10", HTTP_ACCEPT="application/json")  # the same address
    answer = script.post(LOGIN, {"username": "boss", "password": "pw"})
    assert answer.status_code == 429 and "Too many failed logins" in answer.json()["detail"]


def test_a_crowd_link_sign_in_costs_no_lockout_query(django_assert_max_num_queries, client):
    campaign = make_campaign()
    enter(client, campaign, "FIRST")  # warm: the first request of a process loads more
    client.logout()
    with django_assert_max_num_queries(30) as captured:
        assert enter(client, campaign, "SECOND").status_code == 302
    assert not [q for q in captured.captured_queries if "axes_" in q["sql"]]


# --- A. Crowd entry per address ------------------------------------------------------------------


def test_crowd_entry_is_limited_per_address(settings):
    settings.CROWD_ENTRY_PER_MINUTE = 3
    campaign = make_campaign(assignments_per_scene=10)
    address = f"203.0.113.{int(time.time() * 1000) % 200 + 1}"  # a fresh counter on a shared cache
    crowd = Client(REMOTE_ADDR=address)
    if int(time.time() % 60) > 55:  # do not straddle a minute boundary
        time.sleep(61 - time.time() % 60)
    statuses = [enter(crowd, campaign, f"W{i}").status_code for i in range(4)]
    assert statuses[:3] == [302, 302, 302] and statuses[3] == 429
    refused = enter(crowd, campaign, "W9")
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 60
    assert b"Too many crowd links" in refused.content
    assert Client(REMOTE_ADDR="198.51.100.200").get("/crowd/studies/999999/").status_code != 429
    # Loopback (a proxy that does not pass addresses on) is not counted.
    assert all(enter(Client(), campaign, f"L{i}").status_code == 302 for i in range(4))


def test_the_forwarded_address_counts_behind_a_trusted_proxy(settings):
    from config.throttle import client_ip

    request = Client().get("/").wsgi_request
    request.META.update(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="1.1.1.1, 203.0.113.9")
    assert client_ip(request) == "10.0.0.2"
    settings.TRUSTED_PROXY_HOPS = 1
    assert client_ip(request) == "203.0.113.9"


# --- C. Bad input: 400, never 500 ---------------------------------------------------------


@pytest.fixture
def staff():
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True, role=roles.ADMIN))
    return client


@pytest.fixture
def autosave():
    """An annotator signed in through a crowd link, and their autosave URL."""
    client = Client()
    campaign = make_campaign()
    enter(client, campaign)
    return client, f"/api/v1/assignments/{Assignment.objects.get().pk}/draft/"


# One write endpoint per family (the probe's 500s): annotation, review, humaneval, modeleval, benchmarks.
FAMILIES = {
    "annotation": ("post", "/api/v1/campaigns/", "name"),
    "review": ("post", "/api/v1/dedup/", "benchmark"),
    "humaneval": ("post", "/api/v1/studies/", "name"),
    "modeleval": ("post", "/api/v1/runs/", "benchmark"),
    "benchmarks": ("post", "/api/v1/releases/", "version"),
}


def send(client, method, url, body: bytes, content_type="application/json"):
    return getattr(client, method)(url, body, content_type=content_type)


@pytest.mark.parametrize("family", FAMILIES)
def test_nul_and_lone_surrogates_are_refused_naming_the_field(staff, family):
    method, url, field = FAMILIES[family]
    nul = send(staff, method, url, json.dumps({field: "a\x00b"}).encode())
    assert nul.status_code == 400 and nul.json() == {field: ["contains a NUL character"]}
    surrogate = send(staff, method, url, b'{"%s": "x\\ud800y"}' % field.encode())
    assert surrogate.status_code == 400
    assert surrogate.json() == {field: ["contains a lone surrogate (not valid Unicode)"]}
    nested = send(staff, method, url, json.dumps({"meta": {"tags": ["ok", {"k\x00": 1}]}}).encode())
    assert nested.status_code == 400 and nested.json() == {"meta.tags.1.k\\x00": ["contains a NUL character"]}


@pytest.mark.parametrize("family", FAMILIES)
def test_deep_json_and_oversize_bodies_are_refused(staff, settings, family):
    method, url, _ = FAMILIES[family]
    deepest = b"[" * 100_000 + b"]" * 100_000
    response = send(staff, method, url, deepest)
    assert response.status_code == 400 and response.json() == {"body": ["nests deeper than 64 levels"]}
    deep = b'{"a": ' + b"[" * 70 + b"]" * 70 + b"}"
    response = send(staff, method, url, deep)
    assert response.status_code == 400 and response.json() == {"a": ["nests deeper than 64 levels"]}
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    big = send(staff, method, url, json.dumps({"name": "x" * 2000}).encode())
    assert big.status_code == 400 and "larger than the 1000 bytes" in big.json()["body"][0]


def test_form_fields_and_query_parameters_are_checked_too(staff, client, settings):
    login = client.post(LOGIN, {"username": "a\x00b", "password": "x"})
    assert login.status_code == 400 and login.json() == {"username": ["contains a NUL character"]}
    query = staff.get("/api/v1/items/", {"q": "x\x00"})
    assert query.status_code == 400 and query.json() == {"q": ["contains a NUL character"]}
    assert staff.get("/review/%00/").status_code == 400
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    assert client.post(LOGIN, {"username": "u" * 2000, "password": "x"}).status_code == 400


def test_raw_uploads_are_not_read_by_the_guard(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    for content_type in ("application/octet-stream", "", "text/csv"):
        response = client.generic("PUT", "/api/v1/uploads/999999/content/?token=x", b"\x00" * 2000,
                                  content_type=content_type)
        assert response.status_code in (400, 403, 404), (content_type, response.status_code)
        assert "body" not in response.json(), content_type


def test_the_autosave_plain_view_refuses_bad_bodies_whatever_their_content_type(autosave, settings):
    client, url = autosave
    for content_type in ("application/json", "text/plain", "application/octet-stream"):
        nul = send(client, "put", url, b'{"text": "a\\u0000"}', content_type)
        assert nul.status_code == 400 and nul.json() == {"text": ["contains a NUL character"]}, content_type
        raw_surrogate = send(client, "put", url, b'{"text": "a\xed\xa0\x80"}', content_type)
        assert raw_surrogate.status_code == 400 and "lone surrogate" in raw_surrogate.json()["text"][0]
        deep = send(client, "put", url, b'{"text": "", "content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                    content_type)
        assert deep.status_code == 400 and "nests deeper" in json.dumps(deep.json()), content_type
    assert AssignmentDraft.objects.get().text == ""
    fine = send(client, "put", url, json.dumps({"text": "Le fauteuil 😀 \U0001f600", "content": {"a": [[1]]}}).encode())
    assert fine.status_code == 200 and fine.json()["text"] == "Le fauteuil 😀 \U0001f600"
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    for content_type in ("application/json", "application/octet-stream"):
        big = send(client, "put", url, json.dumps({"text": "x" * 2000}).encode(), content_type)
        assert big.status_code == 400, content_type


def test_good_input_still_goes_through(staff):
    benchmark = BenchmarkFactory()
    scene = SceneFactory(benchmark=benchmark)
    payload = {"benchmark": benchmark.slug, "name": "Déplacements 😀", "change_type": "movement",
               "scenes": [scene.pk], "guidelines": "Use \\u escapes: \u00e9", "completion_url": "https://x.org/?cc={code}"}
    response = staff.post("/api/v1/campaigns/", payload, content_type="application/json")
    assert response.status_code == 201, response.json()
    assert Campaign.objects.get().name == "Déplacements 😀"


def test_the_json_scan_is_iterative_and_names_the_field():
    assert json_body_problem(b'{"a": "fine", "b": ["\\u00e9", "\\ud83d\\ude00"]}') is None
    assert json_body_problem(b"not json at all") is None
    assert json_body_problem(b"not json \x00") == ("body", "contains a NUL character")
    assert json_body_problem(b"[" * 64 + b"]" * 64) is None
    assert json_body_problem(b"[" * 65 + b"]" * 65) == ("body", "nests deeper than 64 levels")


# --- C. Prolific webhook event ids ---------------------------------------------------------------


def signed_post(client, event_id: str, payload: dict, secret="s3cret"):
    """A delivery signed as Prolific documents it; the event id travels in X-Event-ID."""
    return post_delivery(client, *delivery(secret, payload, event_id, sent_at=1_780_000_000))


def test_a_webhook_event_id_that_does_not_fit_is_refused(client, settings):
    settings.PROLIFIC_WEBHOOK_SECRET = "s3cret"
    event = {"resource_id": "sub-1", "event_type": "submission.status.change", "participant_id": "P",
             "status": "RETURNED"}
    long = signed_post(client, "e" * 5000, event)
    assert long.status_code == 400 and long.json() == {"X-Event-ID": ["Must be at most 200 characters."]}
    nul = signed_post(client, "evt\x00", event)
    assert nul.status_code == 400 and list(nul.json()) == ["X-Event-ID"]
    odd = signed_post(client, "evt-odd", {**event, "resource_id": {"x": 1}})
    assert odd.status_code == 400 and list(odd.json()) == ["resource_id"]
    assert not WebhookEvent.objects.exists()
    fine = signed_post(client, "e" * 200, {**event, "status": "APPROVED"})
    assert fine.status_code == 200 and fine.json() == {"handled": True}


# --- D. Completion URLs --------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["javascript:alert(document.cookie)//{code}", "JavaScript:alert(1)",
                                 " javascript:alert(1)", "data:text/html,<script>alert(1)</script>",
                                 "//evil.example/{code}", "https://", "http://exa mple.org/"])
def test_a_completion_url_that_is_not_http_is_refused(staff, url):
    benchmark = BenchmarkFactory()
    payload = {"benchmark": benchmark.slug, "name": "C", "change_type": "movement",
               "scenes": [SceneFactory(benchmark=benchmark).pk], "completion_url": url}
    response = staff.post("/api/v1/campaigns/", payload, content_type="application/json")
    assert response.status_code == 400 and list(response.json()) == ["completion_url"], response.json()
    assert not Campaign.objects.exists()


def test_the_admin_refuses_a_javascript_completion_url(staff):
    benchmark = BenchmarkFactory()
    scene = SceneFactory(benchmark=benchmark)
    form = staff.get(reverse("admin:annotation_campaign_add"))
    assert form.status_code == 200
    response = staff.post(reverse("admin:annotation_campaign_add"), {
        "benchmark": benchmark.pk, "name": "C", "kind": "context_change", "change_type": "movement",
        "scenes": [scene.pk], "completion_url": "javascript:alert(1)",
    })
    assert response.status_code == 200 and not Campaign.objects.exists()
    assert b"Enter an http:// or https:// URL." in response.content


def test_a_stored_javascript_url_is_never_rendered_as_a_link(client):
    campaign = make_campaign(min_words=3)
    enter(client, campaign)
    assignment = Assignment.objects.get()
    response = client.post(f"/api/v1/assignments/{assignment.pk}/submit/",
                           {"text": "The chair has been moved from the desk to the window next to the shelf."},
                           content_type="application/json")
    assert response.status_code == 201, response.json()
    Campaign.objects.filter(pk=campaign.pk).update(completion_url="javascript:alert(document.cookie)//{code}")
    page = client.get(f"/annotate/{assignment.pk}/done/").content.decode()
    assert "javascript:" not in page and 'id="completion-link"' not in page and "Paste this code back" in page
    Campaign.objects.filter(pk=campaign.pk).update(completion_url="https://example.org/done?cc={code}")
    page = client.get(f"/annotate/{assignment.pk}/done/").content.decode()
    assert 'id="completion-link" href="https://example.org/done?cc=CQA_' in page


def test_http_url_rule():
    assert is_http_url("https://app.prolific.com/submissions/complete?cc={code}")
    assert is_http_url("HTTP://example.org")
    assert not any(is_http_url(u) for u in ["", None, "javascript:alert(1)", "java\tscript:x", "ftp://x.org",
                                            "http:x", "https://x.org/\x00", "/relative"])


# --- B. Redis outage: sessions and cache fall back to the database --------------------------------

REDIS_PORT = 6390


@pytest.fixture
def own_redis(settings, monkeypatch):
    """A Redis of this test's own (never the shared one) as the cache, stopped and started at will."""
    with own_redis_server(REDIS_PORT):
        monkeypatch.setattr(fallback_cache, "RETRY_AFTER_S", 0.0)  # try Redis again on every call
        settings.CACHES = {"default": {"BACKEND": "config.cache.RedisCache", "KEY_PREFIX": "hard-outage-",
                                       "LOCATION": f"redis://127.0.0.1:{REDIS_PORT}/0"}}
        settings.SESSION_ENGINE = "config.sessions"
        yield


def test_a_redis_outage_falls_back_to_the_database(own_redis, settings):
    from django.core.cache import cache

    campaign = make_campaign()
    annotator = Client()
    assert enter(annotator, campaign).status_code == 302
    assignment = Assignment.objects.get()
    url = f"/api/v1/assignments/{assignment.pk}/draft/"
    assert annotator.get(f"/annotate/{assignment.pk}/").status_code == 200
    assert send(annotator, "put", url, json.dumps({"text": "The chair"}).encode()).json()["revision"] == 1
    assert cache.get(f"auth-user:{assignment.worker_id}") is not None  # the cache is in use

    reviewer = Client()
    reviewer.force_login(UserFactory(role=roles.REVIEWER))
    assert reviewer.get("/review/").status_code == 200

    stop_redis(REDIS_PORT)
    # Signed-in pages and autosave keep working, from the database.
    assert annotator.get(f"/annotate/{assignment.pk}/").status_code == 200
    saved = send(annotator, "put", url, json.dumps({"text": "The chair has", "revision": 1}).encode())
    assert saved.status_code == 200 and saved.json()["revision"] == 2
    assert AssignmentDraft.objects.get(assignment=assignment).text == "The chair has"
    assert reviewer.get("/review/").status_code == 200
    # New arrivals and sign-ins work too.
    newcomer = Client()
    assert enter(newcomer, campaign, "NEW").status_code == 302
    assert newcomer.get("/").status_code == 200
    staff = Client()
    staff.post(LOGIN, {"username": UserFactory(username="during-outage").username, "password": "pw"})
    assert staff.get("/").context["user"].username == "during-outage"
    # Signing out during the outage: the session is gone from the database, its cached copy is stale.
    old_cookie = reviewer.cookies["sessionid"].value
    assert reviewer.post("/accounts/logout/").status_code == 302

    start_redis(REDIS_PORT)  # an empty Redis: a restarted one would have kept the old copy, so put it back
    from django.contrib.sessions.backends.cached_db import KEY_PREFIX
    stale_key = cache.make_key(KEY_PREFIX + old_cookie)
    import redis

    raw = redis.Redis(port=REDIS_PORT)
    raw.set(stale_key, b"stale")
    # The first use of the cache after the outage drops what changed during it, then works as before.
    assert annotator.get(f"/annotate/{assignment.pk}/").status_code == 200
    assert not raw.exists(stale_key)
    replay = Client()
    replay.cookies["sessionid"] = old_cookie
    assert replay.get("/review/").status_code in (302, 403)  # signed out stays signed out
    saved = send(annotator, "put", url, json.dumps({"text": "The chair has been", "revision": 2}).encode())
    assert saved.status_code == 200 and saved.json()["revision"] == 3
    assert cache.get(f"auth-user:{assignment.worker_id}") is not None  # cached again
    assert AssignmentDraft.objects.get(assignment=assignment).text == "The chair has been"
