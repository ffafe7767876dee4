"""A worker id bound to another platform session (services.SessionSquatted): the refused link is
recorded as a SessionConflict the participant can quote, and the admin resolves it (admin actions on
the conflicts, or these functions): release the binding, or reassign the id to the refused session."""

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from core.errors import Conflict

from .models import CrowdWorker, SessionConflict

DETACHED_PREFIX = "detached-"


# Open conflicts kept per worker id: a stranger trying session after made-up session counts on the
# newest instead of filling the admin's list.
MAX_OPEN_PER_ID = 5


def record(exc) -> SessionConflict:
    """Record (or count again) the refused link (`exc`, the services.SessionSquatted the entry raised);
    called after the entry's transaction rolled back."""
    ids, worker = exc.ids, exc.worker
    open_ones = SessionConflict.objects.filter(platform=ids["platform"], worker_id=ids["worker_id"], resolution="")
    if not open_ones.filter(refused_session_id=ids["session_id"]).exists() and open_ones.count() >= MAX_OPEN_PER_ID:
        newest = open_ones.order_by("-created_at", "-pk").first()
        SessionConflict.objects.filter(pk=newest.pk).update(attempts=F("attempts") + 1)
        return newest
    for _ in range(2):  # two refusals of the same link at once: the second counts on the first's row
        updated = SessionConflict.objects.filter(
            platform=ids["platform"], worker_id=ids["worker_id"], refused_session_id=ids["session_id"],
        ).update(attempts=F("attempts") + 1)
        if updated:
            return SessionConflict.objects.get(platform=ids["platform"], worker_id=ids["worker_id"],
                                               refused_session_id=ids["session_id"])
        try:
            with transaction.atomic():
                return SessionConflict.objects.create(
                    account=worker, platform=ids["platform"], worker_id=ids["worker_id"],
                    bound_session_id=worker.session_id, refused_session_id=ids["session_id"],
                    study_id=ids["study_id"], scope=exc.scope,
                )
        except IntegrityError:
            continue
    raise Conflict("Try the link again.", field="session")  # pragma: no cover - a third racer


def open_conflicts():
    return SessionConflict.objects.filter(resolution="").select_related("account__user").order_by("-created_at")


def _locked(conflict_id) -> tuple[SessionConflict, CrowdWorker | None]:
    conflict = SessionConflict.objects.select_for_update().get(pk=conflict_id)
    if conflict.resolution:
        raise Conflict(f"This conflict was already resolved ({conflict.get_resolution_display()}).",
                       field="conflict")
    worker = CrowdWorker.objects.select_for_update().filter(pk=conflict.account_id).first()
    return conflict, worker


def _resolve(conflict: SessionConflict, resolution: str, by) -> SessionConflict:
    conflict.resolution, conflict.resolved_at, conflict.resolved_by = resolution, timezone.now(), by
    conflict.save(update_fields=["resolution", "resolved_at", "resolved_by"])
    return conflict


@transaction.atomic
def release(conflict_id, by=None) -> SessionConflict:
    """The same person on a new session (a lost browser, a new attempt): the account keeps the id and
    the id's binding is cleared, so the refused link (or any next one) binds its session and signs in."""
    conflict, worker = _locked(conflict_id)
    if worker is not None:
        worker.session_id = ""
        worker.save(update_fields=["session_id"])
    return _resolve(conflict, SessionConflict.Resolution.RELEASED, by)


@transaction.atomic
def reassign(conflict_id, by=None) -> SessionConflict:
    """Someone else entered the id first: their account is detached from the id (renamed
    account and id renamed `detached-<n>-…`, signed in no more, its sessions kept for the record) and the id is free, so
    the refused link makes the real participant's own account."""
    conflict, worker = _locked(conflict_id)
    if worker is not None:
        detach(worker)
    return _resolve(conflict, SessionConflict.Resolution.REASSIGNED, by)


def detach(worker: CrowdWorker) -> None:
    """The account and its id renamed `detached-<n>-…` and switched off: the id is free for its owner."""
    worker.worker_id = f"{DETACHED_PREFIX}{worker.pk}-{worker.worker_id}"[:100]
    worker.session_id = ""
    worker.save(update_fields=["worker_id", "session_id"])
    user = worker.user  # the account's name comes from the id: freed with it
    user.username = f"{DETACHED_PREFIX}{worker.pk}-{user.username}"[:150]
    user.is_active = False
    user.save(update_fields=["username", "is_active"])
