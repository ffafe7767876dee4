"""The kernel's tables: answers kept for Idempotency-Key retries (core/idempotency.py)."""

from django.conf import settings
from django.db import models


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
