"""A redis-server of a test's own (never the shared one on 6379), stopped and started at will: the
outage tests take it away under load and bring it back."""

import shutil
import socket
import subprocess
import time
from contextlib import contextmanager

from tests.needs import need


def redis_up(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _wait(port: int, up: bool) -> None:
    for _ in range(100):
        if redis_up(port) == up:
            return
        time.sleep(0.05)
    raise RuntimeError(f"redis-server did not {'start' if up else 'stop'}")


def start_redis(port: int) -> None:
    subprocess.run(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--daemonize", "yes"],
                   check=True, capture_output=True)
    _wait(port, up=True)


def stop_redis(port: int) -> None:
    subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True)
    _wait(port, up=False)


@contextmanager
def own_redis_server(port: int):
    """redis-server on `port` for the length of the block; skips the test where none is installed."""
    need(bool(shutil.which("redis-server")), "redis-server")
    if redis_up(port):
        stop_redis(port)  # left over from an interrupted run
    start_redis(port)
    try:
        yield port
    finally:
        if redis_up(port):
            stop_redis(port)
