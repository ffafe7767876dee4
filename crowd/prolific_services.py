"""Running a campaign or study on Prolific through its API (crowd/prolific.py): publish it as a Prolific
study, sync its submissions, approve or reject them from the platform's own decisions (the payment
report's accepted work), pay bonuses from that report exactly once, message participants, and set the
workspace's webhook secret and subscriptions up. Stages describe what they run through a registered
`Target` (crowd imports no stage). Every verb takes `dry_run`: it answers what it would send. Sync, review
and pay run as core.Jobs (crowd/prolific_jobs.py): given `job_id`, they report each page or submission
to it and stop between them once it is cancelled."""

import itertools
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction

from core.errors import Conflict, DomainError
from core.jobs import advance_job, job_cancelled

from .models import CrowdPlatform, PlatformSubmission, ProlificBonus, ProlificHookSecret, ProlificStudy
from .prolific import ProlificClient, ProlificError, check_rejection
from .services import new_completion_code
from .webhooks import normalise_status, record_submission_status

log = logging.getLogger(__name__)

PLACEHOLDER_QUERY = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
HOOK_EVENTS = ("submission.status.change", "study.status.change", "study.progress.change",
               "study.has_high_return_rate")
PAY_ATTEMPTS = 3  # a 429 on the pay call: reconcile, then send again, at most this many times in all


@dataclass
class Target:
    """What a stage runs on Prolific: its name and text, where a participant enters, how many places,
    the reward (minor units, per participant), the minutes it takes, the payment report, and how the
    stage learns the study's completion code."""

    name: str
    description: str
    entry_path: str
    places: int
    reward_cents: int
    minutes: int
    payment_rows: Callable[[], list[dict]]
    use_completion_code: Callable[[str], None]
    return_code: str = ""


TARGETS: dict[str, Callable[[int], Target | None]] = {}


def register_target(room: str, describe: Callable[[int], Target | None]) -> None:
    """A stage says how to describe one of its campaigns or studies ("campaign", describe(pk))."""
    TARGETS[room] = describe


def target_of(scope: str) -> Target:
    room, _, pk = (scope or "").partition(":")
    if room not in TARGETS or not pk.isdigit():
        raise DomainError(f"Must be one of {', '.join(f'{r}:<id>' for r in sorted(TARGETS))}.", field="scope")
    target = TARGETS[room](int(pk))
    if target is None:
        raise DomainError(f"There is no {room} {pk}.", field="scope")
    return target


def study_of(scope: str) -> ProlificStudy:
    study = ProlificStudy.objects.filter(scope=scope).order_by("-created_at").first()
    if study is None:
        raise DomainError(f"{scope or 'This'} is not published on Prolific.", field="scope")
    return study


def _client(client):
    return client if client is not None else ProlificClient()


def _progress(job_id: int | None, **progress) -> None:
    if job_id is not None:
        advance_job(job_id, **progress)


def _cancelled(job_id: int | None) -> bool:
    return job_id is not None and job_cancelled(job_id)


# --- Publishing ----------------------------------------------------------------------------------


def study_payload(target: Target, scope: str, site_url: str, code: str) -> dict:
    """The draft study as Prolific's create-study documents it."""
    codes = [{"code": code, "code_type": "COMPLETED", "actor": "participant",
              "actions": [{"action": "MANUALLY_REVIEW"}]}]
    if target.return_code:
        codes.append({"code": target.return_code, "code_type": "OTHER", "actor": "participant",
                      "actions": [{"action": "REQUEST_RETURN", "return_reason": "You gave the work back."}]})
    return {
        "name": target.name, "internal_name": scope, "description": target.description or target.name,
        "external_study_url": f"{site_url.rstrip('/')}{target.entry_path}?{PLACEHOLDER_QUERY}",
        "prolific_id_option": "url_parameters", "completion_codes": codes,
        "total_available_places": target.places, "estimated_completion_time": target.minutes,
        "reward": target.reward_cents, "device_compatibility": ["desktop"], "filters": [],
    }


def publish(scope: str, site_url: str, dry_run: bool = False, client=None) -> dict:
    """Create the draft and publish it (two steps, as documented); the stage's participants are then
    sent back to Prolific with the study's completion code."""
    if not site_url.startswith(("https://", "http://")):
        raise DomainError("Give the site's public address, e.g. https://hypolab.example.org.", field="site_url")
    target = target_of(scope)
    if ProlificStudy.objects.filter(scope=scope).exists():
        raise Conflict(f"{scope} is already on Prolific as {study_of(scope).prolific_id}.", field="scope")
    code = new_completion_code()
    payload = study_payload(target, scope, site_url, code)
    if dry_run:
        return {"dry_run": True, "requests": [("POST", "studies/", payload),
                                              ("POST", "studies/<id>/transition/", {"action": "PUBLISH"})]}
    client = _client(client)
    created = client.create_study(payload)
    with transaction.atomic():
        study = ProlificStudy.objects.create(prolific_id=created["id"], scope=scope, name=target.name,
                                             status=created.get("status", "UNPUBLISHED"),
                                             reward_cents=target.reward_cents, completion_code=code)
        target.use_completion_code(code)
    published = client.transition_study(study.prolific_id, "PUBLISH")
    study.status = normalise_status(published.get("status", "ACTIVE"))
    study.save(update_fields=["status"])
    return {"study": study.prolific_id, "status": study.status, "completion_code": code}


