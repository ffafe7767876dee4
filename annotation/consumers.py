"""Websocket for the campaign dashboard: admins are told when a campaign's progress changed and
fetch the figures from the staff API (a ping per event, so a busy campaign never recomputes its
progress once per worker action)."""

from core.consumers import ObjectFollower, Refused

from .models import Campaign


class CampaignProgressConsumer(ObjectFollower):
    admin_only = True

    def group_name(self):
        self.campaign_id = self.scope["url_route"]["kwargs"]["campaign_id"]
        return f"campaign-{self.campaign_id}"

    def opening(self):
        if not Campaign.objects.filter(pk=self.campaign_id).exists():
            raise Refused
        return None

    async def campaign_changed(self, event):
        await self.send_json({"campaign": int(self.campaign_id), "changed": event["what"]})
