"""Prolific's webhooks as its documentation describes them (../shared/CROWD-CONTRACTS.md §1):
each delivery is signed base64(HMAC-SHA256(workspace secret, X-Prolific-Request-Timestamp + body)),
carries its event id in X-Event-ID (the same on every retry) and the time it was sent in X-Timestamp
(deliveries may come out of order). Neither header is signed: a delivery seen before (the same
signature, which covers the request timestamp and the body) is dropped whatever its event id, and
X-Timestamp orders events only up to the signed request timestamp (event_time). The body is a thin notification: a submission's or a study's
id and its new status. Each event is recorded once; an older one never overwrites a newer state; a
submission that was returned, timed out or rejected frees the work of the campaign or study it
entered (signals.participant_left with its scope). All of it is a few rows, so the answer is fast."""

import base64
import hashlib
import hmac
import json
import logging
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import DomainError, Forbidden
from core.validation import text_problem

from .models import (
    CrowdPlatform,
    CrowdWorker,
    PlatformSubmission,
    ProlificHookSecret,
    ProlificStudy,
    WebhookEvent,
)
from .signals import participant_left

log = logging.getLogger(__name__)

SIGNATURE = "X-Prolific-Request-Signature"
REQUEST_TIMESTAMP = "X-Prolific-Request-Timestamp"
EVENT_ID = "X-Event-ID"
EVENT_TIMESTAMP = "X-Timestamp"

# Submission statuses (the REST spelling) that give the place back: the stage frees the work.
RELEASING_STATUSES = {"RETURNED", "TIMED-OUT", "REJECTED"}
# For two events sent in the same second: a later stage of a submission's life wins.
STATUS_RANK = {"RESERVED": 0, "ACTIVE": 1, "PROCESSING": 1, "AWAITING REVIEW": 2, "PARTIALLY APPROVED": 3,
               "APPROVED": 3, "REJECTED": 3, "RETURNED": 3, "TIMED-OUT": 3, "SCREENED OUT": 3}
# Retries of a delivery signed before a secret rotation go on for about a day.
ROTATION_GRACE = timedelta(days=1)


def normalise_status(status) -> str:
    """The REST spelling (`AWAITING REVIEW`, `TIMED-OUT`) of any case, underscore or space variant."""
    words = " ".join(str(status or "").upper().replace("_", " ").split())
    return "TIMED-OUT" if words in ("TIMED OUT", "TIMED-OUT") else words


def unix_seconds(value) -> int | None:
    """A UNIX timestamp header in seconds (one in milliseconds is read as such); None if absent or bad."""
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError):
        return None
    return int(number / 1000 if number > 1e11 else number)


# --- Verifying -----------------------------------------------------------------------------------


def signing_secrets() -> list[str]:
    """The secrets a delivery may be signed with: the setting, the newest stored workspace secret and,
    for a day after a rotation, the one before it."""
    found = [settings.PROLIFIC_WEBHOOK_SECRET] if settings.PROLIFIC_WEBHOOK_SECRET else []
    stored = list(ProlificHookSecret.objects.order_by("-created_at", "-pk")[:2])
    if stored:
        found.append(stored[0].value)
        if len(stored) > 1 and timezone.now() - stored[0].created_at < ROTATION_GRACE:
            found.append(stored[1].value)
    return found


def _signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify_signature(body: bytes, timestamp: str, signature: str) -> str:
    """Which form of the body the signature matched: "raw" (the bytes as sent) or, failing that,
    "reserialised" (the body as the docs' Python example re-serialises it, logged). Forbidden if none."""
    secrets = signing_secrets()
    if not secrets:
        raise Forbidden("Webhooks are off: no Prolific workspace secret is set (PROLIFIC_WEBHOOK_SECRET or "
                        "manage.py prolific setup-hooks).", field="signature")
    if not timestamp or not signature:
        raise Forbidden(f"The delivery must carry {SIGNATURE} and {REQUEST_TIMESTAMP}.", field="signature")
    forms = [("raw", body)]
    try:
        forms.append(("reserialised", json.dumps(json.loads(body)).encode()))
    except ValueError:
        pass
    for name, form in forms:
        for secret in secrets:
            if hmac.compare_digest(_signature(secret, timestamp, form), signature):
                if name != "raw":
                    log.warning("Prolific webhook verified only over the re-serialised body")
                return name
    raise Forbidden("The webhook signature does not match.", field="signature")


def _event_id(headers) -> str:
    event_id = headers.get(EVENT_ID, "")
    if not event_id:
        raise DomainError(f"The delivery carries no {EVENT_ID} header.", field=EVENT_ID)
    limit = WebhookEvent._meta.get_field("event_id").max_length
    if len(event_id) > limit:
        raise DomainError(f"Must be at most {limit} characters.", field=EVENT_ID)
    reason = text_problem(event_id)
    if reason:
        raise DomainError(f"The event id {reason}.", field=EVENT_ID)
    return event_id


def _field(event: dict, name: str) -> str:
    value = event.get(name)
    if value is None:
        return ""
    if not isinstance(value, str | int) or isinstance(value, bool) or len(str(value)) > 100 or text_problem(str(value)):
        raise DomainError("Must be a string of at most 100 characters.", field=name)
    return str(value)


