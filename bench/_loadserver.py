"""Shared by the load benches: a fresh PostgreSQL database, the app served by a production server
on loopback, and a lean keep-alive HTTP client for the simulated crowd.

The server is gunicorn (WSGI, four processes per core of one thread each, the app loaded once
before the workers fork) with persistent database connections (CONN_MAX_AGE): measured on the
autosave hot path it costs half the CPU per request of an ASGI server (uvicorn), whose per-request
threads also cannot keep connections. The load starts once the server has answered a page. The
keep-alive timeout outlasts the 5 s between autosaves, as a browser's connection would.
LOAD_SERVER=daphne runs the same bench on daphne (ASGI, one process, a connection per request) for
comparison; LOAD_WORKERS and LOAD_THREADS change gunicorn's processes and threads per process. With
one thread a request's round trips to the database never wait for its process's interpreter lock:
on two cores 8 x 1 gave the evaluators' p95 57-99 ms where 4 x 2 gave 73-175 ms, and 4 x 2 had
beaten 2 x 4 (docs/PERFORMANCE.md)."""

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

from _database import bench_key, use_fresh_database  # a sibling module of the benches
from _database import drop_database as drop_bench_database

ROOT = Path(__file__).resolve().parents[1]
DB = "hypolab_bench_load"
SERVER_LOG = Path("/tmp/hypolab-load-server.log")

os.environ.update({
    "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB}",
    "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
    "REDIS_KEY_PREFIX": f"load-{os.getpid()}-",
    "DJANGO_SETTINGS_MODULE": "config.settings",
    "MEDIA_ROOT": "/tmp/hypolab-load-media",
    "DEBUG": "false",
    "HTTPS": "false",  # plain HTTP on loopback (config/settings.py)
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    # DEBUG off with services needs a key (config/settings.py): one per run, shared with the server
    "SECRET_KEY": bench_key(),
})
sys.path.insert(0, str(ROOT))


def setup_database():
    """Drop and create the bench database, migrate it, and set Django up in this process."""
    use_fresh_database(DB)


def drop_database():
    drop_bench_database(DB)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(port: int, workers: int) -> tuple[list[str], dict]:
    """The server's command line and the settings it runs with."""
    threads = os.environ.get("LOAD_THREADS", "1")
    if os.environ.get("LOAD_SERVER") == "daphne":
        return [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"], {}
    return [sys.executable, "-m", "gunicorn", "-b", f"127.0.0.1:{port}", "-w", str(workers), "-k", "gthread",
            "--threads", threads, "--keep-alive", "75", "--backlog", "4096", "--log-level", "warning", "--preload",
            "config.wsgi:application"], {"CONN_MAX_AGE": "300"}


class Server:
    """The app on a free loopback port, started and stopped around the bench."""

    def __init__(self, workers: int = int(os.environ.get("LOAD_WORKERS", 4 * (os.cpu_count() or 2)))):
        self.port = free_port()
        command, settings = server_command(self.port, workers)
        self.log = SERVER_LOG.open("w")  # 409s on double submits are logged too: keep them off the report
        self.process = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **settings},
                                        stdout=self.log, stderr=self.log)

    def __enter__(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("The server exited on start.")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as probe:
                    probe.sendall(b"GET /accounts/login/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                    if probe.recv(16).split(b" ")[1:2] == [b"200"]:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("The server did not answer within 60 s.")

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the server's processes (the master and its workers) have used, from
        their own counters in /proc: what the server spends, apart from the load generator beside it."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0.0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # a process that ended while we looked
            pid, ppid = int(stat.parent.name), int(fields[1])
            if self.process.pid in (pid, ppid):
                total += (int(fields[11]) + int(fields[12])) / ticks
        return total

    def __exit__(self, *exc):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


class Client:
    """A minimal HTTP/1.1 keep-alive client with a cookie jar: one connection per simulated person,
    cheap enough that one process drives a thousand of them."""

    def __init__(self, port):
        self.port, self.cookies, self.reader, self.writer = port, {}, None, None

    async def request(self, method, path, body=None):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        data = json.dumps(body).encode() if body is not None else b""
        headers = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: keep-alive",
                   f"Content-Length: {len(data)}"]
        if body is not None:
            headers += ["Content-Type: application/json", f"X-CSRFToken: {self.cookies.get('csrftoken', '')}"]
        if self.cookies:
            headers.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        self.writer.write(("\r\n".join(headers) + "\r\n\r\n").encode() + data)
        await self.writer.drain()
        status = int((await self.reader.readline()).split()[1])
        response_headers = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";")[0]
            response_headers[name] = value
        if response_headers.get("transfer-encoding") == "chunked":
            payload = b""
            while (size := int((await self.reader.readline()).strip(), 16)) > 0:
                payload += await self.reader.readexactly(size)
                await self.reader.readline()
            await self.reader.readline()
        else:
            payload = await self.reader.readexactly(int(response_headers.get("content-length", 0)))
        if response_headers.get("connection") == "close":
            self.close()
        return status, response_headers, payload

    def close(self):
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class Timings(dict):
    """Latencies in ms per endpoint."""

    def add(self, endpoint: str, ms: float) -> None:
        self.setdefault(endpoint, []).append(ms)

    def rate(self, elapsed: float) -> str:
        """How many requests were timed over `elapsed` seconds, and how many a second."""
        requests = sum(map(len, self.values()))
        return f"{requests} requests in {elapsed:.1f} s ({requests / elapsed:.0f}/s)"

    def report(self) -> float:
        """Print p50/p95 per endpoint; return the worst endpoint's p95."""
        worst = 0.0
        for endpoint, values in sorted(self.items()):
            p50 = statistics.median(values)
            p95 = statistics.quantiles(values, n=20)[18] if len(values) > 1 else values[0]
            worst = max(worst, p95)
            print(f"{endpoint:10s} n={len(values):6d} p50={p50:7.1f} ms p95={p95:7.1f} ms")
        return worst


