"""Inference batches in flight, and the reaper that hands a dead GPU worker's batch to another.

Redis keeps an unacknowledged message invisible for CELERY_VISIBILITY_TIMEOUT (an hour: a real
model's batch may take many minutes, and a shorter timeout would hand a batch that is still running
to a second worker). A GPU worker killed mid-batch would stall its run for that hour. So a worker
records each batch it runs, and beats every INFERENCE_HEARTBEAT_S from a thread of its own while
the batch runs (it keeps beating through a long model call; it stops when the process dies):

    <prefix>hypolab:inflight             sorted set: task id -> time of the last beat (Redis's clock)
    <prefix>hypolab:inflight:<task id>   {run, items, worker, host, pid, started, progress, written}

`reap_stalled_batches` (Celery beat, every 15 s on the default queue: config/celery.py) takes each batch whose
worker has not beaten for INFERENCE_STALE_S: its worker is gone (killed, out of memory, its machine
lost). It puts the worker's unacknowledged message back at the head of its queue, as the visibility
timeout would have an hour later (the message leaves the unacknowledged set, so it is never handed
out twice); if the message is no longer there, it sends the batch again. Either way another worker
infers only what the batch is missing: `infer_items` skips stored predictions and the unique
constraint (run, item, variant, repeat) refuses a second one. So a killed worker's batch is running
again within INFERENCE_STALE_S + 15 s (35 s by default) of the kill.

A worker whose process lives but whose thread cannot run (a frozen machine) looks dead too: its
batch is run again elsewhere, and the constraint still keeps one prediction per key.

Nothing is recorded in the embedded default (tasks run in the caller's process, nothing to reap),
and a Redis that cannot be reached never fails a batch: it only goes unwatched."""

import json
import logging
import os
import socket
import threading
import time

import redis
from django.conf import settings

from core.redis_roles import lock_client

from .. import dispatch

log = logging.getLogger(__name__)

RECORD_TTL_S = 7 * 24 * 3600  # a record outlives any batch; it is deleted when the batch ends

# Take a batch only if its last beat is still older than the cutoff: a worker that picked the batch
# up again in between keeps it. Returns the record (or "" when it was lost), or nil.
_CLAIM = """
local beat = redis.call('ZSCORE', KEYS[1], ARGV[1])
if beat and tonumber(beat) <= tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  local record = redis.call('GET', KEYS[2])
  redis.call('DEL', KEYS[2])
  return record or ''
end
return false
"""

_clients: dict = {}


def enabled() -> bool:
    return bool(settings.REDIS_URL)


def client() -> redis.Redis:
    """The locks' Redis (LOCK_REDIS_URL, Sentinel included; REDIS_URL unless set): batches' records and beats."""
    key = (os.getpid(), settings.LOCK_REDIS_URL)
    if key not in _clients:
        _clients[key] = lock_client(socket_connect_timeout=2, socket_timeout=5)
    return _clients[key]


def index_key() -> str:
    return f"{settings.REDIS_KEY_PREFIX}hypolab:inflight"


def record_key(task_id: str) -> str:
    return f"{index_key()}:{task_id}"


def redis_now(conn: redis.Redis) -> float:
    """Redis's clock, so workers and the reaper on different machines agree on what is stale."""
    seconds, micros = conn.time()
    return seconds + micros / 1e6


class Batch:
    """One batch being run by this process: recorded at the start, beaten from a daemon thread,
    updated on each write of predictions, deleted at the end."""

    def __init__(self, task_id: str, run_id: int, item_ids: list[int], worker: str = ""):
        self.task_id = task_id
        self.record = {
            "task": task_id, "run": run_id, "items": list(item_ids), "worker": worker,
            "host": socket.gethostname(), "pid": os.getpid(), "started": time.time(), "progress": time.time(),
            "written": 0,
        }
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat_until_stopped, name=f"inflight-{task_id}", daemon=True)
        self._warned = False

    def __enter__(self):
        self._beat(record=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=10)
        try:
            conn = client()
            conn.pipeline().zrem(index_key(), self.task_id).delete(record_key(self.task_id)).execute()
        except redis.RedisError as error:  # left behind: the reaper finds it stale and sees the run done
            log.warning("Batch %s: its in-flight record was not removed (%r)", self.task_id, error)

    def progress(self, written: int) -> None:
        """Predictions were stored: note when, for whoever looks at a stalled run."""
        self.record["written"] += written
        self.record["progress"] = time.time()
        self._beat(record=True)

    def _beat(self, record=False) -> None:
        try:
            conn = client()
            pipe = conn.pipeline()
            pipe.zadd(index_key(), {self.task_id: redis_now(conn)})
            if record:
                pipe.set(record_key(self.task_id), json.dumps(self.record), ex=RECORD_TTL_S)
            pipe.execute()
        except redis.RedisError as error:
            if not self._warned:
                log.warning("Batch %s: heartbeat not recorded (%r); a crash now waits for the visibility "
                            "timeout", self.task_id, error)
                self._warned = True

    def _beat_until_stopped(self) -> None:
        while not self._stop.wait(settings.INFERENCE_HEARTBEAT_S):
            self._beat()


