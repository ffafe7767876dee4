"""Websockets that follow one object: /ws/jobs/<id>/ (a job's state when it connects, then every
change, core/jobs.py), and the base the stages' progress sockets share."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from core import roles
from core.errors import DomainError
from core.jobs import job_for, job_group, job_state
from core.models import Job


class ObjectFollower(AsyncJsonWebsocketConsumer):
    """Joins the channel-layer group of the object its URL names, and leaves it on disconnect.
    `opening()` (run in a thread, so it may query) gives the group and the first message to send (or
    None), or None for no such object or not the caller's to see: both close with 4404. With
    `admin_only`, anyone but an admin is closed with 4403 first."""

    admin_only = False

    def opening(self) -> tuple[str, dict | None] | None:
        raise NotImplementedError

    async def connect(self):
        user = self.scope.get("user")
        if self.admin_only and (user is None or not await database_sync_to_async(roles.has_role)(user, roles.ADMIN)):
            await self.close(code=4403)
            return
        opened = await database_sync_to_async(self.opening)()
        if opened is None:
            await self.close(code=4404)
            return
        self.group, first = opened
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        if first is not None:
            await self.send_json(first)

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)


class JobProgressConsumer(ObjectFollower):
    def opening(self):
        self.job_id = self.scope["url_route"]["kwargs"]["job_id"]
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            return None
        try:
            job: Job = job_for(user, self.job_id)
        except DomainError:
            return None
        state = job_state(job)
        for moment in ("created_at", "started_at", "finished_at"):
            state[moment] = state[moment].isoformat() if state[moment] else None
        return job_group(self.job_id), state

    async def job_state(self, event):
        await self.send_json(event["state"])
