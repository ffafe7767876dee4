"""A live stack for the browser tests: PostgreSQL database, Redis, the ASGI server (daphne)
and a Celery worker consuming the `gpu` and `default` queues, all real processes."""

import fcntl
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
import redis
from django.conf import settings as django_settings

from tests.needs import need

from .stack_shell import MARK as SHELL_MARK

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
DEMO_PASSWORD = "hypolab-demo"  # every demo account's

# Playwright's sync API keeps an event loop in this thread; nothing here touches the ORM in-process.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_url(database: str) -> str:
    """The URL of `database` on the PostgreSQL server the suite was given (any host, port and user)."""
    db = django_settings.DATABASES["default"]
    auth = quote(db["USER"]) + (f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{database}"


def recreate_database(name: str, template: str | None = None) -> None:
    with psycopg.connect(server_url("postgres"), autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
        )
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))


def wait_for_http(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(url)


def _shared_folder(tmp_path_factory) -> Path:
    """The run's temporary folder, which every parallel worker sees (xdist gives each worker one inside it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _stack_env(mode: str, tmp: Path) -> dict:
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"MEDIA_ROOT": str(tmp / "media"), "DEBUG": "true"})
    if mode == "demo":
        env.update({"DEBUG": "false", "HTTPS": "false", "SECRET_KEY": f"browser-demo-{os.getpid()}-{tmp.name}".ljust(64, "k")})
    return env


def _manage(env: dict, *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True)


def seeded_template(backend: str, shared: Path) -> dict:
    """The demo, migrated and seeded once per run and database backend (`sqlite` or `postgresql`): every
    stack of that backend, on any worker, starts from a copy (a file copy; CREATE DATABASE ... TEMPLATE),
    which takes a second where a migrate and seed_demo took 30-80 s. The first worker to ask builds it
    while the others wait on the lock. SQLite's is seeded as the demo stack runs (DEBUG off, so the demo
    accounts' passwords are hashed with PBKDF2, which the DEBUG stacks' hashers also read)."""
    folder = shared / f"seeded-{backend}"
    folder.mkdir(exist_ok=True)
    ready = folder / "ready.json"
    with (shared / f"seeded-{backend}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.exists():
            if backend == "postgresql":
                # one per run: the run's database without the worker's suffix
                database = re.sub(r"_gw\d+$", "", django_settings.DATABASES["default"]["NAME"]) + "_e2e_seeded"
                recreate_database(database)
                env = _stack_env("services", folder)
                prefix = f"e2e-seeded-{os.getpid()}-"
                env.update({"DATABASE_URL": server_url(database), "REDIS_URL": os.environ["REDIS_URL"],
                            "REDIS_KEY_PREFIX": prefix})
                _manage(env, "migrate", "--noinput")
                _manage(env, "seed_demo")
                # the tasks seed_demo queued are left behind (each stack purges its own queues before its
                # worker starts, as a stack seeded in place did)
                client = redis.Redis.from_url(os.environ["REDIS_URL"])
                for key in client.scan_iter(match=f"{prefix}*"):
                    client.delete(key)
                made = {"database": database}
            else:
                env = _stack_env("demo", folder)
                env["DATABASE_URL"] = f"sqlite:///{folder / 'hypolab.sqlite3'}"
                _manage(env, "migrate", "--noinput")
                _manage(env, "seed_demo")
                made = {"database": str(folder / "hypolab.sqlite3")}
            ready.write_text(json.dumps({**made, "media": str(folder / "media")}))
    return json.loads(ready.read_text())


@contextmanager
def live_stack(mode: str, tmp: Path, shared: Path) -> Iterator[dict]:
    """`services`: PostgreSQL, Redis, a separate Celery worker. `embedded`: the README's demo
    default (SQLite file, no Redis, tasks in-process), to prove it works end to end too. `demo`: the
    embedded default as ./scripts/demo serves it, DEBUG off (its own error pages, static files as in
    production) on plain HTTP. Each starts from a copy of the seeded demo (`seeded_template`)."""
    env = _stack_env(mode, tmp)
    template = seeded_template("postgresql" if mode == "services" else "sqlite", shared)
    shutil.copytree(template["media"], tmp / "media")
    if mode == "services":
        # Named after this run's database and parallel worker, so parallel runs never share a stack.
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")
        e2e_db = f"{django_settings.DATABASES['default']['NAME']}_e2e{worker}"
        recreate_database(e2e_db, template=template["database"])
        env.update({"DATABASE_URL": server_url(e2e_db),
                    "REDIS_URL": os.environ["REDIS_URL"], "REDIS_KEY_PREFIX": f"e2e-{os.getpid()}-"})
    else:
        with sqlite3.connect(template["database"]) as source, sqlite3.connect(tmp / "hypolab.sqlite3") as copy:
            source.backup(copy)  # a consistent copy, whatever the journal holds
        env["DATABASE_URL"] = f"sqlite:///{tmp / 'hypolab.sqlite3'}"
    port = free_port()
    logs = {name: (tmp / f"{name}.log").open("w") for name in ("web", "worker")}
    # The embedded server runs tasks in its threads as scripts/demo's does (config/celery.py).
    web_env = env if mode == "services" else {**env, "TASKS_IN_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                               "config.asgi:application"], cwd=ROOT, env=web_env, stdout=logs["web"],
                              stderr=subprocess.STDOUT)]
    if mode == "services":
        subprocess.run([sys.executable, "-m", "celery", "-A", "config", "purge", "-f"], cwd=ROOT, env=env,
                       capture_output=True)
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu,default", "--pool", "solo",
             "--hostname", "e2e@test", "--loglevel", "INFO", "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=env, stdout=logs["worker"], stderr=subprocess.STDOUT))
    procs.append(subprocess.Popen(  # conftest.stack_shell's process
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", "from tests.browser.stack_shell import serve; serve()"],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(base + "/", procs[0])
        yield {"base": base, "logs": tmp, "mode": mode, "env": env, "shell": procs[-1]}
    finally:
        procs[-1].stdin.close()
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture(scope="session")
def stacks(tmp_path_factory):
    """Starts a stack the first time a test asks for it and keeps it up to the end of the session, so that
    a worker handed the tests of both stacks in any order builds each once."""
    with ExitStack() as running:
        started = {}

        def get(mode: str) -> dict:
            if mode not in started:
                tmp = tmp_path_factory.mktemp(f"stack-{mode}")
                started[mode] = running.enter_context(live_stack(mode, tmp, _shared_folder(tmp_path_factory)))
            return started[mode]

        yield get


# In a parallel run all of one stack's tests go to one worker, which builds it once (tests/conftest.py).
@pytest.fixture(scope="module", params=["services", "embedded"])
def stack(request, stacks):
    need(Path(CHROMIUM).exists(), CHROMIUM)
    need(bool(os.environ.get("REDIS_URL")), "REDIS_URL (Redis and PostgreSQL)")
    return stacks(request.param)


class Chromium:
    """Headless Chromium through Playwright, started when a test first needs it and stopped after a worker's
    last browser test: Playwright's sync API holds an event loop in this thread, beside which the asyncio
    tests that follow on the same worker could not run theirs."""

    def __init__(self):
        self.playwright = self.browser = None

    def get(self):
        if self.browser is None:
            from playwright.sync_api import sync_playwright

            self.playwright = sync_playwright().start()
            self.browser = self.playwright.chromium.launch(
                executable_path=CHROMIUM,
                args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                      "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync",
                      "--use-gl=swiftshader", "--enable-unsafe-swiftshader"],
            )
        return self.browser

    def stop(self):
        if self.playwright is not None:
            self.browser.close()
            self.playwright.stop()
            self.playwright = self.browser = None


CHROMIUM_RUNNING = Chromium()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    if nextitem is None or Path(__file__).parent not in Path(nextitem.path).parents:
        CHROMIUM_RUNNING.stop()


@pytest.fixture
def browser():
    return CHROMIUM_RUNNING.get()


@pytest.fixture
def new_page(browser):
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": 1280, "height": 860})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(30_000)
        return page

    yield make
    for context in contexts:
        context.close()


def stack_shell(stack, code: str) -> str:
    """Runs Django code in the stack (its database, Redis and media; tests/browser/stack_shell.py) and returns
    the last line it printed."""
    shell = stack["shell"]
    shell.stdin.write(json.dumps(code) + "\n")
    shell.stdin.flush()
    while not (line := shell.stdout.readline()).startswith(SHELL_MARK):
        if not line:
            raise RuntimeError(f"the stack's shell exited with {shell.wait()}")
    answer = json.loads(line[len(SHELL_MARK):])
    if "error" in answer:
        raise RuntimeError(f"stack code failed:\n{answer['printed']}{answer['error']}")
    lines = answer["printed"].strip().splitlines()
    return lines[-1] if lines else ""


def stack_json(stack, code: str) -> dict:
    """`stack_shell` for code whose last line is a JSON object."""
    return json.loads(stack_shell(stack, code))


def login(page, base: str, username: str, password: str = DEMO_PASSWORD) -> None:
    """Signs in through the login form and waits for the home page."""
    page.goto(base + "/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(base + "/")


def shot(page, name: str, stack) -> None:
    """README screenshots come from the production-like stack."""
    if stack["mode"] != "services":
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
