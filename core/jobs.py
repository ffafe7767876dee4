"""Jobs: one record, one API, one progress stream for every long-running task of the platform.

A stage asks for a job by a key that says what would make two requests the same work
(`release:12:v3`, `stage:7`): asking again while it is queued, running or done returns the same job,
so a double click or a redelivered task never starts a second one; a failed job is queued again.
The task that does the work reports through `advance_job` and ends with `finish_job` or `fail_job`
(`running_job` does both around a block). Who asked for a job, or an admin, may cancel it while it is
queued or running (`cancel_job`): the handler its kind registered with `on_cancel` stops the domain
work in the same transaction, and the task, checking `job_cancelled` between its steps, just stops;
its later progress and its end change nothing. A task's long loops call `beat_job` between progress
reports; a running job silent for its kind's stale limit lost its worker and is failed by the sweep
(`fail_stalled_jobs`, beat every 10 s), running the handler its kind registered with `on_stall`.
Every change is pushed to the websocket group `job-<id>`
(core/consumers.py), which the progress widget (frontend/static/hypolab/job-progress.js) listens to."""

import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from core import roles
from core.broadcast import send_to_group
from core.errors import Forbidden, IllegalTransition, NotFound
from core.models import Job
from core.sql import stamp_outside_transaction

MESSAGE_CHARS = Job._meta.get_field("message").max_length
# A beat is one UPDATE; a loop may call beat_job every turn and writes at most one per BEAT_EVERY_S.
BEAT_EVERY_S = 5.0
_last_beat: dict[int, float] = {}  # job id -> time.monotonic() of this process's last beat


def job_group(job_id: int) -> str:
    return f"job-{job_id}"


def job_state(job: Job) -> dict:
    """What the API, the websocket and the widget show of a job."""
    percent = None
    if job.total:
        percent = round(100 * min(job.done, job.total) / job.total, 1)
    elif job.status == Job.Status.DONE:
        percent = 100.0
    return {
        "id": job.pk, "kind": job.kind, "key": job.key, "subject": job.subject, "status": job.status,
        "done": job.done, "total": job.total, "percent": percent, "message": job.message,
        "report": job.report, "created_at": job.created_at, "started_at": job.started_at,
        "finished_at": job.finished_at,
    }


def _push(job: Job) -> None:
    state = job_state(job)
    for moment in ("created_at", "started_at", "finished_at"):
        state[moment] = state[moment].isoformat() if state[moment] else None
    send_to_group(job_group(job.pk), {"type": "job.state", "state": state})


@dataclass(frozen=True)
class Requested:
    job: Job
    created: bool  # False: the same work was asked for before (queued, running or done)


def request_job(kind: str, key: str, *, subject: str = "", total: int | None = None, user=None) -> Requested:
    """The job for `key`, created queued if there is none; a failed or cancelled one is queued again
    (its progress starts over, its report is kept until the new run writes one)."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(key=key).first()
        if job is None:
            try:
                with transaction.atomic():
                    job = Job.objects.create(kind=kind, key=key, subject=subject, total=total,
                                             created_by=user if user is not None and user.is_authenticated else None)
            except IntegrityError:  # asked for at the same moment elsewhere
                return Requested(Job.objects.get(key=key), created=False)
            created = True
        elif job.status in (Job.Status.FAILED, Job.Status.CANCELLED):
            job.move_to(Job.Status.QUEUED)
            job.done, job.total, job.message = 0, total, ""
            job.started_at = job.finished_at = None
            job.save(update_fields=["status", "done", "total", "message", "started_at", "finished_at"])
            created = True
        else:
            created = False
    if created:
        transaction.on_commit(lambda: _push(job))
    return Requested(job, created)


def start_job(job_id: int, *, total: int | None = None, message: str = "") -> Job | None:
    """Mark the job running; None when it is already running or done (a redelivered task: do nothing)."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.status != Job.Status.QUEUED:
            return None
        job.move_to(Job.Status.RUNNING)
        job.started_at = timezone.now()
        job.message = message[:MESSAGE_CHARS]
        if total is not None:
            job.total = total
        # its first sign of life: a job queued for longer than its stale limit is not stale on starting
        job.save(update_fields=["status", "started_at", "message", "total", "updated_at"])
    _push(job)
    return job


