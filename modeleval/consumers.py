"""Websocket that pushes a model run's progress to the admin's run page."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from core import roles

from .models import Run
from .services import run_progress


class RunProgressConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.run_id = self.scope["url_route"]["kwargs"]["run_id"]
        user = self.scope.get("user")
        if user is None or not await database_sync_to_async(roles.has_role)(user, roles.ADMIN):
            await self.close(code=4403)
            return
        progress = await database_sync_to_async(self._progress)()
        if progress is None:
            await self.close(code=4404)
            return
        self.group = f"run-{self.run_id}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json(progress)

    def _progress(self):
        run = Run.objects.filter(pk=self.run_id).first()
        return run_progress(run) if run else None

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def run_progress(self, event):
        await self.send_json(event["progress"])
