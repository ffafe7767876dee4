"""Sessions cached in Redis and written through to the database (Django's cached_db), but a new
session is written once. Django's create() reads the cache and the database to check that a fresh
random key is unused and inserts the row at once, and the response then updates the row with the
signed-in user: every crowd arrival paid for four round trips and two writes. Here a new key is
inserted when the session is first saved; a taken key (odds of 62^-32) is replaced and the insert
tried again.

Redis down: the cache (config/cache.py) then answers misses and drops writes, so sessions are read
from and written to the database. Django's cached_db already survives a cache that raises when it
saves; here loading and deleting survive it too (Django's load() raised from the cache write after
its database read, and every signed-in request answered 500)."""

import logging

from django.contrib.sessions.backends.base import VALID_KEY_CHARS, CreateError, UpdateError
from django.contrib.sessions.backends.cached_db import SessionStore as CachedDBStore
from django.db import DatabaseError, IntegrityError, connections, router
from django.utils.crypto import get_random_string

log = logging.getLogger("django.contrib.sessions")


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
            return self._save(must_create)
        while True:
            try:
                self._save(must_create=True)
            except CreateError:
                self._session_key = get_random_string(32, VALID_KEY_CHARS)
                continue
            self._key_stored = True
            return

    def _save(self, must_create):
        """Django's cached_db save. Outside a transaction (a response's session, as ATOMIC_REQUESTS is
        off) without the transaction Django's db save opens around its one INSERT or UPDATE: a single
        statement is atomic by itself and a failed one leaves nothing to roll back, and BEGIN and COMMIT
        were two more round trips for every arrival. Inside one, Django's savepoint keeps a taken key
        from breaking the caller's transaction."""
        if connections[router.db_for_write(self.model)].in_atomic_block:
            return super().save(must_create)
        obj = self.create_model_instance(self._get_session(no_load=must_create))
        using = router.db_for_write(self.model, instance=obj)
        try:
            obj.save(force_insert=must_create, force_update=not must_create, using=using)
        except IntegrityError:
            if must_create:
                raise CreateError from None
            raise
        except DatabaseError:
            if not must_create:
                raise UpdateError from None
            raise
        try:
            self._cache.set(self.cache_key, self._session, self.get_expiry_age())
        except Exception:
            log.exception("Error saving to cache (%s)", self._cache)

    def load(self):
        try:
            data = self._cache.get(self.cache_key)
        except Exception:  # an invalid key (Django's reason) or a cache that is down
            data = None
        if data is not None:
            return data
        stored = self._get_session_from_db()
        if not stored:
            return {}
        data = self.decode(stored.session_data)
        try:
            self._cache.set(self.cache_key, data, self.get_expiry_age(expiry=stored.expire_date))
        except Exception:
            log.warning("Session not cached (%s): served from the database", self._cache, exc_info=True)
        return data

    def delete(self, session_key=None):
        if session_key is None:
            if self.session_key is None:
                return
            session_key = self.session_key
        super(CachedDBStore, self).delete(session_key)  # the database row
        try:
            self._cache.delete(self.cache_key_prefix + session_key)
        except Exception:
            log.exception("Session deleted from the database but not from the cache (%s)", self._cache)
