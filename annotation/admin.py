from django.contrib import admin
from django.http import HttpResponse
from django.urls import reverse
from django.utils.html import format_html

from . import progress
from .models import (
    Assignment,
    AssignmentDraft,
    Campaign,
    DraftingPrompt,
    DraftRequest,
    QuizAttempt,
)


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "benchmark", "kind", "change_type", "descriptions_per_assignment", "is_active",
                    "dashboard"]
    filter_horizontal = ["scenes"]
    actions = ["download_payment_report"]

    @admin.display(description="Progress")
    def dashboard(self, campaign):
        return format_html('<a href="{}">dashboard</a>', reverse("campaign_dashboard", args=[campaign.pk]))

    @admin.action(description="Download the payment report (CSV) of one campaign")
    def download_payment_report(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Pick exactly one campaign.", level="error")
            return None
        campaign = queryset.get()
        response = HttpResponse(progress.payment_report_csv(campaign), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="campaign-{campaign.pk}-payments.csv"'
        return response


admin.site.register(
    Assignment, list_display=["id", "campaign", "scene", "worker", "status", "lease_expires_at", "completion_code"],
    list_filter=["status", "campaign"],
)

admin.site.register(AssignmentDraft, list_display=["assignment", "revision", "updated_at"])

admin.site.register(
    QuizAttempt, list_display=["campaign", "worker", "passed", "created_at"],
    list_filter=["passed", "campaign"],
)

admin.site.register(
    DraftingPrompt, list_display=["name", "target", "change_type", "question_type", "count", "is_active"],
    list_filter=["target", "change_type", "is_active"],
)

admin.site.register(
    DraftRequest, list_display=["id", "template", "model", "scene", "change", "job__status", "job", "created_at"],
    list_select_related=["template", "model", "scene", "change", "job"],
    list_filter=["job__status", "template"],
    readonly_fields=["prompt", "output", "created", "job"],
)
