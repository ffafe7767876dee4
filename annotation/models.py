"""Crowd authoring: who the worker is on their platform, campaigns, and leased assignments."""

from django.conf import settings
from django.db import models

from benchmarks.models import Benchmark, ChangeType, Scene
from benchmarks.status import StatusTransitions


class CrowdPlatform(models.TextChoices):
    PROLIFIC = "prolific", "Prolific"
    GENERIC = "generic", "Generic (worker_id)"


class CrowdWorker(models.Model):
    """The platform identity behind an account: one account per (platform, worker id)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="crowd_worker")
    platform = models.CharField(max_length=20, choices=CrowdPlatform.choices)
    worker_id = models.CharField(max_length=100, help_text="PROLIFIC_PID or the platform's worker id.")
    study_id = models.CharField(max_length=100, blank=True, help_text="STUDY_ID on Prolific.")
    session_id = models.CharField(max_length=100, blank=True, help_text="SESSION_ID of the latest entry.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["platform", "worker_id"], name="one_account_per_platform_worker")
        ]

    def __str__(self):
        return f"{self.platform}:{self.worker_id}"


class Campaign(models.Model):
    class Kind(models.TextChoices):
        CONTEXT_CHANGE = "context_change", "Context change"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="campaigns")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=30, choices=Kind.choices, default=Kind.CONTEXT_CHANGE)
    change_type = models.CharField(max_length=20, choices=ChangeType.choices, default=ChangeType.MOVEMENT)
    scenes = models.ManyToManyField(Scene, related_name="campaigns", help_text="The pool of scenes to assign.")
    guidelines = models.TextField(blank=True, help_text="Markdown shown before the first assignment.")
    min_words = models.PositiveIntegerField(default=10, help_text="Minimum words per description.")
    lease_minutes = models.PositiveIntegerField(default=30, help_text="How long an assignment is held.")
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class Assignment(StatusTransitions, models.Model):
    class Status(models.TextChoices):
        LEASED = "leased", "Leased"
        SUBMITTED = "submitted", "Submitted"
        EXPIRED = "expired", "Expired"

    TRANSITIONS = {"leased": {"submitted", "expired"}}

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="assignments")
    worker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.LEASED)
    lease_expires_at = models.DateTimeField()
    completion_code = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # A worker holds at most one open lease per campaign: re-entry resumes it.
            models.UniqueConstraint(
                fields=["campaign", "worker"],
                condition=models.Q(status="leased"),
                name="one_open_lease_per_worker_campaign",
            )
        ]
