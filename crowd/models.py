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
    """A crowd-platform webhook delivery, kept so a redelivered event (the same X-Event-ID) is handled
    once."""

    platform = models.CharField(max_length=20, choices=CrowdPlatform.choices)
    event_id = models.CharField(max_length=200, help_text="Prolific's X-Event-ID header.")
    event_type = models.CharField(max_length=100, blank=True)
    resource_id = models.CharField(max_length=200, blank=True, help_text="The submission's or study's id.")
    sent_at = models.BigIntegerField(null=True, blank=True, help_text="X-Timestamp: when the event was sent (s).")
    verified_by = models.CharField(
        max_length=20, blank=True, help_text="raw: the signature matched the body as sent; reserialised: only the "
                                             "body as the docs' example re-serialises it.")
    stale = models.BooleanField(default=False, help_text="Older than the state already recorded: not applied.")
    signature = models.CharField(
        max_length=100, blank=True, help_text="X-Prolific-Request-Signature: it covers the request timestamp and "
                                              "the body, so a delivery seen before is dropped whatever its event id.")
    signed_at = models.BigIntegerField(null=True, blank=True,
                                       help_text="X-Prolific-Request-Timestamp (s), the signed time.")
    payload = models.JSONField()
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_webhookevent"
        constraints = [
            models.UniqueConstraint(fields=["platform", "event_id"], name="webhook_event_once"),
            models.UniqueConstraint(fields=["platform", "signature"], condition=~models.Q(signature=""),
                                    name="webhook_delivery_once"),
        ]


class PlatformSubmission(models.Model):
    """One platform session of a participant (Prolific SESSION_ID = the submission id, else the
    assignment id): which campaign or study it entered (`scope`, models.scope_key), so a webhook about it
    frees only that work, and the newest status the platform reported (by its X-Timestamp)."""

    platform = models.CharField(max_length=20, choices=CrowdPlatform.choices)
    submission_id = models.CharField(max_length=100)
    worker = models.ForeignKey(CrowdWorker, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="submissions")
    participant_id = models.CharField(max_length=100, blank=True)
    study_id = models.CharField(max_length=100, blank=True, help_text="The platform's study id (STUDY_ID).")
    scope = models.CharField(max_length=100, blank=True, help_text='Where it entered: "campaign:<id>", "study:<id>".')
    status = models.CharField(max_length=40, blank=True, help_text="The platform's status, e.g. AWAITING REVIEW.")
    status_at = models.BigIntegerField(default=0, help_text="When the platform sent that status (UNIX s).")
    entered_code = models.CharField(max_length=100, blank=True)
    decision = models.CharField(max_length=20, blank=True, help_text="APPROVE or REJECT once asked of Prolific.")
    verified = models.BooleanField(default=False, help_text="Prolific's API confirmed at entry that this submission "
                                                            "is the participant's, in this study, holding a place.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "submission_id"], name="one_row_per_submission")]

    def __str__(self):
        return f"{self.platform}:{self.submission_id} {self.status}"


class ProlificStudy(models.Model):
    """A Prolific study this platform published (or heard of through a webhook) for one scope."""

    prolific_id = models.CharField(max_length=100, unique=True)
    scope = models.CharField(max_length=100, blank=True, db_index=True)
    name = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=40, blank=True)
    status_at = models.BigIntegerField(default=0)
    reward_cents = models.PositiveIntegerField(default=0)
    completion_code = models.CharField(max_length=100, blank=True)
    last_event = models.JSONField(default=dict, blank=True, help_text="The latest study event's type and metadata.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.prolific_id} ({self.scope or 'unlinked'})"


class ProlificBonus(models.Model):
    """One participant's bonus on one study, paid once: the row is written before Prolific's
    non-idempotent pay call and reconciled against the submission's bonus_payments after a failure."""

    class State(models.TextChoices):
        SET_UP = "set_up", "Set up (bulk bonus created, not paid)"
        PAY_SENT = "pay_sent", "Pay call sent (202 or unknown)"
        PAID = "paid", "Seen in the submission's bonus_payments"

    study = models.ForeignKey(ProlificStudy, on_delete=models.CASCADE, related_name="bonuses")
    participant_id = models.CharField(max_length=100)
    submission_id = models.CharField(max_length=100, blank=True)
    amount_cents = models.PositiveIntegerField()
    bulk_id = models.CharField(max_length=100, blank=True)
    state = models.CharField(max_length=20, choices=State.choices, default=State.SET_UP)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "participant_id"], name="one_bonus_per_participant")]


class ProlificHookSecret(models.Model):
    """The workspace signing secret as POST /hooks/secrets/ returned it (the newest signs; the one
    before stays valid for a day, for retries signed before a rotation)."""

    workspace_id = models.CharField(max_length=100)
    value = models.CharField(max_length=200)
    subscriptions = models.JSONField(default=list, blank=True, help_text="Subscription ids made with it.")
    created_at = models.DateTimeField(auto_now_add=True)


class SessionConflict(models.Model):
    """A crowd link refused because its worker id is already bound to another platform session (someone
    entered the id first, or the participant lost the browser they started in). The participant is told
    so; the admin resolves it (crowd.squatting): release the binding (the same person: their next link
    binds its session), or reassign the id to the refused session (someone else took it: the first
    account is detached from the id and switched off, the next link makes a new account)."""

    class Resolution(models.TextChoices):
        RELEASED = "released", "Binding released (the same person)"
        REASSIGNED = "reassigned", "Id reassigned to the refused session"

    account = models.ForeignKey(CrowdWorker, null=True, on_delete=models.SET_NULL, related_name="conflicts",
                                help_text="The account the id is bound to.")
    platform = models.CharField(max_length=20, choices=CrowdPlatform.choices)
    worker_id = models.CharField(max_length=100)
    bound_session_id = models.CharField(max_length=100, help_text="The session the id was bound to.")
    refused_session_id = models.CharField(max_length=100, help_text="The session of the refused link.")
    study_id = models.CharField(max_length=100, blank=True)
    scope = models.CharField(max_length=100, blank=True, help_text='Where the link led: "campaign:<id>", "study:<id>".')
    attempts = models.PositiveIntegerField(default=1, help_text="Times this link was refused.")
    created_at = models.DateTimeField(auto_now_add=True)
    resolution = models.CharField(max_length=20, choices=Resolution.choices, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "worker_id", "refused_session_id"],
                                               name="one_conflict_per_refused_session")]

    def __str__(self):
        return f"{self.platform}:{self.worker_id} ({self.bound_session_id} / {self.refused_session_id})"
