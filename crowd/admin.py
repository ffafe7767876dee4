from django.contrib import admin

from .models import BlockedWorker, CrowdWorker, WebhookEvent

admin.site.register(
    CrowdWorker, list_display=["worker_id", "platform", "study_id", "session_id", "user"],
    search_fields=["worker_id"],
)

admin.site.register(
    BlockedWorker, list_display=["worker_id", "platform", "scope", "reason", "created_at"],
    search_fields=["worker_id", "scope"],
)

admin.site.register(WebhookEvent, list_display=["platform", "event_id", "received_at"])
