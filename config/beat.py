"""A Celery beat that is safe to run twice: two or more beat replicas (one per host, for failover) share
a Redis lock (LOCK_REDIS_URL); only the replica holding it sends the schedule's tasks, the others wait and
take over within BEAT_LOCK_TTL_S of the holder dying. Settings: CELERY_BEAT_SCHEDULER names this class.

The lock is a key set with NX and an expiry, renewed by its holder on every tick (a tick comes at least every
BEAT_LOCK_TTL_S / 3 seconds). A replica that cannot reach Redis sends nothing. A replica taking over keeps
its own schedule file, so it may send an entry early once; every task on the schedule is an idempotent sweep
(config/celery.py), and the entries expire unsent after one period.
"""

import logging
import uuid

from celery.beat import PersistentScheduler
from django.conf import settings
from redis import exceptions as redis_errors

from core.redis_roles import lock_client

log = logging.getLogger(__name__)

# Renew only while the key is still ours (a replica that paused past the expiry must not take it back).
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""


def lock_key() -> str:
    return f"{settings.REDIS_KEY_PREFIX}hypolab:beat-lock"


class BeatLock:
    def __init__(self, client, ttl_s: float):
        self.client, self.ttl_ms, self.token = client, int(ttl_s * 1000), uuid.uuid4().hex
        self.held = False

    def acquire_or_renew(self) -> bool:
        """True while this replica holds the lock (taking it when free)."""
        try:
            if self.held and self.client.eval(_RENEW, 1, lock_key(), self.token, self.ttl_ms):
                return True
            self.held = bool(self.client.set(lock_key(), self.token, nx=True, px=self.ttl_ms))
        except (redis_errors.RedisError, OSError) as exc:
            log.warning("beat: the lock's Redis cannot be reached (%s); sending nothing", exc)
            self.held = False
        return self.held

    def release(self) -> None:
        try:
            self.client.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
                             "return 0", 1, lock_key(), self.token)
        except (redis_errors.RedisError, OSError):
            pass
        self.held = False


class LockedScheduler(PersistentScheduler):
    """PersistentScheduler that ticks only while it holds the beat lock; without a lock Redis (the embedded
    default) it is the plain scheduler."""

    def __init__(self, *args, **kwargs):
        client = lock_client(socket_connect_timeout=2, socket_timeout=5)
        self.lock = BeatLock(client, settings.BEAT_LOCK_TTL_S) if client is not None else None
        super().__init__(*args, **kwargs)

    def tick(self, *args, **kwargs):
        if self.lock is None:
            return super().tick(*args, **kwargs)
        wait = settings.BEAT_LOCK_TTL_S / 3
        if not self.lock.acquire_or_renew():
            return wait  # another replica sends; look again before its lock could expire
        return min(super().tick(*args, **kwargs), wait)

    def close(self):
        if self.lock is not None and self.lock.held:
            self.lock.release()
        super().close()
