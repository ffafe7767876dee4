"""Messages to channel-layer groups (live dashboards, run progress) from synchronous code: request
threads and Celery tasks. `async_to_sync(layer.group_send)` starts an event loop, and with it a new
Redis connection, for every message: about 2.5 ms of CPU, more than the autosave it reports. Here
one event loop per process, on a daemon thread, keeps its connections, and the caller does not
wait for Redis. A message still in flight when the process exits is lost; pages that listen also
read the current state when they connect."""

import asyncio
import logging
import os
import threading

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

log = logging.getLogger(__name__)
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_loop_pid: int | None = None


def _sending_loop() -> asyncio.AbstractEventLoop:
    """This process's sending loop, started on first use (and again in a forked child, where the
    parent's thread does not run)."""
    global _loop, _loop_pid
    with _lock:
        if _loop is None or _loop_pid != os.getpid():
            _loop = asyncio.new_event_loop()
            _loop_pid = os.getpid()
            threading.Thread(target=_loop.run_forever, name="channel-layer-sends", daemon=True).start()
        return _loop


def _report_failure(future) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("A channel-layer message was not sent: %r", future.exception())


def send_to_group(group: str, message: dict) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer):
        # Its queues belong to the loop of whoever listens (the embedded server): send from here.
        async_to_sync(layer.group_send)(group, message)
        return
    asyncio.run_coroutine_threadsafe(layer.group_send(group, message), _sending_loop()).add_done_callback(
        _report_failure
    )
