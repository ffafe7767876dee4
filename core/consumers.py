"""Websocket /ws/jobs/<id>/: a job's state when it connects, then every change (core/jobs.py)."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from core.errors import DomainError
from core.jobs import job_for, job_group, job_state
from core.models import Job


class JobProgressConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.job_id = self.scope["url_route"]["kwargs"]["job_id"]
        state = await database_sync_to_async(self._state)()
        if state is None:
            await self.close(code=4404)  # not there, or not this user's to see: the same answer
            return
        self.group = job_group(self.job_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json(state)

    def _state(self):
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
        return state

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def job_state(self, event):
        await self.send_json(event["state"])
