"""#33 settings for a cluster: a Redis URL per role (each falling back to REDIS_URL), Sentinel through the
settings, PgBouncer-compatible database settings, hashed static names in production, and a beat that is
safe with two replicas (a Redis lock: two beats do not double-schedule)."""

import runpy
import time
from pathlib import Path

import pytest
import redis
from celery import Celery

from config.beat import LockedScheduler, lock_key
from core import redis_roles
from tests.needs import need

ROOT = Path(__file__).resolve().parents[2]
ROLE_VARIABLES = ("REDIS_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CACHE_REDIS_URL", "CHANNEL_REDIS_URL",
                  "LOCK_REDIS_URL", "REDIS_SENTINEL_MASTER", "PGBOUNCER", "STATIC_MANIFEST", "REDIS_KEY_PREFIX",
                  "PYTEST_XDIST_WORKER")


def settings_with(monkeypatch, tmp_path, **env) -> dict:
    """config/settings.py run afresh with this environment (the test process' own settings untouched)."""
    for name in ROLE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SECRET_KEY", "cluster-settings-test".ljust(64, "k"))  # DEBUG off wants 50 or more
    monkeypatch.setenv("STATIC_ROOT", str(tmp_path / "static"))
    monkeypatch.setenv("DATABASE_URL", "postgres://hypolab@db.example.org:5432/hypolab")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(ROOT / "config" / "settings.py"))


def test_every_role_falls_back_to_redis_url(monkeypatch, tmp_path):
    s = settings_with(monkeypatch, tmp_path, REDIS_URL="redis://one:6379/0", DEBUG="false")
    assert s["CELERY_BROKER_URL"] == s["CELERY_RESULT_BACKEND"] == "redis://one:6379/0"
    assert s["CACHES"]["default"]["LOCATION"] == "redis://one:6379/0"
    assert s["CHANNEL_LAYERS"]["default"]["CONFIG"]["hosts"] == ["redis://one:6379/0"]
    assert s["LOCK_REDIS_URL"] == "redis://one:6379/0"
    assert s["CELERY_BEAT_SCHEDULER"] == "config.beat.LockedScheduler"


def test_each_role_may_have_its_own_redis(monkeypatch, tmp_path):
    s = settings_with(monkeypatch, tmp_path, REDIS_URL="redis://fallback:6379/0",
                      CELERY_BROKER_URL="redis://broker:6379/0", CELERY_RESULT_BACKEND="redis://results:6379/1",
                      CACHE_REDIS_URL="redis://cache:6379/0", CHANNEL_REDIS_URL="redis://channels:6379/0",
                      LOCK_REDIS_URL="redis://locks:6379/0")
    assert s["CELERY_BROKER_URL"] == "redis://broker:6379/0"
    assert s["CELERY_RESULT_BACKEND"] == "redis://results:6379/1"
    assert s["CACHES"]["default"]["LOCATION"] == "redis://cache:6379/0"
    assert s["CHANNEL_LAYERS"]["default"]["CONFIG"]["hosts"] == ["redis://channels:6379/0"]
    assert s["LOCK_REDIS_URL"] == "redis://locks:6379/0"
    # a broker without REDIS_URL is a services stack too (tasks go to workers, not run in-process)
    s = settings_with(monkeypatch, tmp_path, CELERY_BROKER_URL="redis://broker:6379/0")
    assert s["CELERY_TASK_ALWAYS_EAGER"] is False and s["EMBEDDED"] is False


def test_sentinel_urls_reach_celery_the_cache_the_channel_layer_and_the_locks(monkeypatch, tmp_path):
    url = "sentinel://:s3cret@s1:26379;sentinel://s2:26380/2"
    s = settings_with(monkeypatch, tmp_path, REDIS_URL=url, REDIS_SENTINEL_MASTER="hypolab-master")
    assert s["CELERY_BROKER_URL"] == url
    assert s["CELERY_BROKER_TRANSPORT_OPTIONS"]["master_name"] == "hypolab-master"
    assert s["CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS"]["master_name"] == "hypolab-master"
    pool_class = s["CACHES"]["default"]["OPTIONS"]["pool_class"]
    pool = pool_class.from_url(url, socket_timeout=1.0)
    assert pool.service_name == "hypolab-master"
    assert [(x.connection_pool.connection_kwargs["host"], x.connection_pool.connection_kwargs["port"])
            for x in pool.sentinel_manager.sentinels] == [("s1", 26379), ("s2", 26380)]
    assert pool.connection_kwargs["db"] == 2 and pool.connection_kwargs["password"] == "s3cret"
    host = s["CHANNEL_LAYERS"]["default"]["CONFIG"]["hosts"][0]
    assert host == {"sentinels": [("s1", 26379), ("s2", 26380)], "master_name": "hypolab-master", "db": 2,
                    "password": "s3cret"}
    client = redis_roles.client(url, "hypolab-master")
    assert client.connection_pool.service_name == "hypolab-master"
    with pytest.raises(ValueError):
        redis_roles.parse_sentinel("redis://not-a-sentinel:6379")


