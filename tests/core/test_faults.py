"""Faults: a GPU worker killed mid-batch (the reaper hands its batch on within a minute, one prediction
per key), Redis stopped for 5 s under 50 autosaving annotators (no 5xx, no lost draft), the broker down
for what must enqueue (503 with Retry-After, not 500), and docker-compose.yml's shape."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter

import pytest
import requests
import yaml
from django.conf import settings
from rest_framework.authtoken.models import Token

from annotation import services as annotation
from annotation.models import AssignmentDraft
from config.celery import app as celery_app
from core import roles
from modeleval import services
from modeleval.models import Prediction, Run
from modeleval.runs import inference, inflight, run_scoring
from tests.celery_workers import (
    ROOT,
    kill_mid_batch,
    needs_services,
    process_env,
    slow_run_items,
    start_beat,
    start_worker,
    stop,
    wait_for_end,
)
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory
from tests.needs import need
from tests.redis_server import own_redis_server, start_redis, stop_redis

# --- A. A killed GPU worker's batch is handed on by the reaper ----------------------------------------


@pytest.fixture
def clean_inflight():
    needs_services()
    conn = inflight.client()
    for key in [inflight.index_key(), *conn.scan_iter(f"{inflight.index_key()}:*")]:
        conn.delete(key)
    yield conn
    for key in [inflight.index_key(), *conn.scan_iter(f"{inflight.index_key()}:*")]:
        conn.delete(key)


def stale_batch(conn, run, item_ids, age_s=60.0) -> str:
    """The record a worker killed `age_s` seconds ago left behind."""
    task_id = str(uuid.uuid4())
    record = {"task": task_id, "run": run.pk, "items": item_ids, "worker": "gpu@gone", "host": "gone", "pid": 1}
    conn.set(inflight.record_key(task_id), json.dumps(record))
    conn.zadd(inflight.index_key(), {task_id: inflight.redis_now(conn) - age_s})
    return task_id


@pytest.mark.services
@pytest.mark.django_db
def test_a_batch_whose_worker_stopped_beating_is_sent_again_and_fills_only_what_is_missing(clean_inflight):
    first = ItemFactory()
    items = [first] + [ItemFactory(change__scene__benchmark=first.benchmark) for _ in range(3)]
    run = services.launch_run(services.ensure_baseline_model().pk, first.benchmark, None, batch_size=4, repeats=2)
    assert run.status == Run.Status.RUNNING and run.predictions.count() == 0  # nothing sent: on_commit
    inference.infer_items(run.pk, [items[0].pk])  # the dead worker stored the first item before it died
    stale = stale_batch(clean_inflight, run, [item.pk for item in items])
    alive = stale_batch(clean_inflight, run, [items[0].pk], age_s=1.0)  # beating: left alone

    done = inflight.reap_stalled_batches()

    assert [(entry["task"], entry["action"]) for entry in done] == [(stale, "resent")]
    keys = list(Prediction.objects.filter(run=run).values_list("item_id", "variant", "repeat"))
    assert len(keys) == len(set(keys)) == run.total == len(items) * 2
    assert [row["task"] for row in inflight.in_flight()] == [alive]
    assert inflight.reap_stalled_batches() == []  # taken once


@pytest.mark.services
@pytest.mark.django_db
def test_a_stale_batch_of_a_run_no_longer_running_is_dropped(clean_inflight):
    item = ItemFactory()
    run = services.launch_run(services.ensure_baseline_model().pk, item.benchmark, None)
    services.cancel_run(run.pk, UserFactory(role=roles.ADMIN))
    stale_batch(clean_inflight, run, [item.pk])
    assert [entry["action"] for entry in inflight.reap_stalled_batches()] == ["dropped"]
    assert run.predictions.count() == 0 and inflight.in_flight() == []


@pytest.mark.services
def test_a_running_batch_is_recorded_beaten_and_removed_at_its_end(clean_inflight, settings):
    settings.INFERENCE_HEARTBEAT_S = 0.05
    with inflight.watch("task-1", 7, [1, 2, 3], "gpu@here") as batch:
        first = clean_inflight.zscore(inflight.index_key(), "task-1")
        time.sleep(0.3)
        assert clean_inflight.zscore(inflight.index_key(), "task-1") > first  # beaten by its thread
        batch.progress(5)
        (row,) = inflight.in_flight()
        assert row["run"] == 7 and row["items"] == [1, 2, 3] and row["written"] == 5
        assert row["worker"] == "gpu@here" and row["pid"] == os.getpid() and row["beat"] < 1
    assert inflight.in_flight() == [] and not clean_inflight.exists(inflight.record_key("task-1"))


RECEIVED = re.compile(r"Task modeleval\.tasks\.infer_batch\[([0-9a-f-]+)\] received")
SUCCEEDED = re.compile(r"Task modeleval\.tasks\.infer_batch\[([0-9a-f-]+)\] succeeded")


@pytest.mark.real_worker
@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_gpu_worker_killed_mid_batch_has_its_batch_run_again_within_a_minute(tmp_path, clean_inflight):
    """Production's visibility timeout (an hour), a real beat; batches stale after 6 s instead of 20 and the
    reaper every 3 s instead of 15 (the test below holds production's clocks to the minute): the killed
    worker's own message comes back to another worker, and the run finishes."""
    env = process_env(CELERY_VISIBILITY_TIMEOUT="3600", INFERENCE_STALE_S="6", INFERENCE_HEARTBEAT_S="1",
                      INFERENCE_REAPER_S="3")
    celery_app.control.purge()
    model, items = slow_run_items()
    procs = {"default": start_worker("default", env, tmp_path / "default.log"), "beat": start_beat(env, tmp_path),
             "doomed": start_worker("gpu", env, tmp_path / "gpu-1.log")}
    try:
        run = services.launch_run(model.pk, items[0].benchmark, None, batch_size=6, repeats=2)
        in_flight = kill_mid_batch(procs["doomed"], run)
        killed_at = time.monotonic()
        assert 0 < in_flight < run.total
        procs["successor"] = start_worker("gpu", env, tmp_path / "gpu-2.log")
        wait_for_end(run, 120)
        finished_after = time.monotonic() - killed_at
        logs = "\n".join(f"--- {p.name}\n{p.read_text()}" for p in sorted(tmp_path.glob("*.log")))
        assert run.status == Run.Status.FINISHED, logs
    finally:
        for proc in procs.values():
            stop(proc)
    keys = list(Prediction.objects.filter(run=run).values_list("item_id", "variant", "repeat"))
    assert len(keys) == len(set(keys)) == len(items) * 2
    # The dead worker's own message was handed to the successor (not left for the hour-long timeout).
    first_log, second_log = (tmp_path / "gpu-1.log").read_text(), (tmp_path / "gpu-2.log").read_text()
    orphans = set(RECEIVED.findall(first_log)) - set(SUCCEEDED.findall(first_log))
    assert len(orphans) == 1, first_log
    (orphan,) = orphans
    assert orphan in SUCCEEDED.findall(second_log), logs
    assert f"Inference batch {orphan} of run {run.pk}" in logs and "redelivered" in logs
    assert finished_after < 60, f"finished {finished_after:.0f} s after the kill"
    print(f"killed with {in_flight}/{run.total} stored; finished {finished_after:.1f} s after the kill")


def test_production_clocks_hand_a_killed_batch_on_within_a_minute():
    """Last beat to resent: at most INFERENCE_STALE_S, then up to one reaper period; what is left of the
    minute runs the batch again (the test above measures that part on shorter clocks)."""
    reaper = celery_app.conf.beat_schedule["reap-stalled-batches"]["schedule"]
    assert settings.INFERENCE_HEARTBEAT_S * 3 <= settings.INFERENCE_STALE_S
    assert settings.INFERENCE_STALE_S + reaper <= 40


# --- B. Redis stopped for 5 s under 50 autosaving annotators ------------------------------------------

OWN_REDIS_PORT = 6391  # never the shared Redis on 6379


@pytest.fixture
def own_redis():
    with own_redis_server(OWN_REDIS_PORT) as port:
        yield port


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def live_gunicorn(own_redis, tmp_path):
    """The app as production serves plain HTTP (gunicorn, gthread, the app loaded before forking),
    on this test's database and its own Redis (cache, sessions, broker, channel layer)."""
    needs_services()
    port = free_port()
    env = process_env(REDIS_URL=f"redis://127.0.0.1:{own_redis}/0", REDIS_KEY_PREFIX="outage-", DEBUG="false",
                      HTTPS="false", ALLOWED_HOSTS="127.0.0.1,localhost", CONN_MAX_AGE="300", LOG_LEVEL="ERROR")
    log = tmp_path / "gunicorn.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-b", f"127.0.0.1:{port}", "-w", "2", "-k", "gthread", "--threads", "4",
         "--keep-alive", "75", "--preload", "--log-level", "warning", "config.wsgi:application"],
        cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        try:
            if requests.get(f"{base}/accounts/login/", timeout=5).status_code == 200:
                break
        except requests.RequestException:
            time.sleep(0.2)
    yield base, log
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


