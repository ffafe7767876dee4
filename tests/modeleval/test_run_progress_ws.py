"""The run page's websocket: admins get the run's progress pushed; others are turned away."""

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from config.asgi import application
from core import roles
from modeleval import services
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def connect(user, run_id):
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run_id}/", headers=[(b"origin", b"http://localhost")])
    communicator.scope["user"] = user
    return communicator


@async_to_sync
async def first_messages(communicator, then=None):
    connected, _ = await communicator.connect()
    if not connected:
        return connected, []
    messages = [await communicator.receive_json_from(timeout=5)]
    if then:
        await then()
        messages.append(await communicator.receive_json_from(timeout=5))
    await communicator.disconnect()
    return connected, messages


def test_admin_receives_progress_pushed_by_the_service():
    item = ItemFactory()
    run = services.launch_run(services.ensure_baseline_model().pk, item.benchmark, None)
    run.refresh_from_db()
    from channels.db import database_sync_to_async

    async def push():
        await database_sync_to_async(services.publish_progress)(run)

    connected, messages = first_messages(connect(UserFactory(role=roles.ADMIN), run.pk), then=push)
    assert connected
    assert messages[0]["run"] == run.pk and messages[0]["total"] == 1
    assert messages[1]["run"] == run.pk


def test_non_admin_is_refused():
    item = ItemFactory()
    run = services.launch_run(services.ensure_baseline_model().pk, item.benchmark, None)
    connected, _ = first_messages(connect(UserFactory(role=roles.ANNOTATOR), run.pk))
    assert not connected