# --- Submissions ---------------------------------------------------------------------------------


def sync_submissions(scope: str, dry_run: bool = False, client=None, job_id: int | None = None) -> dict:
    """Every submission of the study as Prolific has it now, recorded a page at a time, each status as of
    when its page was asked for, by the webhooks' own rule (webhooks.record_submission_status): an event
    of the same second that a page missed still wins, and a status either of them brings frees once."""
    study = study_of(scope)
    if dry_run:
        return {"dry_run": True, "requests": [("GET", f"submissions/?study={study.prolific_id}", None)]}
    pages, synced = _client(client).submission_pages(study.prolific_id), 0
    for page in itertools.count(1):
        asked_at = int(time.time())  # the page shows every change made before it was asked for
        rows, count = next(pages, (None, None))
        if rows is None:
            break
        _record_submissions(rows, study, scope, asked_at)
        synced += len(rows)
        _progress(job_id, done=synced, total=count, message=f"Page {page}: {synced} submissions synced")
        if _cancelled(job_id):
            break
    return {"submissions": synced}


def _record_submissions(rows: list[dict], study: ProlificStudy, scope: str, asked_at: int) -> None:
    with transaction.atomic():
        for row in rows:
            record_submission_status(row["id"], row.get("participant_id") or "", normalise_status(row.get("status")),
                                     asked_at, scope=scope, study_id=study.prolific_id,
                                     entered_code=row.get("study_code") or "")


def review(scope: str, reject_message: str = "", rejection_category: str = "", dry_run: bool = False,
           client=None, job_id: int | None = None) -> dict:
    """Approve each submission awaiting review whose participant has accepted work in the payment
    report; reject those whose work was all refused, when a category and a message of at least 100
    characters are given (checked before asking Prolific); leave the rest for later."""
    if reject_message or rejection_category:
        check_rejection(reject_message, rejection_category)
    target, study = target_of(scope), study_of(scope)
    client = None if dry_run else _client(client)
    if client is not None:
        _progress(job_id, message="Syncing submissions")
        sync_submissions(scope, client=client)
    rows = {row["worker_id"]: row for row in target.payment_rows() if row["platform"] == CrowdPlatform.PROLIFIC}
    plan = []
    for submission in _submissions(study).filter(status="AWAITING REVIEW", decision=""):
        row = rows.get(submission.participant_id)
        if row and int(row["accepted_units"]) > 0:
            plan.append((submission, "APPROVE"))
        elif row and int(row["submitted_units"]) > 0 and reject_message:
            plan.append((submission, "REJECT"))
    if dry_run:
        return {"dry_run": True, "requests": [
            ("POST", f"submissions/{s.submission_id}/transition/", _decision_body(a, reject_message, rejection_category))
            for s, a in plan]}
    _progress(job_id, done=0, total=len(plan), message=f"{len(plan)} submissions to decide")
    decided = []
    for submission, action in plan:  # one at a time: payment calls contend on the workspace wallet
        if _cancelled(job_id):
            break
        if action == "APPROVE":
            client.approve(submission.submission_id)
        else:
            client.reject(submission.submission_id, reject_message, rejection_category)
        submission.decision = action
        submission.save(update_fields=["decision", "updated_at"])
        decided.append(action)
        _progress(job_id, step=1, message=f"{submission.submission_id}: {action}")
    return {"approved": decided.count("APPROVE"), "rejected": decided.count("REJECT")}


def _decision_body(action: str, message: str, category: str) -> dict:
    if action == "APPROVE":
        return {"action": "APPROVE"}
    return {"action": "REJECT", "message": message, "rejection_category": category}


def _submissions(study: ProlificStudy):
    return PlatformSubmission.objects.filter(platform=CrowdPlatform.PROLIFIC, study_id=study.prolific_id)


# --- Bonuses -------------------------------------------------------------------------------------


def bonuses_owed(target: Target, study: ProlificStudy) -> dict[str, int]:
    """{participant id: bonus in cents}: what the payment report says each approved participant
    earned beyond the study's reward, for participants not bonused on this study yet."""
    approved = set(_submissions(study).filter(status="APPROVED").values_list("participant_id", flat=True))
    done = set(study.bonuses.values_list("participant_id", flat=True))
    owed = {}
    for row in target.payment_rows():
        cents = int(Decimal(row["amount_usd"]) * 100) - study.reward_cents
        if row["platform"] == CrowdPlatform.PROLIFIC and row["worker_id"] in approved - done and cents > 0:
            owed[row["worker_id"]] = cents
    return owed


