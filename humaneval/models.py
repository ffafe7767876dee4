"""Human baseline: studies over approved items, timed sessions, one row per response."""

from django.conf import settings
from django.db import models

from benchmarks.models import Benchmark, Item
from benchmarks.status import StatusTransitions


class Study(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="studies")
    name = models.CharField(max_length=200)
    items = models.ManyToManyField(Item, through="StudyItem", related_name="studies")
    seconds_per_item = models.PositiveIntegerField(default=120, help_text="Time limit for one item.")
    seconds_per_session = models.PositiveIntegerField(default=1800, help_text="Time limit for a session.")
    is_open = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "studies"

    def __str__(self):
        return self.name


class StudyItem(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE)
    item = models.ForeignKey(Item, on_delete=models.CASCADE)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["study", "item"], name="study_item_unique")]


class EvalSession(StatusTransitions, models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        FINISHED = "finished", "Finished"

    TRANSITIONS = {"active": {"finished"}}

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="sessions")
    participant = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="eval_sessions")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    started_at = models.DateTimeField()
    deadline = models.DateTimeField(help_text="Server-owned end of the session.")
    finished_at = models.DateTimeField(null=True, blank=True)
    completion_code = models.CharField(max_length=40, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "participant"], name="one_session_per_participant")
        ]


class Response(models.Model):
    session = models.ForeignKey(EvalSession, on_delete=models.CASCADE, related_name="responses")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="human_responses")
    shown_at = models.DateTimeField()
    deadline = models.DateTimeField(help_text="Server-owned end of this item.")
    answered_at = models.DateTimeField(null=True, blank=True)
    answer_text = models.TextField(blank=True)
    timed_out = models.BooleanField(default=False)

    class Meta:
        ordering = ["shown_at"]
        constraints = [models.UniqueConstraint(fields=["session", "item"], name="one_response_per_item")]

    @property
    def latency_ms(self):
        if self.answered_at is None:
            return None
        return int((self.answered_at - self.shown_at).total_seconds() * 1000)
