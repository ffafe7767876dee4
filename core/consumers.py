"""Websockets that follow one object: /ws/jobs/<id>/ (a job's state when it connects, then every
change, core/jobs.py), and the base the stages' progress sockets share."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from core import roles
from core.errors import DomainError
from core.jobs import job_for, job_group, job_state
from core.models import Job


class Refused(Exception):
    """No such object, or not the caller's to see: the socket closes with 4404."""


class ObjectFollower(AsyncJsonWebsocketConsumer):
    """Joins the channel-layer group of the object its URL names (`group_name()`), and leaves it on
    disconnect. `opening()` (run in a thread, so it may query) gives the first message to send (or None),
    or raises Refused. With `admin_only`, anyone but an admin is closed with 4403 first."""

    admin_only = False

    def group_name(self) -> str:
        raise NotImplementedError

    def opening(self) -> dict | None:
        raise NotImplementedError

    async def connect(self):
        user = self.scope.get("user")
        if self.admin_only and (user is None or not await database_sync_to_async(roles.has_role)(user, roles.ADMIN)):
            await self.close(code=4403)
            return
        # Joined before the first state is read: a change made between the read and the join would
        # otherwise reach no one, and the page would show the old state for good (its socket is up).
        self.group = self.group_name()
        await self.channel_layer.group_add(self.group, self.channel_name)
        try:
            first = await database_sync_to_async(self.opening)()
        except Refused:
            await self.close(code=4404)
            return
        await self.accept()
        if first is not None:
            await self.send_json(first)

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)


class JobProgressConsumer(ObjectFollower):
    def group_name(self):
        self.job_id = self.scope["url_route"]["kwargs"]["job_id"]
        return job_group(self.job_id)

    def opening(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            raise Refused
        try:
            job: Job = job_for(user, self.job_id)
        except DomainError:
            raise Refused from None
        state = job_state(job)
        for moment in ("created_at", "started_at", "finished_at"):
            state[moment] = state[moment].isoformat() if state[moment] else None
        return state

    async def job_state(self, event):
        await self.send_json(event["state"])
