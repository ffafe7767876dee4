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

admin.site.register(ChangeRevision, list_display=["change", "number", "author", "created_at"])

admin.site.register(
    ReviewDecision, list_display=["change", "action", "reviewer", "created_at"],
    list_filter=["action"],
)

admin.site.register(ItemRevision, list_display=["item", "number", "author", "note", "created_at"])

admin.site.register(
    ItemDecision, list_display=["item", "action", "reviewer", "created_at"],
    list_filter=["action"],
)

admin.site.register(IndependentAnswer, list_display=["item", "answerer", "answer", "created_at"])

admin.site.register(
    DedupRun, list_display=["benchmark", "job__status", "job", "threshold", "n_texts", "created_at"],
    list_select_related=["benchmark", "job"],
    list_filter=["job__status"],
)

admin.site.register(
    DuplicatePair, list_display=["run", "kind", "first_id", "second_id", "similarity", "resolution"],
    list_filter=["kind", "resolution"],
)
