"""The kernel's tables: answers kept for Idempotency-Key retries (core/idempotency.py), jobs, and the
status history of every stateful model (core/history.py)."""

from django.conf import settings
from django.db import models

from core.status import StatusTransitions


class IdempotentRequest(models.Model):
    """A POST sent with an Idempotency-Key and the answer it got, kept 24 hours so that the same
    request sent again is answered, not written twice (core/idempotency.py)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255, help_text="The client's Idempotency-Key header.")
    path = models.CharField(max_length=300, help_text="The endpoint the key was used on.")
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the method, path and body.")
    status = models.PositiveSmallIntegerField(null=True, help_text="The answer's status code.")
    body = models.TextField(blank=True, help_text="The answer's body (JSON).")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "benchmarks_idempotentrequest"  # moved from benchmarks with its rows
        constraints = [
            models.UniqueConstraint(fields=["user", "key", "path"], name="idempotency_key_once_per_user_path")
        ]

    def __str__(self):
        return f"{self.key} on {self.path}"


class Job(StatusTransitions, models.Model):
    """One long-running task of any kind (scene processing, a release export, a dedup run, drafting,
    generation, a model run, a pipeline stage), with its progress and its report: the one thing pages,
    the API (/api/v1/jobs/<id>/) and the websocket (/ws/jobs/<id>/) show for all of them (core/jobs.py)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    # Started again after a failure or a cancel; a finished job is not run twice under the same key.
    TRANSITIONS = {
        Status.QUEUED: {Status.RUNNING, Status.FAILED, Status.CANCELLED},
        Status.RUNNING: {Status.DONE, Status.FAILED, Status.CANCELLED},
        Status.FAILED: {Status.QUEUED},
        Status.CANCELLED: {Status.QUEUED},
        Status.DONE: set(),
    }

    kind = models.CharField(max_length=40, help_text="What the job does, e.g. release_export, dedup, stage.")
    key = models.CharField(max_length=200, unique=True,
                           help_text="What makes two requests the same job: asking again returns this one.")
    subject = models.CharField(max_length=200, blank=True, help_text="What it works on, for people.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True, help_text="Empty while unknown.")
    message = models.CharField(max_length=500, blank=True, help_text="The current step, or why it failed.")
    report = models.JSONField(default=dict, blank=True, help_text="What it kept and dropped, and why.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True, help_text="Its last change or progress report.")

    class Meta:
        indexes = [models.Index(fields=["kind", "-created_at"], name="job_kind_recent")]

    def __str__(self):
        return f"{self.kind} {self.subject or self.key} ({self.status})"


class StatusChangeQuerySet(models.QuerySet):
    """History is appended by database triggers and is never rewritten: no bulk edits through the app."""

    def update(self, **kwargs):
        raise TypeError("Status history is append-only.")

    def delete(self):
        raise TypeError("Status history is append-only.")


class StatusChange(models.Model):
    """One status change of a row of a stateful model (every StatusTransitions model), or the status
    it was created with (`from_status` empty). Written by the table's database triggers, whatever path
    changed the status (move_to, a bulk update, hand-written SQL): see core/history.py."""

    model = models.CharField(max_length=100, help_text="The model's label, e.g. 'annotation.assignment'.")
    # Plain numbers, no foreign keys: the history outlives deleted rows and users.
    row_id = models.BigIntegerField()
    from_status = models.CharField(max_length=40, null=True, blank=True, help_text="Empty on creation.")
    to_status = models.CharField(max_length=40)
    at = models.DateTimeField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.DO_NOTHING,
                              db_constraint=False, related_name="+",
                              help_text="The signed-in user whose request made the change; empty for "
                                        "background work (tasks, the reaper, commands).")

    objects = StatusChangeQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["model", "row_id", "id"], name="status_history_of_row")]

    def __str__(self):
        return f"{self.model} {self.row_id}: {self.from_status or '(new)'} -> {self.to_status}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise TypeError("Status history is append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError("Status history is append-only.")
