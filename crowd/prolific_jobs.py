"""Prolific's bulk verbs (crowd.prolific_services: sync, review, pay) run as core.Jobs, one kind each.
Asking for the same verb on the same scope while its job is queued or running returns that job; once it
has ended, a new one is made (its key carries a fresh token, as request_job would return a done job
again). The job reports each page or submission, ends with the verb's answer as its report, fails with
Prolific's refusal as its reason, and stops between submissions when cancelled: there is no domain row
to move then, so no cancel handler. Sent to a task (crowd/tasks.py) by the API, run in-process by
`manage.py prolific`; a dry run is no job (it sends nothing)."""

import uuid

from django.db import transaction

from core.errors import DomainError
from core.jobs import fail_job, finish_job, request_job, running_job
from core.models import Job

from . import dispatch, prolific_services
from .models import ProlificStudy
from .prolific import ProlificClient, check_rejection

KINDS = {"sync": "prolific_sync", "review": "prolific_review", "pay": "prolific_pay"}
SUBJECTS = {"sync": "Sync the submissions", "review": "Approve and reject the submissions",
            "pay": "Pay the bonuses"}
SUBJECT_CHARS = Job._meta.get_field("subject").max_length


def start_prolific_job(verb: str, scope: str, user=None, *, options: dict | None = None, send: bool = True) -> Job:
    """The verb's job for `scope` (queued, and sent to a task once committed unless `send=False`: the
    caller runs it with `run_prolific_job`); while one is queued or running, that one. What would make
    it fail at once (no token, an unknown scope, a short rejection message) is refused now."""
    options = options or {}
    if options.get("reject_message") or options.get("rejection_category"):
        check_rejection(options.get("reject_message", ""), options.get("rejection_category", ""))
    ProlificClient()  # no token: refused here rather than as a failed job
    if verb != "sync":
        prolific_services.target_of(scope)
    prefix = f"{KINDS[verb]}:{scope}:"
    with transaction.atomic():
        # the study's row lock makes "is one queued or running?" and "make one" a single step
        study = ProlificStudy.objects.select_for_update().get(pk=prolific_services.study_of(scope).pk)
        current = Job.objects.filter(key__startswith=prefix, status__in=(Job.Status.QUEUED, Job.Status.RUNNING))
        if job := current.order_by("-pk").first():
            return job
        job = request_job(KINDS[verb], f"{prefix}{uuid.uuid4().hex}", user=user,
                          subject=f"{SUBJECTS[verb]} of {scope} ({study.prolific_id}) on Prolific"[:SUBJECT_CHARS]).job
        if send:
            transaction.on_commit(lambda: dispatch.send_prolific_job(job.pk, verb, scope, options))
    return job


def run_prolific_job(job_id: int, verb: str, scope: str, options: dict | None = None, client=None) -> Job | None:
    """The verb as its job; None when another delivery ran or runs it (do nothing). Prolific's refusal
    (or any DomainError) fails the job with its text as the reason."""
    options = options or {}
    with running_job(job_id, message="Asking Prolific") as job:
        if job is None:
            return None
        try:
            if verb == "sync":
                report = prolific_services.sync_submissions(scope, client=client, job_id=job_id)
            elif verb == "review":
                report = prolific_services.review(scope, options.get("reject_message", ""),
                                                  options.get("rejection_category", ""), client=client, job_id=job_id)
            else:
                report = prolific_services.pay_bonuses(scope, client=client, job_id=job_id)
        except DomainError as exc:
            return fail_job(job_id, exc.message)
        return finish_job(job_id, report, message=_summary(verb, report))


def _summary(verb: str, report: dict) -> str:
    if verb == "sync":
        return f"{report['submissions']} submissions synced"
    if verb == "review":
        return f"{report['approved']} approved, {report['rejected']} rejected"
    return f"Bonuses of {len(report['bonuses'])} participants: pay {report['pay']}" if report["bonuses"] \
        else "No bonus owed"
