from django.contrib import admin

from .models import BlockedWorker, CrowdWorker, WebhookEvent


@admin.register(CrowdWorker)
class CrowdWorkerAdmin(admin.ModelAdmin):
    list_display = ["worker_id", "platform", "study_id", "session_id", "user"]
    search_fields = ["worker_id"]


@admin.register(BlockedWorker)
class BlockedWorkerAdmin(admin.ModelAdmin):
    list_display = ["worker_id", "platform", "scope", "reason", "created_at"]
    search_fields = ["worker_id", "scope"]


@admin.register(WebhookEvent)
class WebhookEventAdmin(admin.ModelAdmin):
    list_display = ["platform", "event_id", "received_at"]
