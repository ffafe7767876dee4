"""Jobs: one record, one API, one progress stream for every long-running task of the platform.

A stage asks for a job by a key that says what would make two requests the same work
(`release:12:v3`, `stage:7`): asking again while it is queued, running or done returns the same job,
so a double click or a redelivered task never starts a second one; a failed job is queued again.
The task that does the work reports through `advance_job` and ends with `finish_job` or `fail_job`
(`running_job` does both around a block). Every change is pushed to the websocket group `job-<id>`
(core/consumers.py), which the progress widget (frontend/static/hypolab/job-progress.js) listens to."""

from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from core import roles
from core.broadcast import send_to_group
from core.errors import Forbidden, NotFound
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
    """The job for `key`, created queued if there is none; a failed one is queued again (its
    progress starts over, its report is kept until the new run writes one)."""
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
        elif job.status == Job.Status.FAILED:
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
    """Progress: `done` as a count, or `step` more done; `total` when it becomes known."""
    job = Job.objects.get(pk=job_id)
    if done is not None:
        job.done = done
    job.done += step
    if total is not None:
        job.total = total
    if message is not None:
        job.message = message[:MESSAGE_CHARS]
    Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(done=job.done, total=job.total,
                                                                     message=job.message, updated_at=timezone.now())
    _push(job)


def finish_job(job_id: int, report: dict | None = None, *, message: str = "") -> Job:
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
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
        if job.status == Job.Status.FAILED:
            return job
        job.move_to(Job.Status.FAILED)
        job.message, job.finished_at = reason[:MESSAGE_CHARS], timezone.now()
        if report is not None:
            job.report = report
        job.save(update_fields=["status", "message", "finished_at", "report"])
    _push(job)
    return job


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
