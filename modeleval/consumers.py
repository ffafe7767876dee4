"""Websocket that pushes a model run's progress to the admin's run page."""

from core.consumers import ObjectFollower

from .models import Run
from .services import run_progress


class RunProgressConsumer(ObjectFollower):
    admin_only = True

    def opening(self):
        self.run_id = self.scope["url_route"]["kwargs"]["run_id"]
        run = Run.objects.filter(pk=self.run_id).first()
        return (f"run-{self.run_id}", run_progress(run)) if run else None

    async def run_progress(self, event):
        await self.send_json(event["progress"])
