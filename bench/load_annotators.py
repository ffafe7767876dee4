"""Crowd load: N simulated annotators against the app served by daphne (ASGI) on loopback with
PostgreSQL. Each one arrives from a Prolific-style link, opens its assignment page, autosaves its
draft every 5 s, submits (one in ten submits twice, as a double click), and checks what was stored.

Run: .venv/bin/python bench/load_annotators.py [--annotators 1000] [--duration 60]
Creates its own database (hypolab_load), starts and stops its server. Bounded in time: annotators
start over the first 5 s, autosave until `duration`, then submit. Prints p50/p95 per endpoint and
ends with `p95_ms=N lost=N duplicated=N` (worst endpoint's p95; lost = a save or submit that failed
or is missing from the database; duplicated = more changes stored than one assignment's submit)."""

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DB = "hypolab_load"
AUTOSAVE_S = 5

os.environ.update({
    "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB}",
    "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
    "REDIS_KEY_PREFIX": f"load-{os.getpid()}-",
    "DJANGO_SETTINGS_MODULE": "config.settings",
    "MEDIA_ROOT": "/tmp/hypolab-load-media",
    "DEBUG": "false",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
})
sys.path.insert(0, str(ROOT))


def recreate_database():
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB}"')


def seed(scenes: int) -> int:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from annotation import services
    from benchmarks.models import Benchmark, Scene, SceneObject

    benchmark = Benchmark.objects.create(name="load", slug="load", family="hypo3d")
    pool = []
    for i in range(scenes):
        scene = Scene.objects.create(benchmark=benchmark, external_id=f"scene{i:04d}_00", caption="An office.")
        SceneObject.objects.bulk_create(
            SceneObject(scene=scene, instance_id=n, label=label, center_x=n, center_y=1, center_z=0.5,
                        size_x=1, size_y=1, size_z=1)
            for n, label in enumerate(["desk", "chair", "window", "bookshelf", "lamp"], start=1)
        )
        pool.append(scene)
    return services.create_campaign(benchmark, "load", "movement", pool, lease_minutes=30).pk


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    """A minimal HTTP/1.1 keep-alive client with a cookie jar: one connection per annotator."""

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
            self.writer.close()
            self.writer = None
        return status, response_headers, payload


async def annotator(number, port, campaign_id, stop_at, timings, outcome):
    client = Client(port)

    async def timed(endpoint, method, path, body=None):
        started = time.perf_counter()
        result = await client.request(method, path, body)
        timings[endpoint].append((time.perf_counter() - started) * 1000)
        return result

    await asyncio.sleep(random.uniform(0, 5))
    status, headers, _ = await timed(
        "enter", "GET", f"/crowd/campaigns/{campaign_id}/?PROLIFIC_PID=load-{number}&STUDY_ID=s&SESSION_ID=x")
    if status != 302:
        outcome["lost"] += 1
        return
    page = headers["location"]
    assignment = int(page.rstrip("/").split("/")[-1])
    await timed("page", "GET", page)
    text = ""
    while time.monotonic() + AUTOSAVE_S < stop_at:
        await asyncio.sleep(AUTOSAVE_S)
        text = (f"The chair has been moved from the desk to the window next to the bookshelf "
                f"({number}-{len(text)}).")
        status, _, _ = await timed("autosave", "PUT", f"/api/v1/assignments/{assignment}/draft/", {"text": text})
        outcome["saves"] += 1
        outcome["lost"] += status != 200
    submits = 2 if number % 10 == 0 else 1
    for _ in range(submits):
        status, _, _ = await timed("submit", "POST", f"/api/v1/assignments/{assignment}/submit/",
                                   {"text": f"The lamp {number} has been moved from the desk to the window."})
        outcome["submitted" if status == 201 else "refused_again" if status == 409 else "lost"] += 1
    outcome["assignments"].append(assignment)
    if client.writer:
        client.writer.close()


async def drive(port, campaign_id, annotators, duration):
    timings, outcome = defaultdict(list), defaultdict(int)
    outcome["assignments"] = []
    stop_at = time.monotonic() + duration
    await asyncio.gather(*(annotator(n, port, campaign_id, stop_at, timings, outcome) for n in range(annotators)))
    return timings, outcome


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--annotators", type=int, default=1000)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--scenes", type=int, default=200)
    args = parser.parse_args()
    recreate_database()
    campaign_id = seed(args.scenes)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                               "config.asgi:application"], cwd=ROOT, env=os.environ.copy(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        started = time.monotonic()
        timings, outcome = asyncio.run(drive(port, campaign_id, args.annotators, args.duration))
        elapsed = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=20)

    from benchmarks.models import ContextChange

    stored = defaultdict(int)
    for assignment in ContextChange.objects.values_list("provenance__assignment", flat=True):
        stored[assignment] += 1
    missing = sum(1 for a in outcome["assignments"] if stored.get(a, 0) == 0)
    duplicated = sum(n - 1 for n in stored.values() if n > 1)
    lost = outcome["lost"] + missing
    requests = sum(len(t) for t in timings.values())
    print(f"{args.annotators} annotators, {requests} requests in {elapsed:.1f} s ({requests / elapsed:.0f}/s); "
          f"{outcome['saves']} autosaves, {outcome['submitted']} submitted, "
          f"{outcome['refused_again']} double submits answered 409")
    worst = 0.0
    for endpoint, values in sorted(timings.items()):
        p50 = statistics.median(values)
        p95 = statistics.quantiles(values, n=20)[18] if len(values) > 1 else values[0]
        worst = max(worst, p95)
        print(f"{endpoint:10s} n={len(values):6d} p50={p50:7.1f} ms p95={p95:7.1f} ms")
    print(f"p95_ms={worst:.0f} lost={lost} duplicated={duplicated}")


if __name__ == "__main__":
    main()
