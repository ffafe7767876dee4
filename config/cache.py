"""Django's Redis cache with one client per connection pool, that falls back to the database when
Redis is down.

One client per pool: the stock backend builds a new redis.Redis, with its table of response
callbacks, on every call; on a request that only reads its session from the cache that costs more
than the round trip itself.

Falling back: everything this project keeps in the cache (sessions, signed-in users, viewer and
stimulus data, throttling counters) can be read again from the database or recomputed. So while
Redis cannot be reached, a read is a miss and a write or delete does nothing: sessions
(config/sessions.py, cached_db) and users (core/auth.py) are read from the database, pages
and autosave keep working. After a failure the cache is not tried again for RETRY_AFTER_S seconds,
so an outage costs one failed connection per process every few seconds, not one per request.

A key written or deleted while Redis was unreachable may still hold an older value in Redis (a
session signed out during the outage, a user deactivated): this process remembers those keys and
deletes them before it uses Redis again. A process that exits first forgets them, so such a value
can outlive the outage by at most its own expiry (300 s for users)."""

import logging
import threading
import time

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient
from redis import exceptions as redis_errors

log = logging.getLogger(__name__)

# Redis unreachable, hung, loading its data, or refusing writes (a replica after a failover, out of memory).
UNAVAILABLE = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    redis_errors.ReadOnlyError,
    redis_errors.OutOfMemoryError,
    OSError,
)
RETRY_AFTER_S = 5.0
# Connect and read timeouts (seconds) unless the cache's OPTIONS say otherwise: without them a hung
# Redis would hang every request.
DEFAULT_OPTIONS = {"socket_connect_timeout": 1.0, "socket_timeout": 2.0}
MAX_STALE_KEYS = 100_000


class _FallbackRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}
        self._down_until = 0.0
        self._stale: set = set()
        self._lock = threading.Lock()

    def get_client(self, key=None, *, write=False):
        # redis.Redis is safe to share between threads: each command takes a connection from the pool.
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(connection_pool=self._get_connection_pool(write))
        return client

    # --- the fallback ---------------------------------------------------------------------------

    @property
    def available(self) -> bool:
        """False while a recent failure keeps this process off Redis."""
        return time.monotonic() >= self._down_until

    def _call(self, operation, fallback, stale_keys=()):
        if time.monotonic() < self._down_until:
            self._remember(stale_keys)
            return fallback
        try:
            if self._stale:
                self._forget_stale()
            return operation()
        except UNAVAILABLE as exc:
            if self.available:
                log.warning("Redis cache unavailable (%r): reading from the database for %.0f s", exc, RETRY_AFTER_S)
            self._down_until = time.monotonic() + RETRY_AFTER_S
            self._remember(stale_keys)
            return fallback

    def _remember(self, keys) -> None:
        if not keys:
            return
        with self._lock:
            room = MAX_STALE_KEYS - len(self._stale)
            if room < len(keys):
                log.error("Redis cache: more than %d keys changed during an outage; some may be stale",
                          MAX_STALE_KEYS)
            self._stale.update(list(keys)[:max(room, 0)])

    def _forget_stale(self) -> None:
        """Delete the keys changed while Redis was unreachable (raises if it still is)."""
        with self._lock:
            keys = list(self._stale)
        client = self.get_client(write=True)
        for start in range(0, len(keys), 1000):
            client.delete(*keys[start:start + 1000])
        with self._lock:
            self._stale.difference_update(keys)
        log.warning("Redis cache back: %d keys changed during the outage were dropped", len(keys))

    # --- RedisCacheClient's operations, each with its fallback ----------------------------------

    def get(self, key, default):
        return self._call(lambda: super(_FallbackRedisCacheClient, self).get(key, default), default)

    def get_many(self, keys):
        return self._call(lambda: super(_FallbackRedisCacheClient, self).get_many(keys), {})

    def has_key(self, key):
        return self._call(lambda: super(_FallbackRedisCacheClient, self).has_key(key), False)

    def set(self, key, value, timeout):
        self._call(lambda: super(_FallbackRedisCacheClient, self).set(key, value, timeout), None, (key,))

    def set_many(self, data, timeout):
        self._call(lambda: super(_FallbackRedisCacheClient, self).set_many(data, timeout), None, tuple(data))

    def add(self, key, value, timeout):
        # Nothing was stored: callers using add() as "first one wins" see that they did not win.
        return self._call(lambda: super(_FallbackRedisCacheClient, self).add(key, value, timeout), False, (key,))

    def touch(self, key, timeout):
        return self._call(lambda: super(_FallbackRedisCacheClient, self).touch(key, timeout), False)

    def delete(self, key):
        return self._call(lambda: super(_FallbackRedisCacheClient, self).delete(key), False, (key,))

    def delete_many(self, keys):
        keys = list(keys)
        self._call(lambda: super(_FallbackRedisCacheClient, self).delete_many(keys), None, tuple(keys))

    def incr(self, key, delta):
        missing = object()
        value = self._call(lambda: super(_FallbackRedisCacheClient, self).incr(key, delta), missing)
        if value is missing:
            raise ValueError(f"Key '{key}' not found (the cache is unavailable).")
        return value

    # clear() is left as it is: it flushes the whole Redis database and should fail loudly.


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _FallbackRedisCacheClient
        self._options = {**DEFAULT_OPTIONS, **self._options}

    @property
    def available(self) -> bool:
        return self._cache.available
