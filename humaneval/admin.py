from django.contrib import admin

from .models import EvalSession, Response, SessionItem, Study, StudyItem


class StudyItemInline(admin.TabularInline):
    model = StudyItem
    extra = 0
    raw_id_fields = ["item"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "benchmark",
        "seconds_per_item",
        "participants_per_item",
        "sample_seed",
        "is_open",
        "created_at",
    ]
    inlines = [StudyItemInline]


admin.site.register(
    EvalSession, list_display=["id", "study", "participant", "status", "started_at", "deadline", "completion_code"],
    list_filter=["status", "study"],
)

admin.site.register(SessionItem, list_display=["session", "position", "item", "role"])

admin.site.register(Response, list_display=["session", "item", "shown_at", "answered_at", "timed_out"])
