"""Sessions cached in Redis and written through to the database (Django's cached_db), but a new
session is written once. Django's create() reads the cache and the database to check that a fresh
random key is unused and inserts the row at once, and the response then updates the row with the
signed-in user: every crowd arrival paid for four round trips and two writes. Here a new key is
inserted when the session is first saved; a taken key (odds of 62^-32) is replaced and the insert
tried again."""

from django.contrib.sessions.backends.base import VALID_KEY_CHARS, CreateError
from django.contrib.sessions.backends.cached_db import SessionStore as CachedDBStore
from django.utils.crypto import get_random_string


class SessionStore(CachedDBStore):
    _key_stored = True

    def create(self):
        self._session_key = get_random_string(32, VALID_KEY_CHARS)
        self._key_stored = False
        self.modified = True

    def save(self, must_create=False):
        if self.session_key is None:
            self.create()
        if self._key_stored:
            return super().save(must_create)
        while True:
            try:
                super().save(must_create=True)
            except CreateError:
                self._session_key = get_random_string(32, VALID_KEY_CHARS)
                continue
            self._key_stored = True
            return
