"""Signed-in users and their roles come from the cache (core/auth.py), sessions are written
once on sign-in (config/sessions.py), and channel-layer messages leave from one loop per process
(core/broadcast.py): each change must still take effect at once."""

import asyncio

import pytest
from channels.layers import get_channel_layer
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from config import sessions
from core import broadcast, roles
from tests.factories import UserFactory

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
