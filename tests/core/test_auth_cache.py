"""Signed-in users and their roles come from the cache (core/auth.py), sessions are written
once on sign-in (config/sessions.py), and channel-layer messages leave from one loop per process
(core/broadcast.py): each change must still take effect at once."""

import asyncio

import pytest
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.services import create_campaign
from config import sessions
from core import broadcast, roles
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

REVIEW_PAGE = "/review/"


def _user_reads(queries) -> int:
    return sum('FROM "auth_user"' in q["sql"] and q["sql"].startswith("SELECT") for q in queries)


def test_a_signed_in_user_is_read_once_then_served_from_the_cache(client):
    client.force_login(UserFactory(role=roles.REVIEWER))
    assert client.get(REVIEW_PAGE).status_code == 200  # reads the user and the role names, caches both
    with CaptureQueriesContext(connection) as queries:
        assert client.get(REVIEW_PAGE).status_code == 200
    assert _user_reads(queries) == 0
    assert not any('"auth_group"' in q["sql"] for q in queries)


def test_a_deactivated_user_is_signed_out_at_once(client):
    user = UserFactory(role=roles.REVIEWER)
    client.force_login(user)
    assert client.get(REVIEW_PAGE).status_code == 200
    user.is_active = False
    user.save()
    assert client.get(REVIEW_PAGE).status_code == 302  # to the sign-in page


def test_a_changed_password_signs_out_other_sessions_at_once(client):
    user = UserFactory(role=roles.REVIEWER)
    client.force_login(user)
    assert client.get(REVIEW_PAGE).status_code == 200
    user.set_password("a new one")
    user.save()
    assert client.get(REVIEW_PAGE).status_code == 302


@pytest.mark.parametrize("revoke", ["user.groups.clear", "user.groups.remove", "group.user_set.remove",
                                    "group.user_set.clear"])
def test_roles_granted_and_revoked_take_effect_at_once(client, revoke):
    user = UserFactory()
    client.force_login(user)
    assert client.get(REVIEW_PAGE).status_code == 403
    roles.grant_role(user, roles.REVIEWER)
    assert client.get(REVIEW_PAGE).status_code == 200
    group = Group.objects.get(name=roles.REVIEWER)
    {
        "user.groups.clear": lambda: user.groups.clear(),
        "user.groups.remove": lambda: user.groups.remove(group),
        "group.user_set.remove": lambda: group.user_set.remove(user),
        "group.user_set.clear": lambda: group.user_set.clear(),
    }[revoke]()
    assert client.get(REVIEW_PAGE).status_code == 403
    group.user_set.add(user)
    assert client.get(REVIEW_PAGE).status_code == 200


def test_signing_in_writes_the_session_once(client):
    user = UserFactory(role=roles.REVIEWER)
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/accounts/login/", {"username": user.username, "password": "pw"})
    assert response.status_code == 302
    session_sql = [q["sql"] for q in queries if '"django_session"' in q["sql"]]
    assert len(session_sql) == 1 and session_sql[0].startswith("INSERT")
    assert client.get(REVIEW_PAGE).status_code == 200


def test_a_new_session_key_that_is_taken_is_replaced(client, monkeypatch):
    taken = sessions.SessionStore()
    taken["x"] = 1
    taken.save()
    keys = iter([taken.session_key, "b" * 32])
    monkeypatch.setattr(sessions, "get_random_string", lambda *args: next(keys))
    fresh = sessions.SessionStore()
    fresh["y"] = 2
    fresh.save()
    assert fresh.session_key == "b" * 32
    assert sessions.SessionStore(taken.session_key).load() == {"x": 1}
    assert sessions.SessionStore("b" * 32).load() == {"y": 2}


def test_a_group_message_reaches_a_listener_from_synchronous_code():
    layer = get_channel_layer()

    async def listen():
        channel = await layer.new_channel()
        await layer.group_add("auth-cache-test", channel)
        await asyncio.get_running_loop().run_in_executor(
            None, broadcast.send_to_group, "auth-cache-test", {"type": "test.message", "n": 1})
        return await asyncio.wait_for(layer.receive(channel), 5)

    assert asyncio.run(listen()) == {"type": "test.message", "n": 1}


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_a_session_is_one_statement_and_a_taken_key_is_still_replaced(monkeypatch):
    """A response's session (no transaction open: ATOMIC_REQUESTS is off) is written without BEGIN and
    COMMIT around its one INSERT or UPDATE (config/sessions.py)."""
    taken = sessions.SessionStore()
    taken["x"] = 1
    with CaptureQueriesContext(connection) as queries:
        taken.save()
    assert [q["sql"].split()[0] for q in queries] == ["INSERT"]
    keys = iter([taken.session_key, "c" * 32])
    monkeypatch.setattr(sessions, "get_random_string", lambda *args: next(keys))
    fresh = sessions.SessionStore()
    fresh["y"] = 2
    fresh.save()
    assert fresh.session_key == "c" * 32
    fresh["y"] = 3
    with CaptureQueriesContext(connection) as queries:
        fresh.save()
    assert [q["sql"].split()[0] for q in queries] == ["UPDATE"]
    assert sessions.SessionStore(taken.session_key).load() == {"x": 1}
    assert sessions.SessionStore("c" * 32).load() == {"y": 3}


def _enter_campaign(client, campaign, pid):
    link, ids = f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "S", "SESSION_ID": "X"}
    client.get(link, ids)
    return client.post(link, {**ids, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})


@pytest.mark.parametrize("returning", [False, True])
def test_the_page_after_a_crowd_entry_finds_the_account_and_its_roles_in_the_cache(returning):
    benchmark = BenchmarkFactory()
    campaign = create_campaign(benchmark, "Moves", "movement", [SceneFactory(benchmark=benchmark)])
    if returning:  # an account made by an earlier entry, entered again from another browser
        assert _enter_campaign(Client(), campaign, "CACHED").status_code == 302
    browser = Client()
    entered = _enter_campaign(browser, campaign, "CACHED")
    assert entered.status_code == 302
    with CaptureQueriesContext(connection) as queries:
        assert browser.get(entered["Location"]).status_code == 200
    assert _user_reads(queries) == 0
    assert not any('"auth_group"' in q["sql"] for q in queries)


def test_a_deactivated_crowd_account_is_not_signed_in_by_its_link():
    benchmark = BenchmarkFactory()
    campaign = create_campaign(benchmark, "Moves", "movement", [SceneFactory(benchmark=benchmark)])
    assert _enter_campaign(Client(), campaign, "GONE").status_code == 302
    get_user_model().objects.filter(username="prolific-GONE").update(is_active=False)
    browser = Client()
    entered = _enter_campaign(browser, campaign, "GONE")
    assert entered.status_code == 302
    page = browser.get(entered["Location"])
    assert page.status_code == 302 and page["Location"].startswith("/accounts/login/")
