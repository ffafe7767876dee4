"""Who holds a study's places, checked against Prolific (where PROLIFIC_API_TOKEN is set): every
session entered with a Prolific link must have its submission (SESSION_ID) in Prolific's list of the
study's submissions, for the same participant, in a status that holds a place. A session with no such
submission (a made-up PID or SESSION_ID) or whose submission was returned, rejected or timed out is
ended now, so its unanswered items go back to the pool, and flagged: its submission row records why
(PlatformSubmission.status) and the report lists it. A check is a core.Job ("prolific_places", linked
as the study's `places_check`), started from the study's settings page or run by
`manage.py check_prolific_places`, reported a session at a time and stopped between sessions when
cancelled."""

import time
import uuid

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.errors import Conflict, NotFound
from core.jobs import advance_job, finish_job, job_cancelled, request_job, running_job
from core.models import Job
from crowd.models import CrowdPlatform, CrowdWorker, PlatformSubmission, ProlificStudy
from crowd.prolific import ProlificClient
from crowd.prolific_entry import FREED
from crowd.webhooks import normalise_status

from .. import dispatch
from ..models import EvalSession, Study

NOT_ON_PROLIFIC = "NOT ON PROLIFIC"  # recorded on a submission row Prolific does not know


def enabled() -> bool:
    return bool(settings.PROLIFIC_API_TOKEN)


def start_places_check(study_id: int, user, *, send: bool = True) -> Job:
    """The study's check as a new job, linked as its `places_check` and sent once committed (`send=False`:
    the caller runs it, `run_places_check`); while one is queued or running, that one."""
    if not enabled():
        raise Conflict("Set PROLIFIC_API_TOKEN to check places against Prolific.", field="prolific")
    with transaction.atomic():
        study = Study.objects.select_for_update().filter(pk=study_id).first()
        if study is None:
            raise NotFound("No such study.", field="study")
        if study.places_check is not None and study.places_check.status in (Job.Status.QUEUED, Job.Status.RUNNING):
            return study.places_check
        study.places_check = request_job("prolific_places", f"prolific-places:{study.pk}:{uuid.uuid4().hex}",
                                         subject=f"Places of “{study.name}” on Prolific"[:200], user=user).job
        study.save(update_fields=["places_check"])
        if send:
            transaction.on_commit(lambda: dispatch.send_places_check(study.places_check_id, study.pk))
    return study.places_check


def run_places_check(job_id: int, study_id: int, client=None) -> None:
    """The check as its job; what it found as the report. A redelivered message of a job that ran or
    runs does nothing."""
    with running_job(job_id, message="Reading Prolific's submissions") as job:
        if job is not None:
            report = check_places(study_id, client, job_id=job_id)
            finish_job(job_id, report, message=f"{report['holding']} of {report['checked']} sessions hold a place")


def check_places(study_id: int, client=None, job_id: int | None = None) -> dict:
    """Compare the study's Prolific entries with Prolific's submissions; end and flag those that hold no
    place there. Returns {"checked", "holding", "flagged": [{"session", "participant", "submission",
    "reason"}]}. With `job_id`, each session is reported to that job, and the check stops between
    sessions once it is cancelled."""
    if not enabled() and client is None:
        raise Conflict("Set PROLIFIC_API_TOKEN to check places against Prolific.", field="prolific")
    scope = f"study:{study_id}"
    entries = list(PlatformSubmission.objects.filter(scope=scope).select_related("worker"))
    configured = set(ProlificStudy.objects.filter(scope=scope).values_list("prolific_id", flat=True))
    # The study's own Prolific ids where it has any; else those its entries named.
    prolific_ids = configured or {e.study_id for e in entries if e.study_id and e.platform == CrowdPlatform.PROLIFIC}
    client = client or ProlificClient()
    listed = {}
    for prolific_id in sorted(prolific_ids):
        listed |= {row["id"]: row for row in client.submissions(prolific_id)}
    # Every crowd account with a session here, whichever platform's link it came by.
    workers = {w.user_id: w for w in CrowdWorker.objects.filter(user__eval_sessions__study_id=study_id)}
    by_worker = {}
    for entry in entries:
        if entry.worker_id is not None:
            by_worker.setdefault(entry.worker_id, []).append(entry)
    flagged, holding, now = [], 0, timezone.now()
    sessions = list(EvalSession.objects.filter(study_id=study_id, participant_id__in=list(workers)).order_by("pk"))
    for done, session in enumerate(sessions):
        if job_id is not None:
            if job_cancelled(job_id):
                break
            advance_job(job_id, done=done, total=len(sessions), message="Checking sessions")
        worker = workers[session.participant_id]
        reason, entry = _verdict(by_worker.get(worker.pk, []), listed, worker)
        if reason is None:
            holding += 1
            continue
        with transaction.atomic():
            if session.status == EvalSession.Status.ACTIVE and session.deadline > now:
                EvalSession.objects.filter(pk=session.pk).update(deadline=now)  # its places go back
            if reason.startswith("not on Prolific"):  # no place and no part in the human row
                EvalSession.objects.filter(pk=session.pk, flagged="").update(flagged=reason[:200])
            if entry is not None and reason.startswith("not on Prolific"):
                PlatformSubmission.objects.filter(pk=entry.pk).update(status=NOT_ON_PROLIFIC,
                                                                      status_at=int(time.time()))
        flagged.append({"session": session.pk, "participant": worker.worker_id,
                        "submission": entry.submission_id if entry else "", "reason": reason})
    return {"checked": len(flagged) + holding, "holding": holding, "flagged": flagged}


def _verdict(entries: list[PlatformSubmission], listed: dict, worker: CrowdWorker):
    """Why the worker's entries hold no place (None: one does), with the entry it is about."""
    if worker.platform != CrowdPlatform.PROLIFIC:
        return "not on Prolific: entered with another platform's ids", (entries[-1] if entries else None)
    if not entries:
        return "not on Prolific: the session was entered with no Prolific session id", None
    for entry in entries:
        row = listed.get(entry.submission_id)
        if row is not None and row.get("participant_id") == worker.worker_id \
                and normalise_status(row.get("status")) not in FREED:
            return None, entry
    entry = entries[-1]
    row = listed.get(entry.submission_id)
    if row is None:
        return "not on Prolific: Prolific lists no submission with this session id", entry
    if row.get("participant_id") != worker.worker_id:
        return "not on Prolific: the submission belongs to another participant", entry
    return f"the submission is {normalise_status(row.get('status')).lower()} on Prolific", entry
