"""#44: the input guard checks what the parsers produce. A body declaring a charset other than UTF-8
(utf-7, unicode_escape, latin-1, utf-16...) would be decoded by DRF or Django otherwise than the guard
read it (a harmless "\\u0000" becomes a NUL after the check), so it is refused with 415 on every
route, JSON, form or multipart, and nothing is written; an overlay label goes through the same text
check; text already stored that UTF-8 cannot carry is shown escaped, never a 500."""

import json

import pytest
from django.apps import apps
from django.db import DatabaseError, connection, transaction
from django.http import HttpResponse
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.renderers import JSONRenderer

from annotation import services as annotation_services
from annotation.models import Assignment
from core.errors import DomainError
from humaneval.services.design import StudyDesign, create_study
from tests.core.test_hardening_writes import approved_items, link, make_campaign
from tests.factories import ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

CHARSETS = ["utf-7", "unicode_escape", "latin-1", "utf-16", "UTF-16LE", "utf-32", "cp1252", "no-such-codec"]
EVIL_JSON = '{"text": "a\\u0000b \\ud800", "answer": "\\u0000", "name": "\\udfff", "label": "x"}'
EVIL_FORM = "text=a%00b&answer=%ED%A0%80&name=x"
SAMPLE = {"<int:": "1", "<str:": "x", "<slug:": "x", "<path:": "x", "<uuid:": "00000000-0000-0000-0000-000000000001"}


def routes(patterns=None, prefix=""):
    """Every route of the site as a concrete path (each parameter given a sample value)."""
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        route = str(entry.pattern)
        if route.startswith("^"):  # a regex route (static files, admin internals): its plain prefix
            route = route.lstrip("^").split("(")[0].replace("\\", "").rstrip("$")
        while "<" in route:
            start, end = route.index("<"), route.index(">")
            converter = next((v for k, v in SAMPLE.items() if route[start:].startswith(k)), "1")
            route = route[:start] + converter + route[end + 1:]
        if isinstance(entry, URLResolver):
            yield from routes(entry.url_patterns, prefix + route)
        elif isinstance(entry, URLPattern):
            yield "/" + prefix + route


def row_counts() -> dict:
    return {model._meta.label: model.objects.count() for model in apps.get_models() if model._meta.managed}


@pytest.fixture
def admin():
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def test_every_route_refuses_a_body_in_another_charset_with_415_and_writes_nothing(admin):
    paths = sorted(set(routes()))
    assert len(paths) > 50
    before = row_counts()
    for path in paths:
        for charset in CHARSETS:
            for content_type, body in (("application/json", EVIL_JSON.encode("utf-8")),
                                       ("application/x-www-form-urlencoded", EVIL_FORM.encode("ascii")),
                                       ("multipart/form-data; boundary=BoUnDaRy",
                                        b'--BoUnDaRy\r\nContent-Disposition: form-data; name="text"\r\n\r\n'
                                        b"+AAA-\r\n--BoUnDaRy--\r\n"),
                                       ("text/plain", EVIL_JSON.encode("utf-8"))):
                for method in ("POST", "PUT", "PATCH"):  # generic(): the bytes as given, not re-encoded
                    answer = admin.generic(method, path, body, content_type=f"{content_type}; charset={charset}")
                    assert answer.status_code == 415, (path, charset, content_type, method, answer.status_code)
                    assert "UTF-8" in answer.json()["body"][0]
    assert row_counts() == before


def test_every_route_answers_nul_and_surrogates_in_utf8_without_a_5xx_and_writes_nothing(admin):
    before = row_counts()
    for path in sorted(set(routes())):
        for content_type in ("application/json", "application/json; charset=utf-8", "application/json; charset=UTF8"):
            answer = admin.post(path, EVIL_JSON, content_type=content_type)
            assert answer.status_code == 400, (path, content_type, answer.status_code)
        answer = admin.post(path, EVIL_FORM, content_type="application/x-www-form-urlencoded; charset=utf-8")
        assert answer.status_code == 400, (path, answer.status_code)
    assert row_counts() == before


@pytest.fixture
def leased():
    scene = SceneFactory()
    worker = UserFactory(role="annotator")
    campaign = annotation_services.create_campaign(scene.benchmark, "Moves", "movement", [scene])
    assignment = annotation_services.lease_assignment(campaign, worker)
    client = Client()
    client.force_login(worker)
    return client, assignment


