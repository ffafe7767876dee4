from django.contrib import admin

from .models import ChangeRevision, ReviewDecision


@admin.register(ChangeRevision)
class ChangeRevisionAdmin(admin.ModelAdmin):
    list_display = ["change", "number", "author", "created_at"]


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(admin.ModelAdmin):
    list_display = ["change", "action", "reviewer", "created_at"]
    list_filter = ["action"]
