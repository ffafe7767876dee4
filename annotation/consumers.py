"""Websocket for the campaign dashboard: admins are told when a campaign's progress changed and
fetch the figures from the staff API (a ping per event, so a busy campaign never recomputes its
progress once per worker action)."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from core import roles

from .models import Campaign


class CampaignProgressConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.campaign_id = self.scope["url_route"]["kwargs"]["campaign_id"]
        user = self.scope.get("user")
        if user is None or not await database_sync_to_async(roles.has_role)(user, roles.ADMIN):
            await self.close(code=4403)
            return
        if not await database_sync_to_async(Campaign.objects.filter(pk=self.campaign_id).exists)():
            await self.close(code=4404)
            return
        self.group = f"campaign-{self.campaign_id}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def campaign_changed(self, event):
        await self.send_json({"campaign": int(self.campaign_id), "changed": event["what"]})
