"""The demo's web server (the embedded default, TASKS_IN_THREADS) runs long work in a thread after the
sender's transaction commits: a launch answers at once with its job and the run's page follows it, where
the first run on a fresh demo used to hold the Launch request for ~38 s (config/celery.py)."""

import threading
import time

import pytest
from django.db import transaction

from config.celery import app
from modeleval import services as modeleval_services
from modeleval.models import Run
from tests.factories import ItemFactory, UserFactory

started, release = threading.Event(), threading.Event()


@app.task(name="tests.core.wait_for_release")
def wait_for_release() -> str:
    started.set()
    release.wait(10)
    return threading.current_thread().name


@pytest.fixture
def in_threads(settings):
    settings.TASKS_IN_THREADS = True
    started.clear()
    release.clear()
    yield
    release.set()


@pytest.mark.django_db(transaction=True)
def test_a_task_starts_after_the_commit_in_its_own_thread_and_the_sender_goes_on(in_threads):
    with transaction.atomic():
        result = wait_for_release.delay()
        assert not started.wait(0.3), "the task began before its sender's transaction committed"
    assert started.wait(5), "the task never began after the commit"
    release.set()
    assert result.get(timeout=5).startswith("task-tests.core.wait_for_release")


@pytest.mark.django_db(transaction=True)
def test_launching_a_run_answers_before_the_run_ends_and_the_run_then_finishes(in_threads, api_client):
    items = [ItemFactory()]
    items += [ItemFactory(change__scene=items[0].scene) for _ in range(3)]
    model = modeleval_services.ensure_baseline_model()
    api_client.force_authenticate(UserFactory(role="admin"))
    response = api_client.post("/api/v1/runs/", {"model": model.pk, "benchmark": items[0].benchmark.slug},
                               format="json")
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["run"])
    assert response.json()["status"] in ("queued", "running"), response.json()
    deadline = time.monotonic() + 30
    while run.status not in ("finished", "failed") and time.monotonic() < deadline:
        time.sleep(0.1)
        run.refresh_from_db()
    assert run.status == "finished" and run.predictions.count() == 4
