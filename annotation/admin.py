from django.contrib import admin

from .models import Assignment, Campaign, CrowdWorker


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "benchmark", "kind", "change_type", "is_active"]
    filter_horizontal = ["scenes"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["id", "campaign", "scene", "worker", "status", "lease_expires_at", "completion_code"]
    list_filter = ["status", "campaign"]


@admin.register(CrowdWorker)
class CrowdWorkerAdmin(admin.ModelAdmin):
    list_display = ["worker_id", "platform", "study_id", "session_id", "user"]
    search_fields = ["worker_id"]
