from django.contrib import admin

from .models import EvalSession, Response, Study


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "benchmark", "seconds_per_item", "is_open", "created_at"]


@admin.register(EvalSession)
class EvalSessionAdmin(admin.ModelAdmin):
    list_display = ["id", "study", "participant", "status", "started_at", "deadline", "completion_code"]
    list_filter = ["status", "study"]


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ["session", "item", "shown_at", "answered_at", "timed_out"]