def pay_bonuses(scope: str, dry_run: bool = False, client=None, sleep=time.sleep, job_id: int | None = None) -> dict:
    """Set the owed bonuses up as one bulk bonus and pay it once. The pay call is not idempotent (each
    call pays again), so the rows are recorded as sent before it is made; after a failure they are
    reconciled against the submissions' bonus_payments, and only a 429 (refused, nothing paid) whose
    bonuses are still missing is sent again. An unknown outcome (no answer) is left for `reconcile`.
    A job cancelled before the bonus is set up pays nothing; once set up, it is paid."""
    target, study = target_of(scope), study_of(scope)
    client = None if dry_run else _client(client)
    if client is not None:
        _progress(job_id, done=0, total=3, message="Syncing submissions")
        sync_submissions(scope, client=client)
        _progress(job_id, done=1, message="Reconciling bonuses sent before")
        reconcile_bonuses(study, client)
    owed = bonuses_owed(target, study)
    amounts = {pid: f"{Decimal(cents) / 100:.2f}" for pid, cents in owed.items()}
    if dry_run or not owed:
        return {"dry_run": dry_run, "bonuses": amounts}
    if _cancelled(job_id):
        return {"dry_run": False, "bonuses": {}}  # nothing set up, nothing paid
    _progress(job_id, done=2, message=f"Paying {len(owed)} bonuses")
    submission_of = dict(_submissions(study).values_list("participant_id", "submission_id"))
    with transaction.atomic():
        rows = [ProlificBonus.objects.create(study=study, participant_id=pid, amount_cents=cents,
                                             submission_id=submission_of.get(pid, ""))
                for pid, cents in owed.items()]
    try:
        bulk = client.set_up_bonuses(study.prolific_id, amounts)
    except ProlificError:
        ProlificBonus.objects.filter(pk__in=[r.pk for r in rows]).delete()  # nothing was set up
        raise
    pending = ProlificBonus.objects.filter(pk__in=[r.pk for r in rows])
    pending.update(bulk_id=bulk["id"], state=ProlificBonus.State.PAY_SENT)  # recorded before the call
    outcome = "sent"
    for attempt in range(1, PAY_ATTEMPTS + 1):
        try:
            client.pay_bonuses(bulk["id"])
            outcome = "sent"
            break
        except ProlificError as exc:
            reconcile_bonuses(study, client)
            outcome = f"unknown ({exc.message}): check the bonuses on Prolific before paying them by hand"
            if exc.status != 429 or not pending.exclude(state=ProlificBonus.State.PAID).exists():
                break
            if attempt == PAY_ATTEMPTS:
                raise
            sleep(random.uniform(0, 2 ** attempt))
    return {"bulk_bonus": bulk["id"], "bonuses": amounts, "pay": outcome}


def reconcile_bonuses(study: ProlificStudy, client) -> int:
    """Bonuses sent but not seen yet: those now in their submission's bonus_payments become PAID."""
    confirmed = 0
    for bonus in study.bonuses.filter(state=ProlificBonus.State.PAY_SENT).exclude(submission_id=""):
        paid = client.get_submission(bonus.submission_id).get("bonus_payments") or []
        if any(round(float(amount)) == bonus.amount_cents for amount in paid):
            bonus.state = ProlificBonus.State.PAID
            bonus.save(update_fields=["state", "updated_at"])
            confirmed += 1
    return confirmed


# --- Messages, hooks -----------------------------------------------------------------------------


def message(scope: str, participant_ids: list[str], body: str, dry_run: bool = False, client=None) -> dict:
    study = study_of(scope)
    if not (body or "").strip():
        raise DomainError("Write the message.", field="body")
    if not participant_ids:
        raise DomainError("Name at least one participant.", field="participant_ids")
    request = {"ids": participant_ids, "study_id": study.prolific_id, "body": body}
    if dry_run:
        return {"dry_run": True, "requests": [("POST", "messages/bulk/", request)]}
    _client(client).bulk_message(participant_ids, study.prolific_id, body)
    return {"sent": len(participant_ids)}


def set_up_hooks(workspace_id: str, target_url: str, dry_run: bool = False, client=None) -> dict:
    """A new workspace signing secret (it replaces the old one; the one before stays valid for a day,
    see webhooks.signing_secrets) and a confirmed subscription per event type to `target_url`."""
    if not workspace_id:
        raise DomainError("Give the Prolific workspace id.", field="workspace_id")
    if not target_url.startswith(("https://", "http://")):
        raise DomainError("Give the webhook's address (Prolific delivers only to public https:// ones).",
                          field="target_url")
    if dry_run:
        return {"dry_run": True, "requests": [("POST", "hooks/secrets/", {"workspace_id": workspace_id})] + [
            ("POST", "hooks/subscriptions/", {"workspace_id": workspace_id, "event_type": kind,
                                              "target_url": target_url}) for kind in HOOK_EVENTS]}
    client = _client(client)
    secret = client.create_secret(workspace_id)
    stored = ProlificHookSecret.objects.create(workspace_id=workspace_id, value=secret["value"])
    offered = set(client.event_types())
    stored.subscriptions = [client.subscribe(workspace_id, kind, target_url) for kind in HOOK_EVENTS
                            if kind in offered]
    stored.save(update_fields=["subscriptions"])
    return {"secret_id": secret.get("id", ""), "subscriptions": stored.subscriptions}