async def timed(client: Client, timings: Timings, endpoint: str, method: str, path: str, body=None):
    """One request, timed; a broken connection counts as status 0 (the caller counts it lost)."""
    started = time.perf_counter()
    try:
        result = await client.request(method, path, body)
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
        client.close()
        result = (0, {}, b"")
    timings.add(endpoint, (time.perf_counter() - started) * 1000)
    return result


def run_async(coroutine):
    """uvloop when installed: the load generator shares the two cores with the server."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split(" ")[0]


class LoadRun(NamedTuple):
    target: int  # the campaign or study id
    timings: Timings
    outcome: dict
    elapsed: float  # seconds
    load_before: str
    load_after: str
    server_cpu_s: float  # the server's CPU seconds over the load

    def finish(self, who: str, details: str, **figures) -> None:
        """Drop the bench database, print what ran and each endpoint's latencies, and last the
        key=value line: the worst endpoint's p95 and `figures`."""
        drop_database()
        requests = sum(map(len, self.timings.values()))
        cpu_ms = self.server_cpu_s * 1000 / max(requests, 1)
        print(f"{who}, {self.timings.rate(self.elapsed)}; {details}; "
              f"loadavg {self.load_before} before, {self.load_after} after; "
              f"server CPU {self.server_cpu_s:.1f} s ({self.server_cpu_s / self.elapsed:.2f} cores)")
        print(" ".join([f"p95_ms={self.timings.report():.0f}", *(f"{k}={v}" for k, v in figures.items()),
                        f"server_cpu_ms_per_request={cpu_ms:.2f}", f"load_before={self.load_before}"]))


def run_load(seed, drive) -> LoadRun:
    """Fresh database, `seed()` -> the campaign or study id, the server, then `drive(port, id)` to
    the end."""
    setup_database()
    target = seed()
    load_before = loadavg()
    with Server() as server:
        cpu_before = server.cpu_seconds()
        started = time.monotonic()
        timings, outcome = run_async(drive(server.port, target))
        elapsed = time.monotonic() - started
        server_cpu_s = server.cpu_seconds() - cpu_before
        load_after = loadavg()
    return LoadRun(target, timings, outcome, elapsed, load_before, load_after, server_cpu_s)


async def enter_from_link(client, timings, link: str, outcome) -> int | None:
    """A crowd link as a browser follows it: the GET shows the start page (it changes nothing), its
    form POSTs the same address, which signs in and redirects to the page; then that page. The id at
    the end of the page's URL, or None (counted lost) when the link did not lead there."""
    status, headers, _ = await timed(client, timings, "link", "GET", link)
    if status == 200:
        status, headers, _ = await timed(client, timings, "enter", "POST", link, {})
    if status != 302:
        outcome["lost"] += 1
        client.close()
        return None
    page = headers["location"]
    await timed(client, timings, "page", "GET", page)
    return int(page.rstrip("/").split("/")[-1])
