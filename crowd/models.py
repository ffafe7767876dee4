"""Participants from crowd platforms, whichever stage they work in (annotation campaigns, human
evaluation studies): the platform identity behind an account, the blocklist and de-duplicated
platform webhooks. The tables kept their names from when they lived in annotation."""

from django.conf import settings
from django.db import models


class CrowdPlatform(models.TextChoices):
    PROLIFIC = "prolific", "Prolific"
    GENERIC = "generic", "Generic (worker_id)"


class CrowdWorker(models.Model):
    """The platform identity behind an account: one account per (platform, worker id)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="crowd_worker")
    platform = models.CharField(max_length=20, choices=CrowdPlatform.choices)
    worker_id = models.CharField(max_length=100, help_text="PROLIFIC_PID or the platform's worker id.")
    study_id = models.CharField(max_length=100, blank=True, help_text="STUDY_ID on Prolific.")
    session_id = models.CharField(
        max_length=100, blank=True,
        help_text="The platform session this account is bound to (Prolific SESSION_ID, else the assignment id): a "
                  "link with the worker id and another session signs nobody in. Clear it to let the worker's "
                  "next link bind a new one.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_crowdworker"
        constraints = [
            models.UniqueConstraint(fields=["platform", "worker_id"], name="one_account_per_platform_worker")
        ]

    def __str__(self):
        return f"{self.platform}:{self.worker_id}"


class BlockedWorker(models.Model):
    """A platform worker refused new work in one scope (a campaign, a study) or, scope empty, in all.
    The scope is a key the stage names (`scope_key`), so crowd needs to know none of them."""

    platform = models.CharField(max_length=20, choices=CrowdPlatform.choices)
    worker_id = models.CharField(max_length=100)
    scope = models.CharField(
        max_length=100, blank=True, default="",
        help_text='Empty: blocked everywhere. Else where: "campaign:<id>" or "study:<id>".',
    )
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_blockedworker"
        constraints = [
            models.UniqueConstraint(fields=["platform", "worker_id", "scope"], name="block_once_per_scope")
        ]

    def __str__(self):
        return f"{self.platform}:{self.worker_id}"


def scope_key(room: str, pk: int) -> str:
    """The blocklist scope of one campaign ("campaign", 12) or study ("study", 3)."""
    return f"{room}:{pk}"


class WebhookEvent(models.Model):
    """A crowd-platform webhook delivery, kept so a redelivered event is handled once."""

    platform = models.CharField(max_length=20, choices=CrowdPlatform.choices)
    event_id = models.CharField(max_length=200)
    payload = models.JSONField()
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_webhookevent"
        constraints = [models.UniqueConstraint(fields=["platform", "event_id"], name="webhook_event_once")]
