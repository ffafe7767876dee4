import pytest

from config.celery import app as celery_app
from tests.chat_server import ChatServer


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
