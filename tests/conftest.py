import pytest

from config.celery import app as celery_app


@pytest.fixture(autouse=True)
def media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


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
def api_client():
    from rest_framework.test import APIClient

    return APIClient()