def advance_job(job_id: int, *, done: int | None = None, total: int | None = None, step: int = 0,
                message: str | None = None) -> None:
    """Progress: `done` as a count, or `step` more done; `total` when it becomes known. Only a running
    job moves: progress reported after a cancel changes nothing."""
    job = Job.objects.get(pk=job_id)
    if done is not None:
        job.done = done
    job.done += step
    if total is not None:
        job.total = total
    if message is not None:
        job.message = message[:MESSAGE_CHARS]
    if Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(
            done=job.done, total=job.total, message=job.message, updated_at=timezone.now()):
        _push(job)


def finish_job(job_id: int, report: dict | None = None, *, message: str = "") -> Job:
    """End the job done; a job cancelled meanwhile stays cancelled (its task just stops), and one the
    stall sweep failed stays failed (what it wrote is kept: asking again finishes the rest)."""
    _last_beat.pop(job_id, None)
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.status != Job.Status.RUNNING:
            return job
        job.move_to(Job.Status.DONE)
        if job.total is not None:
            job.done = job.total
        job.report, job.message, job.finished_at = report or {}, message[:MESSAGE_CHARS], timezone.now()
        job.save(update_fields=["status", "done", "report", "message", "finished_at"])
    _push(job)
    return job


def fail_job(job_id: int, reason: str, report: dict | None = None) -> Job:
    _last_beat.pop(job_id, None)
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.status in (Job.Status.FAILED, Job.Status.CANCELLED):
            return job
        job.move_to(Job.Status.FAILED)
        job.message, job.finished_at = reason[:MESSAGE_CHARS], timezone.now()
        if report is not None:
            job.report = report
        job.save(update_fields=["status", "message", "finished_at", "report"])
    _push(job)
    return job


ENDED = (Job.Status.DONE, Job.Status.FAILED, Job.Status.CANCELLED)

# kind -> what stops that kind's domain work when its job is cancelled (registered in AppConfig.ready)
_cancel_handlers: dict[str, Callable[[Job], None]] = {}


def on_cancel(kind: str, handler: Callable[[Job], None]) -> None:
    """Register what stops the domain work of jobs of `kind` when one is cancelled: handler(job) runs
    in the cancel's transaction, after the job has moved (the domain row moves with it or not at all)."""
    _cancel_handlers[kind] = handler


def cancel_job(job_id: int, user) -> Job:
    """Cancel a queued or running job that `user` may see (NotFound otherwise); IllegalTransition (409)
    when it has already ended. Its task notices through `job_cancelled` and stops."""
    job_for(user, job_id)
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.status in ENDED:
            raise IllegalTransition(f"This job has already ended ({job.get_status_display().lower()}): "
                                    "there is nothing to cancel.", field="status")
        job.move_to(Job.Status.CANCELLED)
        job.message = f"Cancelled by {user.get_username()}."[:MESSAGE_CHARS]
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "message", "finished_at"])
        if handler := _cancel_handlers.get(job.kind):
            handler(job)
        transaction.on_commit(lambda: _push(job))
    return job


def job_cancelled(job_id: int) -> bool:
    """For a task between its steps: has its job been cancelled (stop, report nothing more)?"""
    return Job.objects.filter(pk=job_id, status=Job.Status.CANCELLED).exists()