ANNOTATORS = 50
OUTAGE_S = 5.0


def test_the_app_loaded_before_forking_is_left_out_of_the_workers_collections():
    """gunicorn --preload imports config.wsgi before it forks: what is loaded then is frozen, so a
    worker's full garbage collection scans only what the worker made itself (with the whole app in
    the scan one took 200-370 ms, every thread of the worker stopped; docs/PERFORMANCE.md)."""
    probe = subprocess.run([sys.executable, "-c", "import gc, config.wsgi; print(gc.get_freeze_count())"],
                           cwd=ROOT, env=process_env(), capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr
    assert int(probe.stdout.split()[-1]) > 100_000


class Annotator(threading.Thread):
    """One crowd worker: arrives from the link, opens the assignment page, then autosaves about every
    0.4 s (and reloads the page every fifth time) until told to stop."""

    def __init__(self, base: str, campaign_id: int, number: int, stopping: threading.Event, log: list):
        super().__init__(daemon=True)
        self.session = requests.Session()
        self.base, self.campaign_id, self.number, self.stopping, self.log = base, campaign_id, number, stopping, log
        self.assignment = None
        self.last_saved = None

    def request(self, kind: str, method: str, path: str, **kwargs):
        started = time.monotonic()
        try:
            response = self.session.request(method, self.base + path, timeout=30, allow_redirects=False, **kwargs)
            status = response.status_code
        except requests.RequestException:
            response, status = None, 0  # a dropped connection counts as lost
        self.log.append((started, time.monotonic(), kind, status))
        return response

    def enter(self):
        query = f"?PROLIFIC_PID=outage-{self.number}&STUDY_ID=S&SESSION_ID=X"
        link = f"/crowd/campaigns/{self.campaign_id}/{query}"
        self.request("link", "GET", link)  # the start page: its form POSTs the link (a GET writes nothing)
        arrival = self.request("enter", "POST", link,
                               data={"csrfmiddlewaretoken": self.session.cookies.get("csrftoken")})
        assert arrival is not None and arrival.status_code == 302, arrival and arrival.text[:500]
        page = arrival.headers["Location"]
        self.assignment = int(page.rstrip("/").split("/")[-1])
        assert self.request("page", "GET", page).status_code == 200

    def run(self):
        saves = 0
        while not self.stopping.is_set():
            saves += 1
            text = f"The chair has been moved from the desk to the window ({self.number}-{saves})."
            saved = self.request("autosave", "PUT", f"/api/v1/assignments/{self.assignment}/draft/",
                                 data=json.dumps({"text": text}),
                                 headers={"Content-Type": "application/json",
                                          "X-CSRFToken": self.session.cookies.get("csrftoken", "")})
            if saved is not None and saved.status_code == 200:
                self.last_saved = text
            if saves % 5 == 0:
                self.request("page", "GET", f"/annotate/{self.assignment}/")
            self.stopping.wait(0.4)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_redis_stopped_for_5_s_under_50_autosaving_annotators_loses_nothing_and_answers_no_5xx(live_gunicorn):
    base, server_log = live_gunicorn
    benchmark = BenchmarkFactory()
    scenes = [SceneFactory(benchmark=benchmark) for _ in range(ANNOTATORS)]
    campaign = annotation.create_campaign(benchmark, "Outage", "movement", scenes, lease_minutes=30)
    ItemFactory(change__scene=scenes[0])  # an approved item, so a run can be launched
    admin = Token.objects.create(user=UserFactory(role=roles.ADMIN, is_staff=True))
    launch = {"model": services.ensure_baseline_model().pk, "benchmark": benchmark.slug}

    def launch_run():
        return requests.post(f"{base}/api/v1/runs/", json=launch, headers={"Authorization": f"Token {admin.key}"},
                             timeout=30)

    log: list = []
    stopping = threading.Event()
    crowd = [Annotator(base, campaign.pk, n, stopping, log) for n in range(ANNOTATORS)]
    for annotator in crowd:
        annotator.enter()
    for annotator in crowd:
        annotator.start()
    try:
        time.sleep(3)
        stop_redis(OWN_REDIS_PORT)
        outage = (time.monotonic(), None)
        during = launch_run()  # what must enqueue cannot: 503 with Retry-After, not 500
        time.sleep(max(0.0, outage[0] + OUTAGE_S - time.monotonic()))
        start_redis(OWN_REDIS_PORT)
        outage = (outage[0], time.monotonic())
        time.sleep(4)
        after = launch_run()
    finally:
        stopping.set()
        for annotator in crowd:
            annotator.join(timeout=60)
            annotator.session.close()

    statuses = Counter((kind, status) for _, _, kind, status in log)
    in_outage = Counter(kind for started, _, kind, _ in log if outage[0] <= started <= outage[1])
    print(f"{len(log)} requests, {dict(statuses)}; during the {outage[1] - outage[0]:.1f} s outage: "
          f"{dict(in_outage)}")
    assert in_outage["autosave"] >= ANNOTATORS and in_outage["page"] > 0  # the load went on through it
    failed = {key: n for key, n in statuses.items() if key[1] not in (200, 302)}
    assert failed == {}, server_log.read_text()[-5000:]
    drafts = dict(AssignmentDraft.objects.filter(assignment__campaign=campaign).values_list("assignment_id", "text"))
    lost = [a.number for a in crowd if a.last_saved is None or drafts.get(a.assignment) != a.last_saved]
    assert lost == []
    assert during.status_code == 503, during.text
    assert int(during.headers["Retry-After"]) > 0 and "task queue" in during.json()["detail"]
    assert after.status_code == 201, after.text  # the process sends tasks again once Redis is back
    # The run whose batches could not be sent failed (it can be resumed), so nothing waits for them.
    assert list(Run.objects.order_by("pk").values_list("status", flat=True)) == [Run.Status.FAILED, Run.Status.RUNNING]


# --- C. The broker down: what must enqueue answers 503 with Retry-After --------------------------------


@pytest.fixture
def broker_down(monkeypatch):
    from kombu.exceptions import OperationalError

    from modeleval import tasks

    def refuse(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.infer_batch, "apply_async", refuse)  # batches go out with their model's queue


@pytest.mark.django_db(transaction=True)
def test_launching_a_run_with_the_broker_down_answers_503_with_retry_after_from_the_api_and_the_page(
        broker_down, client, api_client):
    item = ItemFactory()
    admin = UserFactory(role=roles.ADMIN, is_staff=True)
    model = services.ensure_baseline_model()
    api_client.force_authenticate(admin)
    answer = api_client.post("/api/v1/runs/", {"model": model.pk, "benchmark": item.benchmark.slug}, format="json")
    assert answer.status_code == 503 and int(answer["Retry-After"]) > 0
    assert "task queue cannot be reached" in answer.json()["detail"]
    client.force_login(admin)
    page = client.post(f"/manage/{item.benchmark.slug}/runs/", {"model": model.pk})
    assert page.status_code == 503 and int(page["Retry-After"]) > 0
    assert "task queue cannot be reached" in page.content.decode()
    # Neither run waits for batches that were never sent: both failed, and can be resumed.
    assert set(Run.objects.values_list("status", flat=True)) == {Run.Status.FAILED}
    assert Run.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_an_export_with_the_broker_down_answers_503_and_the_same_version_again_finishes_it(
        monkeypatch, api_client):
    from kombu.exceptions import OperationalError

    from benchmarks import tasks as benchmark_tasks
    from benchmarks.models import Release

    item = ItemFactory()
    admin = UserFactory(role=roles.ADMIN, is_staff=True)
    api_client.force_authenticate(admin)
    send = benchmark_tasks.export_release.apply_async

    def refuse(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(benchmark_tasks.export_release, "apply_async", refuse)
    body = {"benchmark": item.benchmark.slug, "version": "1.0.0"}
    answer = api_client.post("/api/v1/releases/", body, format="json")
    assert answer.status_code == 503 and int(answer["Retry-After"]) > 0
    assert Release.objects.get().status == Release.Status.FAILED

    # The broker is back: exporting the same version writes the formats it lacks, not a 409.
    monkeypatch.setattr(benchmark_tasks.export_release, "apply_async", send)
    again = api_client.post("/api/v1/releases/", body, format="json")
    assert again.status_code in (200, 201), again.content
    release = Release.objects.get()
    assert release.status == Release.Status.READY and release.files.count() >= 3


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_scoring_task_was_lost_is_scored_by_the_reaper(monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    from modeleval import tasks

    item = ItemFactory()
    model = services.ensure_baseline_model()
    monkeypatch.setattr(tasks.score_run, "apply_async", lambda *args, **kwargs: None)  # the send is lost
    run = services.launch_run(model.pk, item.benchmark, None)
    run.refresh_from_db()
    assert run.status == Run.Status.SCORING
    monkeypatch.undo()
    tasks.reap_stalled_batches()  # a fresh run in scoring is left to its own task
    assert Run.objects.get(pk=run.pk).status == Run.Status.SCORING
    run.predictions.update(created_at=timezone.now() - timedelta(seconds=run_scoring.SCORING_STALLED_S + 5))
    tasks.reap_stalled_batches()
    assert Run.objects.get(pk=run.pk).status == Run.Status.FINISHED


def test_the_api_error_handler_turns_a_broker_error_into_503():
    from kombu.exceptions import OperationalError
    from redis.exceptions import ConnectionError as RedisConnectionError

    from core.api import exception_handler

    for error in (OperationalError("down"), RedisConnectionError("down")):
        response = exception_handler(error, {})
        assert response.status_code == 503 and response["Retry-After"] == "10"
    assert exception_handler(ValueError("a bug"), {}) is None  # still a 500


# --- D. docker-compose.yml: health checks, Redis persistence, one proxy ---------------------------------

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def nginx_locations(conf: str) -> dict[str, str]:
    """`location [=] PATH { body }` -> body (the config has no nested blocks inside a location)."""
    return {path: body for path, body in re.findall(r"location\s+(?:=\s*)?(\S+)\s*\{([^}]*)\}", conf)}


def nginx_upstreams(conf: str) -> dict[str, list[str]]:
    return {name: re.findall(r"server\s+(\S+?);", body) for name, body in re.findall(r"upstream\s+(\S+)\s*\{([^}]*)\}", conf)}


def command(service: str) -> str:
    value = SERVICES[service].get("command", "")
    return " ".join(value) if isinstance(value, list) else value


def proxy_conf() -> tuple[dict, str]:
    proxy = next(s for s in SERVICES.values() if str(s.get("image", "")).startswith(("nginx", "caddy")))
    mount = next(v for v in proxy["volumes"] if v.split(":")[1].startswith("/etc/nginx"))
    return proxy, (ROOT / mount.split(":")[0]).read_text()


def test_every_long_running_service_has_a_health_check_and_one_shot_jobs_are_awaited_by_exit_code():
    awaited_by_exit = {name for service in SERVICES.values() for name, when in (service.get("depends_on") or {}).items()
                       if isinstance(service.get("depends_on"), dict)
                       and when.get("condition") == "service_completed_successfully"}
    assert awaited_by_exit == {"migrate", "minio-bucket"}
    for name, service in SERVICES.items():
        if name in awaited_by_exit:
            assert service.get("restart") == "no", name
            continue
        check = service.get("healthcheck")
        assert check and check.get("test") and not check.get("disable"), f"{name} has no health check"
        assert service.get("restart") == "unless-stopped", name
    checks = {name: " ".join(s["healthcheck"]["test"]) for name, s in SERVICES.items() if "healthcheck" in s}
    assert "pg_isready" in checks["postgres"] and "redis-cli ping" in checks["redis"]
    assert "mc ready" in checks["minio"] and "/healthz" in checks["proxy"]
    assert "127.0.0.1:8000/" in checks["web"] and "127.0.0.1:8001/" in checks["daphne"]
    for worker in ("worker-default", "worker-gpu-qwen", "worker-gpu-llava"):
        assert "celery -A config inspect ping" in checks[worker] and "--destination" in checks[worker]
        name = re.search(r"--hostname ([\w-]+)@%h", command(worker))[1]
        assert f"{name}@$$HOSTNAME" in checks[worker]
    # Whatever depends on a service waits for it to be healthy (or, for a job, to have finished).
    for name, service in SERVICES.items():
        for needed, when in (service.get("depends_on") or {}).items():
            assert needed in SERVICES, (name, needed)
            expected = "service_completed_successfully" if needed in awaited_by_exit else "service_healthy"
            assert when["condition"] == expected, (name, needed)


def test_two_gpu_workers_serve_two_models_and_only_they_load_checkpoints():
    queues = {name: set(re.search(r"-Q (\S+)", command(name))[1].split(","))
              for name in SERVICES if name.startswith("worker-")}
    # the shared `gpu` queue (models naming no worker_queue) and one queue per model group, each served
    assert queues["worker-gpu-qwen"] == {"gpu", "gpu.qwen"} and queues["worker-gpu-llava"] == {"gpu.llava"}
    assert queues["worker-default"] == {"default"}
    for name, service in SERVICES.items():
        loads = str((service.get("environment") or {}).get("LOCAL_CHECKPOINTS", "")).lower() == "true"
        assert loads == name.startswith("worker-gpu"), name
    devices = [SERVICES[name]["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"]
               for name in ("worker-gpu-qwen", "worker-gpu-llava")]
    assert devices == [["0"], ["1"]]  # one GPU each


def test_redis_keeps_an_append_only_file_on_a_volume():
    redis = SERVICES["redis"]
    assert "--appendonly yes" in command("redis") and "--save \"\"" not in command("redis")
    (volume,) = redis["volumes"]
    assert volume.split(":")[1] == "/data" and volume.split(":")[0] in COMPOSE["volumes"]


def test_one_proxy_routes_websockets_to_daphne_the_rest_to_gunicorn_and_serves_static_itself():
    proxy, conf = proxy_conf()
    exposed = {name for name, s in SERVICES.items() if s.get("ports")}
    # web, daphne: via the proxy; MinIO, Redis and PostgreSQL only on the stack's network (issue #34)
    assert exposed == {next(n for n, s in SERVICES.items() if s is proxy)}
    locations, upstreams = nginx_locations(conf), nginx_upstreams(conf)
    ws, rest = locations["/ws/"], locations["/"]
    ws_upstream = re.search(r"proxy_pass\s+http://(\S+?);", ws)[1]
    rest_upstream = re.search(r"proxy_pass\s+http://(\S+?);", rest)[1]
    (ws_server,), (rest_server,) = upstreams[ws_upstream], upstreams[rest_upstream]
    assert "Upgrade $http_upgrade" in ws and "Connection $connection_upgrade" in ws
    # /ws/ goes to the daphne service, on the port daphne listens on
    service, port = ws_server.split(":")
    assert command(service).startswith("daphne") and f"-p {port} " in command(service)
    # everything else to gunicorn: gthread, one thread, the app loaded before forking, four per core
    service, port = rest_server.split(":")
    web = command(service)
    assert "gunicorn config.wsgi:application" in web and f"0.0.0.0:{port}" in web
    assert "-k gthread" in web and "--threads 1" in web and "--preload" in web and "4 * $$(nproc)" in web
    assert SERVICES[service]["environment"]["CONN_MAX_AGE"] == "300"
    # /static/ from the volume collectstatic fills; never MEDIA_ROOT (Django checks who reads media)
    alias = re.search(r"alias\s+(\S+?);", locations["/static/"])[1]
    static_volume = next(v for v in proxy["volumes"] if v.split(":")[1].rstrip("/") == alias.rstrip("/"))
    filled = [v for v in SERVICES["migrate"]["volumes"] if v.split(":")[0] == static_volume.split(":")[0]]
    assert filled == [f"{static_volume.split(':')[0]}:/app/staticfiles"] and "collectstatic" in command("migrate")
    assert "/media/" not in locations
    assert SERVICES["web"]["environment"]["TRUSTED_PROXY_HOPS"] == "1"  # one proxy appends the client's address


def test_beat_runs_the_reaper_of_dead_gpu_workers_batches():
    assert "celery -A config beat" in command("beat")
    reaper = celery_app.conf.beat_schedule["reap-stalled-batches"]
    assert reaper["task"] == "modeleval.tasks.reap_stalled_batches" and reaper["schedule"] <= 15
    from modeleval import tasks

    assert tasks.reap_stalled_batches.name == reaper["task"]
    assert "-Q default" in command("worker-default")  # where the reaper runs (not routed to gpu)
    assert reaper["task"] not in celery_app.conf.task_routes


def test_the_proxy_config_is_valid_nginx(tmp_path):
    need(bool(shutil.which("nginx")), "nginx")
    _, conf = proxy_conf()
    # the upstreams' names resolve only inside the compose network: check the syntax on loopback
    site = re.sub(r"server\s+[\w-]+:(\d+);", r"server 127.0.0.1:\1;", conf).replace("listen 80", "listen 18080")
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid; error_log {tmp_path}/error.log; events {{}}\n"
        f"http {{ include /etc/nginx/mime.types; access_log off; include {tmp_path}/site.conf; }}\n")
    result = subprocess.run(["nginx", "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
