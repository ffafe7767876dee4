from django.contrib import admin
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from .models import StatusChange


@admin.register(StatusChange)
class StatusChangeAdmin(admin.ModelAdmin):
    """The status history, read-only: the triggers write it, nobody edits it."""

    list_display = ["at", "model", "row", "from_status", "to_status", "actor"]
    list_filter = ["model", "to_status"]
    search_fields = ["=row_id"]
    list_select_related = ["actor"]
    date_hierarchy = "at"

    @admin.display(description="row", ordering="row_id")
    def row(self, change):
        app_label, model_name = change.model.split(".")
        try:
            url = reverse(f"admin:{app_label}_{model_name}_change", args=[change.row_id])
        except NoReverseMatch:  # a model without an admin page
            return change.row_id
        return format_html('<a href="{}">{}</a>', url, change.row_id)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
