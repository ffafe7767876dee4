"""Refinement: every edit of a change is a revision; every verdict is a decision row."""

from django.conf import settings
from django.db import models

from benchmarks.models import ContextChange


class ChangeRevision(models.Model):
    change = models.ForeignKey(ContextChange, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField(help_text="1 is the raw text; each edit adds one.")
    text = models.TextField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["change", "number"]
        constraints = [models.UniqueConstraint(fields=["change", "number"], name="revision_number_unique")]


class ReviewDecision(models.Model):
    class Action(models.TextChoices):
        APPROVE = "approve", "Approve"
        REJECT = "reject", "Reject"

    change = models.ForeignKey(ContextChange, on_delete=models.CASCADE, related_name="decisions")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=10, choices=Action.choices)
    criteria = models.JSONField(default=list, blank=True, help_text="Criteria failed, for a rejection.")
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
