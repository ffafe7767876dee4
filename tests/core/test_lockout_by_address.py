"""Login lockout by username and address (issue #34): failed logins for the admin from one address lock
the admin out from that address only; the admin signs in from their own."""

import pytest
from django.test import Client

from core import roles
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"


def test_failures_from_one_address_do_not_lock_the_account_out_everywhere():
    UserFactory(username="boss", role=roles.ADMIN)
    attacker = Client(REMOTE_ADDR="203.0.113.66")
    for attempt in range(10):
        attacker.post(LOGIN, {"username": "boss", "password": f"wrong{attempt}"})
    assert attacker.post(LOGIN, {"username": "boss", "password": "pw"}).status_code == 429
    owner = Client(REMOTE_ADDR="198.51.100.20")
    signed_in = owner.post(LOGIN, {"username": "boss", "password": "pw"})
    assert signed_in.status_code == 302 and "_auth_user_id" in owner.session