def test_pgbouncer_turns_off_server_side_cursors_and_prepared_statements(monkeypatch, tmp_path):
    s = settings_with(monkeypatch, tmp_path, PGBOUNCER="1")
    assert s["DATABASES"]["default"]["DISABLE_SERVER_SIDE_CURSORS"] is True
    assert s["DATABASES"]["default"]["OPTIONS"]["prepare_threshold"] is None
    s = settings_with(monkeypatch, tmp_path)
    assert not s["DATABASES"]["default"].get("DISABLE_SERVER_SIDE_CURSORS")


def test_production_static_names_carry_a_content_hash(monkeypatch, tmp_path):
    production = settings_with(monkeypatch, tmp_path, DEBUG="false", REDIS_URL="redis://one:6379/0")
    assert production["STORAGES"]["staticfiles"]["BACKEND"] == "config.static.ManifestStaticStorage"
    debug = settings_with(monkeypatch, tmp_path, DEBUG="true", REDIS_URL="redis://one:6379/0")
    assert debug["STORAGES"]["staticfiles"]["BACKEND"] == "whitenoise.storage.CompressedStaticFilesStorage"


def test_manifest_storage_hashes_names_and_serves_plain_names_without_a_manifest(tmp_path, settings):
    from django.contrib.staticfiles.storage import staticfiles_storage  # noqa: F401 -- the lazy default

    from config.static import ManifestStaticStorage

    storage = ManifestStaticStorage(location=str(tmp_path), base_url="/static/")
    assert storage.url("hypolab/hypolab.css") == "/static/hypolab/hypolab.css"  # no manifest: the plain name
    (tmp_path / "staticfiles.json").write_text(
        '{"paths": {"hypolab/hypolab.css": "hypolab/hypolab.0123456789ab.css"}, "version": "1.1"}')
    storage = ManifestStaticStorage(location=str(tmp_path), base_url="/static/")
    assert storage.url("hypolab/hypolab.css") == "/static/hypolab/hypolab.0123456789ab.css"


# --- beat ------------------------------------------------------------------------------------------

@pytest.fixture
def lock_redis(settings):
    url = settings.REDIS_URL or "redis://127.0.0.1:6379/0"
    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except redis.ConnectionError:
        need(False, "Redis on 127.0.0.1")
    settings.LOCK_REDIS_URL = url
    settings.REDIS_KEY_PREFIX = f"beat-test-{time.monotonic_ns()}-"
    settings.BEAT_LOCK_TTL_S = 1.5
    yield client
    client.delete(lock_key())


def beat(tmp_path, name: str, sent: list):
    app = Celery(f"beat-{name}", broker="memory://", set_as_current=False)
    app.conf.beat_schedule = {"sweep": {"task": "core.tasks.purge_idempotency_keys", "schedule": 0.2}}
    scheduler = LockedScheduler(app=app, schedule_filename=str(tmp_path / f"{name}-schedule"), lazy=False)
    scheduler.apply_entry = lambda entry, producer=None: sent.append((name, entry.name))
    return scheduler


@pytest.mark.services
def test_two_beats_do_not_double_schedule_and_the_second_takes_over(tmp_path, lock_redis):
    sent: list = []
    first, second = beat(tmp_path, "a", sent), beat(tmp_path, "b", sent)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        first.tick()
        second.tick()
        time.sleep(0.05)
    senders = {name for name, _ in sent}
    assert senders == {"a"}, sent  # one replica sends, the other waits
    assert 5 <= len(sent) <= 12  # every 0.2 s for 2 s: once each time, not twice
    # the holder stops (closed, or killed: then after BEAT_LOCK_TTL_S): the other one sends from then on
    first.close()
    sent.clear()
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        second.tick()
        time.sleep(0.05)
    assert sent and {name for name, _ in sent} == {"b"}


@pytest.mark.services
def test_a_killed_holder_is_replaced_after_the_lock_expires(tmp_path, lock_redis):
    sent: list = []
    first, second = beat(tmp_path, "a", sent), beat(tmp_path, "b", sent)
    first.tick()
    second.tick()
    assert second.lock.held is False and first.lock.held is True
    # `first` dies without closing: its lock runs out after BEAT_LOCK_TTL_S (1.5 s here)
    time.sleep(1.7)
    second.tick()
    assert second.lock.held is True
    first.tick()  # back from a pause: it does not take the lock back, and sends nothing
    assert first.lock.held is False


def test_without_a_lock_redis_beat_is_the_plain_scheduler(tmp_path, settings):
    settings.LOCK_REDIS_URL = ""
    sent: list = []
    scheduler = beat(tmp_path, "solo", sent)
    assert scheduler.lock is None
    scheduler.tick()
    time.sleep(0.25)
    scheduler.tick()
    assert sent