def receive(body: bytes, headers) -> bool:
    """A Prolific delivery, verified, recorded once and applied. False for a redelivery."""
    verified_by = verify_signature(body, headers.get(REQUEST_TIMESTAMP, ""), headers.get(SIGNATURE, ""))
    try:
        event = json.loads(body)
    except ValueError:
        raise DomainError("The body is not JSON.", field="body") from None
    if not isinstance(event, dict):
        raise DomainError("The body must be a JSON object.", field="body")
    event_id = _event_id(headers)
    signature = headers.get(SIGNATURE, "")[:100]
    signed_at = unix_seconds(headers.get(REQUEST_TIMESTAMP))
    sent_at = event_time(headers.get(EVENT_TIMESTAMP), signed_at)
    fields = {name: _field(event, name) for name in ("event_type", "resource_id", "participant_id")}
    if WebhookEvent.objects.filter(platform=CrowdPlatform.PROLIFIC, signature=signature).exists():
        return False  # this very delivery again (a replay under a new X-Event-ID): acknowledged, nothing changes
    try:
        with transaction.atomic():
            record = WebhookEvent.objects.create(
                platform=CrowdPlatform.PROLIFIC, event_id=event_id, event_type=fields["event_type"],
                resource_id=fields["resource_id"], sent_at=sent_at, verified_by=verified_by, payload=event,
                signature=signature, signed_at=signed_at,
            )
            applied = _apply(fields, event, sent_at)
            if not applied:
                record.stale = True
                record.save(update_fields=["stale"])
    except IntegrityError:
        return False  # the same X-Event-ID (or delivery) again: acknowledged, nothing changes
    return True


def event_time(event_timestamp, signed_at: int | None) -> int:
    """When the event happened, for ordering: X-Timestamp, which the signature does not cover, capped at
    the signed request timestamp (an event is not sent after its delivery was signed), so a replayed
    or edited delivery cannot claim to be newer than it was signed; the signed time where X-Timestamp
    is absent or bad; 0 (older than anything) with neither."""
    if signed_at is None:
        return 0
    claimed = unix_seconds(event_timestamp)
    return min(claimed, signed_at) if claimed is not None else signed_at


def _apply(fields: dict, event: dict, sent_at: int) -> bool:
    """Apply one event; False when it is older than the state already recorded."""
    kind = fields["event_type"]
    if kind == "submission.status.change" and fields["resource_id"]:
        return record_submission_status(fields["resource_id"], fields["participant_id"],
                                        normalise_status(event.get("status")), sent_at)
    if kind.startswith("study.") and fields["resource_id"]:
        return _record_study_event(fields["resource_id"], kind, event, sent_at)
    log.info("Prolific webhook of type %r recorded and not acted on", kind)
    return True


def _newer(old_at: int, old_status: str, new_at: int, new_status: str) -> bool:
    if new_at != old_at:
        return new_at > old_at
    return STATUS_RANK.get(new_status, 1) >= STATUS_RANK.get(old_status, 1)


def record_submission_status(submission_id: str, participant_id: str, status: str, sent_at: int, scope: str = "",
                             **learned: str) -> bool:
    """The submission's new status as of `sent_at` (an event's time, or when a sync asked for it), unless a
    newer one is recorded: one rule for webhooks and polling, so neither outranks the other and a status
    frees its work once, whichever source brings it first. RETURNED, TIMED-OUT and REJECTED tell the stage
    where the submission entered to free its work (every stage if nobody knows where). A sync also gives
    the `scope` it entered (kept once known) and what else it read (`learned`: study_id, entered_code),
    recorded whatever the order."""
    submission = (PlatformSubmission.objects.select_for_update()
                  .filter(platform=CrowdPlatform.PROLIFIC, submission_id=submission_id).first())
    if submission is None:
        worker = CrowdWorker.objects.filter(platform=CrowdPlatform.PROLIFIC, worker_id=participant_id).first()
        submission = PlatformSubmission(platform=CrowdPlatform.PROLIFIC, submission_id=submission_id, worker=worker)
    newer = not submission.status or _newer(submission.status_at, submission.status, sent_at, status)
    submission.scope = submission.scope or scope
    for name, value in learned.items():
        setattr(submission, name, value or getattr(submission, name))
    if not newer:
        if scope or learned:
            submission.save()
        return False
    submission.participant_id = participant_id or submission.participant_id
    changed = submission.status != status  # the same status again (the other source told it first): nothing to free
    submission.status, submission.status_at = status, sent_at
    submission.save()
    worker_id = submission.worker.worker_id if submission.worker else participant_id
    if status in RELEASING_STATUSES and worker_id and changed:
        if not submission.scope:
            log.warning("Prolific submission %s entered nowhere known: freeing its participant's work everywhere",
                        submission_id)
        participant_left.send(sender=PlatformSubmission, platform=CrowdPlatform.PROLIFIC, worker_id=worker_id,
                              scope=submission.scope or None)
    return True


def _record_study_event(study_id: str, kind: str, event: dict, sent_at: int) -> bool:
    study, _ = ProlificStudy.objects.select_for_update().get_or_create(prolific_id=study_id)
    if sent_at < study.status_at:
        return False
    study.last_event = {"event_type": kind, "metadata": event.get("metadata") or {}, "sent_at": sent_at}
    study.status_at = sent_at
    if kind == "study.status.change" and event.get("status"):
        study.status = normalise_status(event["status"])
    study.save()
    return True
