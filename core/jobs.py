"""Jobs: one record, one API, one progress stream for every long-running task of the platform.

A stage asks for a job by a key that says what would make two requests the same work
(`release:12:v3`, `stage:7`): asking again while it is queued, running or done returns the same job,
so a double click or a redelivered task never starts a second one; a failed job is queued again.
The task that does the work reports through `advance_job` and ends with `finish_job` or `fail_job`
(`running_job` does both around a block). Who asked for a job, or an admin, may cancel it while it is
queued or running (`cancel_job`): the handler its kind registered with `on_cancel` stops the domain
work in the same transaction, and the task, checking `job_cancelled` between its steps, just stops;
its later progress and its end change nothing. Every change is pushed to the websocket group `job-<id>`
(core/consumers.py), which the progress widget (frontend/static/hypolab/job-progress.js) listens to."""

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from core import roles
from core.broadcast import send_to_group
from core.errors import Forbidden, IllegalTransition, NotFound
from core.models import Job

MESSAGE_CHARS = Job._meta.get_field("message").max_length


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
        job.save(update_fields=["status", "started_at", "message", "total"])
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
    """End the job done; a job cancelled meanwhile stays cancelled (its task just stops)."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.status == Job.Status.CANCELLED:
            return job
        job.move_to(Job.Status.DONE)
        if job.total is not None:
            job.done = job.total
        job.report, job.message, job.finished_at = report or {}, message[:MESSAGE_CHARS], timezone.now()
        job.save(update_fields=["status", "done", "report", "message", "finished_at"])
    _push(job)
    return job


def fail_job(job_id: int, reason: str, report: dict | None = None) -> Job:
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


def fail_stalled_jobs(stale_after_s: float) -> list[int]:
    """Fail the running jobs that reported nothing for `stale_after_s` seconds: their worker died
    (a redelivered task finds them running and skips them), so asking for them again re-runs them."""
    cutoff = timezone.now() - timedelta(seconds=stale_after_s)
    failed = []
    for job_id in Job.objects.filter(status=Job.Status.RUNNING, updated_at__lt=cutoff).values_list("pk", flat=True):
        with transaction.atomic():
            # still running and still silent under the lock: it may have finished since the list was read
            if Job.objects.select_for_update().filter(pk=job_id, status=Job.Status.RUNNING,
                                                      updated_at__lt=cutoff).exists():
                failed.append(job_id)
                fail_job(job_id, f"No progress for {round(stale_after_s)} s: its worker stopped. Run it again.")
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
