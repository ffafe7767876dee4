from django.contrib import admin

from .models import (
    ChangeRevision,
    DedupRun,
    DuplicatePair,
    IndependentAnswer,
    ItemDecision,
    ItemRevision,
    ReviewDecision,
)


@admin.register(ChangeRevision)
class ChangeRevisionAdmin(admin.ModelAdmin):
    list_display = ["change", "number", "author", "created_at"]


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(admin.ModelAdmin):
    list_display = ["change", "action", "reviewer", "created_at"]
    list_filter = ["action"]


@admin.register(ItemRevision)
class ItemRevisionAdmin(admin.ModelAdmin):
    list_display = ["item", "number", "author", "note", "created_at"]


@admin.register(ItemDecision)
class ItemDecisionAdmin(admin.ModelAdmin):
    list_display = ["item", "action", "reviewer", "created_at"]
    list_filter = ["action"]


@admin.register(IndependentAnswer)
class IndependentAnswerAdmin(admin.ModelAdmin):
    list_display = ["item", "answerer", "answer", "created_at"]


@admin.register(DedupRun)
class DedupRunAdmin(admin.ModelAdmin):
    list_display = ["benchmark", "status", "progress", "threshold", "n_texts", "created_at"]
    list_filter = ["status"]


@admin.register(DuplicatePair)
class DuplicatePairAdmin(admin.ModelAdmin):
    list_display = ["run", "kind", "first_id", "second_id", "similarity", "resolution"]
    list_filter = ["kind", "resolution"]
