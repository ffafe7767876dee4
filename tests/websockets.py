"""A websocket of the ASGI app opened in-process as a given user."""

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator

from config.asgi import application


def connect(user, path: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, path, headers=[(b"origin", b"http://localhost")])
    communicator.scope["user"] = user
    return communicator


@async_to_sync
async def messages_around(communicator, step=None):
    """(connected, messages): the first message after connecting and, when `step` (a plain function that
    may use the database) is given, the one it causes."""
    # Each call runs in a new event loop; a Redis layer's receive lock, created in an earlier call's loop
    # and left held by its cancelled consumer, would be "bound to a different event loop": a fresh layer.
    channel_layers.backends.clear()
    connected, _ = await communicator.connect()
    if not connected:
        return False, []
    received = [await communicator.receive_json_from(timeout=5)]
    if step:
        await database_sync_to_async(step)()
        received.append(await communicator.receive_json_from(timeout=5))
    await communicator.disconnect()
    return True, received
