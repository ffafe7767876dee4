import os
import re

import pytest

from config.celery import app as celery_app
from tests.chat_server import ChatServer


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """Parallel workers (pytest-xdist): every test is a unit of work of its own, but for the browser tests run
    on a stack fixture (`[services]`, `[embedded]`), whose tests of one module stay together on one worker
    in their order. Any worker can start any stack in seconds (tests/browser/conftest.py seeded_template).
    Units go out in collection order (pytest_collection_modifyitems puts the long ones first)."""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleStackScheduling(LoadScopeScheduling):
        def __init__(self, config, log=None):
            super().__init__(config, log)
            config.option.loadscopereorder = False  # by size of unit: a long single test would come last

        def _split_scope(self, nodeid: str) -> str:
            stack = re.search(r"\[(services|embedded)[\]-]", nodeid)
            if nodeid.startswith("tests/browser/") and stack:
                return f"{nodeid.split('::')[0]}[{stack.group(1)}]"
            return nodeid

    return ModuleStackScheduling(config, log)


# Fixtures through which a test reaches the database; a test with none of them (and no django_db marker)
# cannot touch it, so it runs the same on either database.
DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
                     "live_server"}


def pytest_collection_modifyitems(config, items):
    """In ./scripts/test's second pass (DATABASE_FREE_TESTS_RAN, set when the SQLite pass ran first), the
    tests that use no database, no services and no browser ran in the first pass already: they are
    deselected rather than run again (about a third of the first pass's time). The browser tests go first,
    so that the two workers end together: the first a PostgreSQL stack's, then the SQLite stacks' (each
    worker starts by seeding a different one), the longest modules among the first."""
    if os.environ.get("DATABASE_FREE_TESTS_RAN"):
        kept, done = [], []
        for item in items:
            free = (not item.get_closest_marker("django_db") and not DATABASE_FIXTURES & set(item.fixturenames)
                    and not any(item.get_closest_marker(m) for m in ("services", "real_worker", "postgresql"))
                    and not item.nodeid.startswith("tests/browser/"))
            (done if free else kept).append(item)
        if done:
            config.hook.pytest_deselected(items=done)
            items[:] = kept
    browser = [item for item in items if item.nodeid.startswith("tests/browser/")]
    if browser:
        rank = {name: i for i, name in enumerate(LONGEST_BROWSER_MODULES)}
        browser.sort(key=lambda item: (rank.get(item.path.name, len(rank)), "[services" not in item.nodeid))
        first_services = next((item for item in browser if "[services" in item.nodeid), None)
        if first_services is not None:
            browser.remove(first_services)
            browser.insert(0, first_services)
        items[:] = browser + [item for item in items if not item.nodeid.startswith("tests/browser/")]


# The browser modules that take longest (PERFORMANCE.md, the test suite), in that order.
LONGEST_BROWSER_MODULES = ("test_crawl_roles.py", "test_family_review.py", "test_annotation_campaign.py",
                           "test_csp.py", "test_thin_path.py")


def _flush_by_delete() -> None:
    """Transactional tests empty every table after them (Django's flush). On PostgreSQL flush TRUNCATEs,
    which makes new files for each of ~60 tables and their indexes and waits for every other connection's
    lock on them; a DELETE of their few rows is ten times faster. Content types and permissions stay, so
    the post-flush signal finds them instead of writing them again. Foreign keys are deferred to the
    flush's commit, so the order does not matter."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush
    kept = {"django_content_type", "auth_permission"}

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade:
            return truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return [f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
                for table in tables if table not in kept]

    DatabaseOperations.sql_flush = sql_flush


_flush_by_delete()


@pytest.fixture(autouse=True)
def postgresql_only(request):
    """A test of a PostgreSQL-only feature says so in its marker; ./scripts/test's SQLite pass deselects it
    (-m "not postgresql"), and a run by hand on SQLite skips it naming the feature."""
    from django.db import connection

    marker = request.node.get_closest_marker("postgresql")
    if marker is not None and connection.vendor != "postgresql":
        pytest.skip(f"PostgreSQL only: {marker.kwargs.get('reason', '')}")


@pytest.fixture(autouse=True)
def media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


# Runs score Hypo3D's SBERT only in the tests that ask for it (settings.SCORE_SBERT = True): loading the
# sentence model would dominate the timings other tests measure. Workers started by tests inherit this.
os.environ.setdefault("SCORE_SBERT", "0")


@pytest.fixture(autouse=True)
def no_sbert_by_default(settings):
    settings.SCORE_SBERT = False


@pytest.fixture(autouse=True)
def tasks_in_process(request):
    """Unit and API tests run tasks in-process; tests marked `real_worker` talk to a real broker."""
    if request.node.get_closest_marker("real_worker"):
        yield
        return
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture
def prolific_silent(settings):
    """A token set and Prolific not answering: neither of two links with one PROLIFIC_PID is confirmed, so
    the admin decides (with no token at all, the id's next session would take it over:
    tests/crowd/test_entry_without_api.py)."""
    settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL = "set", "http://127.0.0.1:9/api/v1/"  # nothing listens


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def chat_servers():
    """Starts loopback chat servers (ChatServer's arguments) and closes them after the test."""
    started = []

    def start(*contents, reply=None):
        started.append(ChatServer(contents, reply))
        return started[-1]

    yield start
    for server in started:
        server.close()