def beat_job(job_id: int | None) -> None:
    """A sign of life from a running job's worker between progress reports (a long loop calls it at each
    turn; one stamp per BEAT_EVERY_S at most): stamps `updated_at`, which the stall sweep measures from.
    Inside a transaction on PostgreSQL (a freeze, a format step) it stamps on a connection of its own,
    so the sweep sees it at once rather than at commit, and the job's row is not held locked."""
    if job_id is None:
        return
    now = time.monotonic()
    if now - _last_beat.get(job_id, float("-inf")) < BEAT_EVERY_S:
        return
    _last_beat[job_id] = now
    if not (connection.in_atomic_block and connection.vendor == "postgresql"):
        # SQLite: one writer at a time, and no worker beside the web process to sweep it
        Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(updated_at=timezone.now())
        return
    stamp_outside_transaction(Job._meta.db_table, job_id, Job.Status.RUNNING.value, timezone.now())


@dataclass(frozen=True)
class StallRule:
    handler: Callable[[Job], None]
    stale_after_s: Callable[[], float]  # read at each sweep (a setting)


# kind -> what its stale limit is and what ends its domain work when the sweep fails a job of it
_stall_rules: dict[str, StallRule] = {}


def on_stall(kind: str, handler: Callable[[Job], None], *, stale_after_s: Callable[[], float]) -> None:
    """Register, for jobs of `kind`, how long a running one may stay silent (`stale_after_s()` seconds
    since its last beat or progress, when shorter than the sweep's own limit) and what ends its domain
    work when the sweep fails it:
    handler(job) runs in the failing transaction, after the job has moved."""
    _stall_rules[kind] = StallRule(handler, stale_after_s)


def fail_stalled_jobs(stale_after_s: float) -> list[int]:
    """Fail the running jobs that gave no sign of life for `stale_after_s`, or for their kind's shorter
    limit (a kind that beats as it works): their worker died (a redelivered task finds them running and
    skips them), so asking for them again re-runs them."""
    now = timezone.now()
    limits = {kind: min(rule.stale_after_s(), stale_after_s) for kind, rule in _stall_rules.items()}

    def silent(kind: str | None = None) -> Q:
        if kind is None:  # the kinds without a limit of their own
            return ~Q(kind__in=list(limits)) & Q(updated_at__lt=now - timedelta(seconds=stale_after_s))
        return Q(kind=kind, updated_at__lt=now - timedelta(seconds=limits[kind]))

    stalled = silent()
    for kind in limits:
        stalled |= silent(kind)
    failed = []
    for job_id, kind in Job.objects.filter(stalled, status=Job.Status.RUNNING).values_list("pk", "kind"):
        with transaction.atomic():
            # still running and still silent under the lock: it may have beaten or finished since the list
            # was read; a row another transaction is changing is not waited for (the next sweep sees it)
            job = Job.objects.select_for_update(skip_locked=True).filter(
                silent(kind if kind in limits else None), pk=job_id, status=Job.Status.RUNNING).first()
            if job is None:
                continue
            limit = limits.get(kind, stale_after_s)
            job = fail_job(job_id, f"No sign of life for {round(limit)} s: its worker stopped. Run it again.")
            if kind in limits:
                _stall_rules[kind].handler(job)
            failed.append(job_id)
    return failed


@contextmanager
def running_job(job_id: int, *, total: int | None = None, message: str = ""):
    """Run a block as the job: yields the running job (None when another delivery already ran or runs
    it: skip the work), fails it with the error's text when the block raises (and re-raises)."""
    job = start_job(job_id, total=total, message=message)
    if job is None:
        yield None
        return
    try:
        yield job
    except Exception as exc:
        fail_job(job_id, f"{type(exc).__name__}: {exc}")
        raise


def visible_jobs(user):
    """Admins see every job; reviewers the jobs they asked for; nobody else any."""
    if roles.has_role(user, roles.ADMIN):
        return Job.objects.all()
    if roles.has_role(user, roles.REVIEWER):
        return Job.objects.filter(created_by=user)
    raise Forbidden("Only reviewers and admins can see jobs.")


def job_for(user, job_id: int) -> Job:
    job = visible_jobs(user).filter(pk=job_id).first()
    if job is None:
        raise NotFound("No such job.")
    return job
