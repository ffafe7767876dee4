"""The campaign dashboard's websocket: admins are told when work is leased or submitted; others
are turned away. Routed here directly, without the rest of config/asgi.py."""

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from annotation import services
from annotation.routing import websocket_urlpatterns
from core import roles
from tests.factories import SceneFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

MOVE = "The chair has been moved from the desk to the window next to the bookshelf."


def connect(user, campaign_id):
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/campaigns/{campaign_id}/")
    communicator.scope["user"] = user
    return communicator


@async_to_sync
async def messages_after(communicator, action):
    connected, _ = await communicator.connect()
    if not connected:
        return connected, []
    await database_sync_to_async(action)()
    received = [await communicator.receive_json_from(timeout=5), await communicator.receive_json_from(timeout=5)]
    await communicator.disconnect()
    return connected, received


def test_admin_is_told_when_an_assignment_is_leased_and_submitted():
    scene = SceneFactory()
    campaign = services.create_campaign(scene.benchmark, "Moves", "movement", [scene])
    worker = UserFactory()

    def work():
        assignment = services.lease_assignment(campaign, worker)
        services.submit_assignment(assignment.pk, worker, MOVE)

    connected, received = messages_after(connect(UserFactory(role=roles.ADMIN), campaign.pk), work)
    assert connected
    assert received == [{"campaign": campaign.pk, "changed": "leased"},
                        {"campaign": campaign.pk, "changed": "submitted"}]


def test_non_admin_is_refused():
    scene = SceneFactory()
    campaign = services.create_campaign(scene.benchmark, "Moves", "movement", [scene])
    connected, _ = messages_after(connect(UserFactory(role=roles.ANNOTATOR), campaign.pk), lambda: None)
    assert not connected