@pytest.mark.parametrize("charset", ["unicode_escape", "utf-7", "utf-16", "latin-1"])
def test_the_probes_crowd_submit_with_a_charset_is_refused_and_nothing_is_stored(leased, charset):
    client, assignment = leased
    text = "The chair has been moved from the desk to the window \\u0000 next to the bookshelf \\ud800."
    answer = client.generic("POST", f"/api/v1/assignments/{assignment.pk}/submit/",
                            ('{"text": "' + text + '"}').encode(), content_type=f"application/json; charset={charset}")
    assert answer.status_code == 415
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.LEASED and not assignment.result


def test_utf8_and_ascii_declared_still_pass(leased):
    client, assignment = leased
    text = "The chair has been moved from the desk to the window next to the bookshelf, café side."
    answer = client.post(f"/api/v1/assignments/{assignment.pk}/submit/", json.dumps({"text": text}),
                         content_type="application/json; charset=UTF-8")
    assert answer.status_code == 201, answer.content[:300]


@pytest.mark.parametrize("label", ["a\x00b", "x\ud800"])
def test_an_overlay_label_goes_through_the_text_check(label):
    from benchmarks.overlays import validate

    with pytest.raises(DomainError) as refused:
        validate([{"type": "box", "x": 0.1, "y": 0.1, "width": 0.2, "height": 0.2, "colour": "#ff0000",
                   "label": label}], n_images=1)
    assert "label" in refused.value.message


def test_text_utf8_cannot_carry_is_shown_escaped_not_a_500():
    page = HttpResponse("before \ud800 after")
    assert page.content == b"before \\ud800 after"
    body = JSONRenderer().render({"text": "x\udfff", "plain": "café"})
    assert json.loads(body) == {"text": "x\udfff", "plain": "café"}


def test_a_stored_lone_surrogate_never_breaks_a_page(admin):
    item = ItemFactory()
    try:
        with transaction.atomic():
            type(item).objects.filter(pk=item.pk).update(choices=["fine", "bad \ud800"])
    except (DatabaseError, UnicodeEncodeError):
        assert connection.vendor == "postgresql"  # PostgreSQL cannot hold it: nothing to render
        return
    for path in (f"/api/v1/items/{item.pk}/", f"/review/items/{item.pk}/"):
        answer = admin.get(path)
        assert answer.status_code < 500, (path, answer.status_code)


def test_bodies_that_are_not_utf8_with_no_charset_declared_get_no_5xx_anywhere():
    admin = Client(raise_request_exception=False)
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    before = row_counts()
    broken = []
    for path in sorted(set(routes()) - set(SIGN_OUT)):
        for body, content_type in (('{"text": "café \\u0000", "name": "x"}'.encode("utf-16"), "application/json"),
                                   ('{"text": "café", "name": "x"}'.encode("utf-16"), "application/json"),
                                   (b"\xff\xfe\xfa", "application/json"),
                                   (b"text=\xc3\x28&name=%ED%A0%80", "application/x-www-form-urlencoded")):
            answer = admin.generic("POST", path, body, content_type=content_type)
            if answer.status_code >= 500:
                broken.append((path, content_type, answer.status_code))
    assert broken == []
    after = row_counts()
    after.pop("sessions.Session"), before.pop("sessions.Session")  # a view may start a browser session
    assert after == before


# --- Multipart, query strings, every kind of visitor ---------------------------------------------
# NUL and lone surrogates as JSON escapes and as raw bytes (invalid UTF-8 among them), in multipart
# fields, names, filenames and small JSON files, and in query strings (the crowd entry reads PROLIFIC_PID,
# STUDY_ID and SESSION_ID from it), sent signed out, from a crowd worker's session and as an admin.

BOUNDARY = "FuZzBoUnDaRy"
SIGN_OUT = ("/accounts/logout/", "/admin/logout/")  # left out, so each visitor stays who they are


def multipart(*parts: tuple[bytes, bytes]) -> bytes:
    """A multipart body of (the part's headers after `form-data; `, its content) parts."""
    body = b""
    for headers, content in parts:
        body += f"--{BOUNDARY}\r\nContent-Disposition: form-data; ".encode() + headers + b"\r\n\r\n" + content + b"\r\n"
    return body + f"--{BOUNDARY}--\r\n".encode()