class _Unwatched:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def progress(self, written: int) -> None:
        return None


def watch(task_id: str | None, run_id: int, item_ids: list[int], worker: str = ""):
    """The context a batch runs in: a heartbeat with the services stack, nothing otherwise."""
    if not enabled() or not task_id:
        return _Unwatched()
    return Batch(task_id, run_id, item_ids, worker)


def in_flight() -> list[dict]:
    """The batches recorded as running, each with `beat` (seconds since its worker last beat)."""
    conn = client()
    now = redis_now(conn)
    rows = []
    for task_id, beat in conn.zrange(index_key(), 0, -1, withscores=True):
        task_id = task_id.decode()
        raw = conn.get(record_key(task_id))
        rows.append({**(json.loads(raw) if raw else {"task": task_id}), "beat": round(now - beat, 1)})
    return rows


def reap_stalled_batches() -> list[dict]:
    """Hand every batch whose worker stopped beating to another worker; returns what was done, one
    entry per batch: {task, run, items, worker, action: redelivered | resent | dropped}."""
    from ..models import Run

    if not enabled():
        return []
    conn = client()
    if conn.info("server").get("uptime_in_seconds", 0) < settings.INFERENCE_STALE_S:
        # Redis itself was restarted: no worker could beat while it was down, and each beats again
        # within INFERENCE_HEARTBEAT_S of its return. Judge them once it has been up long enough.
        return []
    cutoff = redis_now(conn) - settings.INFERENCE_STALE_S
    claim = conn.register_script(_CLAIM)
    done = []
    for task_id in conn.zrangebyscore(index_key(), "-inf", cutoff):
        task_id = task_id.decode()
        raw = claim(keys=[index_key(), record_key(task_id)], args=[task_id, cutoff])
        if raw is None:
            continue  # another reaper took it, or its worker (or a new one) beat meanwhile
        record = json.loads(raw) if raw else {}
        run_id, items = record.get("run"), record.get("items") or []
        running = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).exists() if run_id else False
        if redeliver(task_id):
            action = "redelivered"
        elif running and items:
            dispatch.resend_batch(task_id, run_id, items)
            action = "resent"
        else:
            action = "dropped"
        entry = {"task": task_id, "run": run_id, "items": len(items), "worker": record.get("worker"),
                 "host": record.get("host"), "pid": record.get("pid"), "written": record.get("written"),
                 "action": action}
        log.warning("Inference batch %s of run %s: its worker %s (host %s, pid %s) stopped beating; %s",
                    task_id, run_id, entry["worker"], entry["host"], entry["pid"], action)
        done.append(entry)
    return done


def redeliver(task_id: str) -> bool:
    """Put the task's unacknowledged message back at the head of its queue (kombu's Redis transport:
    the `unacked` hash holds each delivered message until it is acknowledged). False when it is not
    there (acknowledged, or handed out again already)."""
    from celery import current_app as app  # the project app (config/celery.py), without importing config

    with app.connection_for_write() as connection:
        channel = connection.default_channel
        if not hasattr(channel, "unacked_key"):
            return False  # not the Redis transport (the embedded default's memory broker)
        unacked = f"{getattr(channel, 'global_keyprefix', '')}{channel.unacked_key}"
        for tag, raw in channel.client.hscan_iter(unacked):
            try:
                payload = json.loads(raw)[0]
            except (ValueError, IndexError, TypeError):
                continue
            if (payload.get("headers") or {}).get("id") == task_id:
                channel.qos.restore_by_tag(tag.decode() if isinstance(tag, bytes) else tag)
                return True
    return False