EVIL_MULTIPART = {
    "NUL byte in a value": multipart((b'name="text"', b"a\x00b"), (b'name="name"', b"x")),
    "NUL byte in a name": multipart((b'name="te\x00xt"', b"x")),
    "escaped NUL in a JSON value": multipart((b'name="config"', b'{"a": "\\u0000"}'), (b'name="name"', b"x")),
    "escaped surrogate in a JSON value": multipart((b'name="content"', b'["\\ud800"]')),
    "surrogate and invalid UTF-8 bytes": multipart((b'name="text"', b"a\xed\xa0\x80b"), (b'name="name"', b"\xc3\x28")),
    "invalid UTF-8 name": multipart((b'name="\xff\xfe"', b"x")),
    "NUL in a filename": multipart((b'name="file"; filename="a\x00.json"\r\nContent-Type: application/json', b"{}")),
    "surrogate bytes in a filename": multipart((b'name="file"; filename="\xed\xa0\x80.png"\r\n'
                                                b"Content-Type: image/png", b"\x89PNG")),
    "escaped NUL in a .json file": multipart((b'name="file"; filename="items.json"\r\nContent-Type: application/json',
                                              b'{"text": "\\u0000"}')),
    "surrogate bytes in a .jsonl file": multipart((b'name="file"; filename="items.jsonl"\r\n'
                                                   b"Content-Type: application/json", b'{"text": "\xed\xa0\x80"}\n')),
}
EVIL_QUERIES = ["PROLIFIC_PID=%00&STUDY_ID=ST&SESSION_ID=SE1", "PROLIFIC_PID=%ED%A0%80&STUDY_ID=ST&SESSION_ID=SE1",
                "PROLIFIC_PID=P1&STUDY_ID=%ED%A0%80&SESSION_ID=%00", "%00=x&q=%ED%A0%80&page=%ED%A0%80",
                "workerId=%ED%A0%80&assignmentId=%00", "config=%7B%22a%22%3A%22%5Cud800%22%7D"]


def stored_rows() -> dict:
    """Row counts, leaving out browser sessions (a page may start one for a visitor)."""
    counts = row_counts()
    counts.pop("sessions.Session")
    return counts


@pytest.fixture
def visitors(admin):
    """A signed-out client, a crowd worker in their session (entered through a campaign's link, without
    Prolific's API) and an admin; none raises a view's exception (a 500 is answered, then counted)."""
    signed_out, worker = Client(raise_request_exception=False), Client(raise_request_exception=False)
    campaign = make_campaign()
    assert worker.post(f"/crowd/campaigns/{campaign.pk}/", link("FUZZ1")).status_code == 302
    admin.raise_request_exception = False
    return {"signed out": signed_out, "crowd worker": worker, "admin": admin}


def test_every_route_takes_evil_multipart_and_query_strings_from_anyone_without_a_5xx_or_a_row(visitors):
    """Every route as every visitor, each pair sent two multipart cases and two query strings in turn
    (all 16 cases by every visitor over the routes, each on many routes and with both methods): the
    whole product, 32 requests a pair, took six minutes of the suite for what the rotation already
    finds (the consent page's 500 came up under both)."""
    before, broken = stored_rows(), []
    bodies, queries = list(EVIL_MULTIPART.items()), EVIL_QUERIES
    for n, path in enumerate(sorted(set(routes()) - set(SIGN_OUT))):
        for v, (who, client) in enumerate(visitors.items()):
            turn = n * len(visitors) + v
            for k in (turn, turn + 1):
                case, body = bodies[k % len(bodies)]
                method = ("POST", "PATCH")[k // len(bodies) % 2]
                answer = client.generic(method, path, body, content_type=f"multipart/form-data; boundary={BOUNDARY}")
                if answer.status_code >= 500:
                    broken.append((who, method, path, case, answer.status_code))
                query, method = queries[k % len(queries)], ("GET", "POST")[k // len(queries) % 2]
                answer = client.generic(method, f"{path}?{query}")
                if answer.status_code >= 500:
                    broken.append((who, method, path, query, answer.status_code))
    assert broken == []
    assert stored_rows() == before
    assert all("_auth_user_id" in visitors[who].session for who in ("crowd worker", "admin"))  # fuzzed signed in


@pytest.fixture
def entries():
    """The two crowd entry pages of real work: a campaign's and a human study's."""
    items = approved_items(2)
    study = create_study(items[0].benchmark, StudyDesign("Pilot", [i.pk for i in items], participants_per_item=2),
                         None)
    return [f"/crowd/campaigns/{make_campaign().pk}/", f"/crowd/studies/{study.pk}/"]


@pytest.mark.parametrize("query", EVIL_QUERIES[:3])
def test_the_crowd_entry_refuses_nul_and_surrogates_in_its_ids_and_stores_nobody(entries, query):
    worker = Client()
    assert worker.post(entries[0], link("REAL1")).status_code == 302
    before = stored_rows()
    for path in entries:
        for method in ("GET", "POST"):
            for who, client in (("signed out", Client()), ("crowd worker", worker)):
                answer = client.generic(method, f"{path}?{query}")
                assert answer.status_code == 400, (who, method, path, answer.status_code)
    assert stored_rows() == before
