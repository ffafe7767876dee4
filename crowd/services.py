"""A crowd participant's way in and out, for every stage that takes them (annotation campaigns,
human-evaluation studies): the platform link signs them in to one account bound to their platform
session, the blocklist refuses some, they leave with a completion code (or the platform's return
code) and are paid per accepted unit. Each platform session is recorded with where it entered, so
a platform webhook (webhooks.py) frees only that work (signals.participant_left)."""

import csv
import io
import re
import secrets
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Case, Exists, OuterRef, When
from django.utils import timezone

from core import roles
from core import sql as core_sql
from core.errors import Conflict, DomainError, Forbidden

from . import prolific_entry
from .models import (
    BlockedWorker,
    CrowdPlatform,
    CrowdWorker,
    PlatformSubmission,
    ProlificStudy,
    SessionConflict,
)
from .signals import entry_taken_over, participant_left

PLATFORM_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")

# Other platforms' links (MTurk, CloudResearch Connect): the worker's id and the assignment they work
# on. Connect's link carries participantId, assignmentId and projectId (the earlier snake_case names
# still work for links already handed out).
WORKER_PARAMS = ("worker_id", "workerId", "participantId", "participant_id")
ASSIGNMENT_PARAMS = ("assignment_id", "assignmentId")
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"  # MTurk's assignment id while a HIT is only previewed
# Each id in words, for the worker who opened the link; the message names the link's parameter too, so
# the requester knows which one to fix (the page shows it as code: frontend's link_params filter).
ID_WORDS = {
    CrowdPlatform.PROLIFIC: {"worker_id": "Prolific participant id", "study_id": "Prolific study id",
                             "session_id": "Prolific session id"},
    CrowdPlatform.GENERIC: {"worker_id": "worker id", "session_id": "assignment id"},
}
LINK_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", *WORKER_PARAMS, *ASSIGNMENT_PARAMS)

# MTurk took no new customers from 30 July 2026 and AWS says it closes on 30 September 2026: its links
# keep working for work made before, and it is not offered for anything newer.
MTURK_CLOSED_TO_NEW = date(2026, 7, 30)
MTURK_NOTE = ("Closing: MTurk took no new customers from 30 July 2026 and closes for good on 30 September 2026 "
              "(mturk.com/help); export what you need before then.")


def offers_mturk(created_at) -> bool:
    """Whether a campaign or study made at `created_at` is still offered an MTurk link."""
    return created_at is not None and created_at.date() < MTURK_CLOSED_TO_NEW


# --- Arrival -------------------------------------------------------------------------------------


def parse_crowd_params(params) -> dict:
    """Read the platform ids from an entry URL's query: Prolific's PROLIFIC_PID, STUDY_ID and
    SESSION_ID, or another platform's worker id with its assignment id (MTurk `workerId` and
    `assignmentId`; CloudResearch Connect `participantId` and `assignmentId`, or the older
    `participant_id` and `assignment_id`). All of them are needed: the
    session (assignment) id is the credential, since a worker id is no secret. The field named in
    errors is the URL parameter."""
    if params.get("PROLIFIC_PID"):
        ids = {
            "platform": CrowdPlatform.PROLIFIC,
            "worker_id": params.get("PROLIFIC_PID", ""),
            "study_id": params.get("STUDY_ID", ""),
            "session_id": params.get("SESSION_ID", ""),
        }
        names = {"worker_id": "PROLIFIC_PID", "study_id": "STUDY_ID", "session_id": "SESSION_ID"}
    elif any(params.get(p) for p in WORKER_PARAMS):
        worker_param = next(p for p in WORKER_PARAMS if params.get(p))
        session_param = next((p for p in ASSIGNMENT_PARAMS if params.get(p)), "assignmentId")
        ids = {"platform": CrowdPlatform.GENERIC, "worker_id": params[worker_param], "study_id": "",
               "session_id": params.get(session_param, "")}
        names = {"worker_id": worker_param, "session_id": session_param}
    else:
        # Worded for the worker who opened it (the field names the URL parameter for whoever reads the API).
        raise DomainError("This link lacks the ids your crowd platform adds to it (Prolific's PROLIFIC_PID, "
                          "STUDY_ID and SESSION_ID; MTurk's workerId and assignmentId; CloudResearch's "
                          "participantId and assignmentId): open the study again from its page on Prolific, MTurk "
                          "or CloudResearch.", field="PROLIFIC_PID")
    for key, param in names.items():
        value, words = ids[key], ID_WORDS[ids["platform"]][key]
        if not value:
            raise DomainError(f"The link has no {words} ({param}): open it again from the study's page on your "
                              "platform.", field=param)
        if value == MTURK_PREVIEW:
            raise DomainError(f"Accept the HIT first: a preview has no {words} ({param}) to work on.", field=param)
        if not PLATFORM_ID.match(value):
            raise DomainError(f"The link's {words} ({param}) must be 1-100 letters, digits, '-' or '_'.",
                              field=param)
    return ids


def _session_param(ids: dict, params) -> str:
    if ids["platform"] == CrowdPlatform.PROLIFIC:
        return "SESSION_ID"
    return next((p for p in ASSIGNMENT_PARAMS if params.get(p)), "assignmentId")


class SessionSquatted(Forbidden):
    """A link whose worker id is bound to another platform session: nobody is signed in. The entry's
    transaction is rolled back; the page records the conflict for the admin (squatting.record)."""

    def __init__(self, worker: CrowdWorker, ids: dict, param: str, scope: str):
        words = ID_WORDS[ids["platform"]]
        super().__init__(
            f"This {words['worker_id']} is already in use by another session (a different {words['session_id']}, "
            f"{param}), so this link cannot sign you in. If you started in another browser, open the study "
            "there. Otherwise someone may have used your id: the researchers have been told and can give it "
            "back to you; contact them with the reference below.", field=param,
        )
        self.worker, self.ids, self.scope = worker, ids, scope


# --- One entry rule per study or campaign ------------------------------------------------------------


@dataclass(frozen=True)
class EntryRule:
    """What a scope's crowd links must be: `platform` (None: any platform's), the Prolific study ids its
    STUDY_ID must be one of (empty: not configured), and whether Prolific's API checks every entry."""

    platform: str | None
    study_ids: tuple[str, ...] = ()
    api: bool = False


def entry_rule(scope: str, declared: str = "") -> EntryRule:
    """The rule of `scope` (models.scope_key): the platform the stage declares for it (a study's
    `platform`), else Prolific when it is published on Prolific (a ProlificStudy of the scope) or, for a
    study, when PROLIFIC_API_TOKEN is set; else any platform's link."""
    study_ids = tuple(ProlificStudy.objects.filter(scope=scope).values_list("prolific_id", flat=True)) if scope else ()
    platform = declared or None
    if platform is None and (study_ids or (settings.PROLIFIC_API_TOKEN and scope.startswith("study:"))):
        platform = CrowdPlatform.PROLIFIC
    return EntryRule(platform, study_ids, platform == CrowdPlatform.PROLIFIC and bool(settings.PROLIFIC_API_TOKEN))


def link_prolific_study(scope: str, prolific_id: str) -> None:
    """The scope's Prolific study, as an admin names it (a study run on Prolific from a draft made there):
    its STUDY_ID is then the only one the scope's links may carry. A study another scope holds: 409."""
    if not PLATFORM_ID.match(prolific_id or ""):
        raise DomainError("A Prolific study id is 1-100 letters, digits, '-' or '_' (the STUDY_ID of its link).",
                          field="prolific_study_id")
    with transaction.atomic():
        study, created = ProlificStudy.objects.select_for_update().get_or_create(prolific_id=prolific_id,
                                                                                 defaults={"scope": scope})
        if not created and study.scope not in ("", scope):
            raise Conflict(f"Prolific study {prolific_id} is already linked to {study.scope}.",
                           field="prolific_study_id")
        if study.scope != scope:
            study.scope = scope
            study.save(update_fields=["scope"])


def check_link(params, rule: EntryRule) -> dict:
    """The link's ids under `rule`: another platform's parameters on a Prolific study (workerId,
    assignmentId, participantId...) or Prolific's on another platform's are refused (403), and a
    STUDY_ID must be one of the scope's Prolific studies where it has any."""
    if rule.platform == CrowdPlatform.PROLIFIC:
        foreign = next((p for p in (*WORKER_PARAMS, *ASSIGNMENT_PARAMS) if params.get(p)), None)
        if foreign or not params.get("PROLIFIC_PID"):
            raise Forbidden("This study is run on Prolific: open it from its page on Prolific (its link carries "
                            f"PROLIFIC_PID, STUDY_ID and SESSION_ID{f', not {foreign}' if foreign else ''}).",
                            field=foreign or "PROLIFIC_PID")
    elif rule.platform is not None and params.get("PROLIFIC_PID"):
        raise Forbidden("This study is not run on Prolific: open it from its page on your crowd platform.",
                        field="PROLIFIC_PID")
    ids = parse_crowd_params(params)
    if ids["platform"] == CrowdPlatform.PROLIFIC and rule.study_ids and ids["study_id"] not in rule.study_ids:
        raise Forbidden("This link is for another Prolific study (STUDY_ID): open the study from its page on "
                        "Prolific.", field="STUDY_ID")
    return ids


def enter_from_crowd_link(params, role: str, signed_in=None, scope: str = "", declared: str = "") -> tuple:
    """The link checked against the scope's entry rule (entry_rule: its platform's parameters only,
    its STUDY_ID, and Prolific's API where it is configured, asked before any transaction: a network
    call), then entered (enter_checked). Returns the account and whether this link just created it."""
    rule = entry_rule(scope, declared)
    ids = check_link(params, rule)
    return enter_checked(ids, params, role, signed_in=signed_in, scope=scope, verified=verify_link(ids, rule))


def verify_link(ids: dict, rule: EntryRule) -> bool:
    """Where the rule asks Prolific's API: whether it confirmed the link (False: it did not answer);
    Forbidden when it says the link holds no place (crowd.prolific_entry). False where no API is asked."""
    return bool(rule.api and ids["platform"] == CrowdPlatform.PROLIFIC and prolific_entry.verify(ids))


@transaction.atomic
def enter_checked(ids: dict, params, role: str, signed_in=None, scope: str = "", verified: bool = False) -> tuple:
    """One account per platform worker id, bound to the platform session it was first entered with
    (Prolific's SESSION_ID, the assignment id elsewhere): the same link again, from any browser, signs
    in to it. The worker id with another session: this browser already signed in to that account (the
    same worker arriving from their next study) moves the binding, as does a session Prolific's API
    confirmed (`verified`) when it confirmed the holder's too; a confirmed newcomer takes the id from an
    unconfirmed holder (take_over), as does, with no API to ask, a Prolific newcomer from a holder once
    (_contest); else nobody is signed in (403, SessionSquatted).
    `signed_in` is the browser's current user: an account that is not a crowd account (staff,
    reviewers, invited evaluators) is never replaced by a crowd link (409). First entries of one worker
    id at the same moment make one account: they queue on a lock of the id. `scope`
    (models.scope_key) is where the link leads: the platform session is recorded with it, so the
    platform's word about that session (a webhook) frees only that work. Returns the account and
    whether this link just created it."""
    current = None
    if signed_in is not None and signed_in.is_authenticated:
        current = identity_of(signed_in)
        if current is None:
            raise Conflict(
                f"You are signed in as {signed_in.get_username()}, so this crowd link did not sign you in as a "
                "participant. Sign out first, or open the link in a private window.", field="account",
            )
    # One identity per worker id, whichever parameter carries it: a PID sent as workerId (or
    # participant_id) finds the PROLIFIC_PID account, never a second one with a second session.
    core_sql.hold(f"crowd-entry:{ids['worker_id']}")
    worker = (
        CrowdWorker.objects.select_related("user")
        .filter(worker_id=ids["worker_id"])
        .order_by(Case(When(platform=ids["platform"], then=0), default=1), "pk")
        .first()
    )
    if worker is not None and ids["session_id"] != worker.session_id and worker.session_id:
        same_browser = current is not None and current.pk == worker.pk
        if not same_browser:
            verdict = _contest(worker, ids, verified)
            if verdict == "same person":
                same_browser = True
            elif verdict == "take over":
                take_over(worker, ids, scope, verified)
                worker = None
            else:
                raise SessionSquatted(worker, ids, _session_param(ids, params), scope)
    created = worker is None
    if created:
        try:
            with transaction.atomic():
                # No password given: create_user stores an unusable one.
                user = get_user_model().objects.create_user(username=f"{ids['platform']}-{ids['worker_id']}")
                worker = CrowdWorker.objects.create(user=user, **ids)
        except IntegrityError:  # the name is taken by an account made some other way
            raise Conflict("This participant id cannot be used here; contact the researchers.",
                           field="account") from None
        user.cached_role_names = frozenset()  # a new account is in no group; grant_role adds the role
    else:
        if ids["session_id"] != worker.session_id:
            # The same browser (or the same person, as Prolific says) on a new session, or an account made
            # before sessions were bound.
            worker.session_id = ids["session_id"]
            worker.study_id = ids["study_id"] or worker.study_id
            worker.save(update_fields=["session_id", "study_id"])
        # Its groups, read under the entry's lock: the role is granted only where missing, and the
        # names go with the account to the cache once it is signed in (core.auth.remember_signed_in).
        worker.user.cached_role_names = frozenset(worker.user.groups.values_list("name", flat=True))
    if role not in worker.user.cached_role_names:
        roles.grant_role(worker.user, role)
    _record_session(worker, ids, scope, verified)
    return worker.user, created


def _contest(worker: CrowdWorker, ids: dict, verified: bool) -> str:
    """A worker id bound to another session: "same person" (Prolific's API confirmed both sessions
    are this participant's), "take over" (it confirmed the newcomer and not the holder; or, with no API
    token, a Prolific newcomer on an id never handed over before) or "refuse" (another platform's link,
    or a newcomer nobody confirmed: the admin decides, crowd.squatting)."""
    if ids["platform"] != worker.platform:
        return "refuse"  # another platform's parameters never take an id over
    holder_verified = PlatformSubmission.objects.filter(
        platform=worker.platform, submission_id=worker.session_id, verified=True).exists()
    if verified:
        return "same person" if holder_verified else "take over"
    if ids["platform"] == CrowdPlatform.PROLIFIC and not settings.PROLIFIC_API_TOKEN and not holder_verified \
            and not SessionConflict.objects.filter(platform=ids["platform"], worker_id=ids["worker_id"],
                                                   resolution=SessionConflict.Resolution.REASSIGNED).exists():
        # No API to ask (docs/DECISIONS.md): the id holds one place, so its newest Prolific session
        # takes it over once, ending the earlier one; after that the admin decides.
        return "take over"
    # Unconfirmed, the two are alike (who came first says nothing of who is real): the admin decides.
    return "refuse"


def take_over(worker: CrowdWorker, ids: dict, scope: str, verified: bool) -> None:
    """The id's holder is taken to be someone else's stand-in (Prolific confirmed the newcomer, or with
    no API to ask, the newcomer is the id's newest session): recorded as a conflict reassigned by the
    entry itself; the holder's work is freed (signals.participant_left), its sessions ended and
    flagged (signals.entry_taken_over) and its account detached from the id (squatting.detach)."""
    from . import squatting

    SessionConflict.objects.update_or_create(
        platform=ids["platform"], worker_id=ids["worker_id"], refused_session_id=ids["session_id"],
        defaults={"account": worker, "bound_session_id": worker.session_id, "study_id": ids["study_id"],
                  "scope": scope, "resolution": SessionConflict.Resolution.REASSIGNED,
                  "resolved_at": timezone.now(), "resolved_by": None},
    )
    participant_left.send(sender=CrowdWorker, platform=worker.platform, worker_id=worker.worker_id, scope=None)
    reason = (f"its id was taken over by the participant's own link (session {ids['session_id']})" if verified else
              f"not checked against Prolific: its id was entered again with another session ({ids['session_id']})")
    entry_taken_over.send(sender=CrowdWorker, user_id=worker.user_id, worker_id=worker.worker_id, reason=reason)
    squatting.detach(worker)


def _record_session(worker: CrowdWorker, ids: dict, scope: str, verified: bool = False) -> None:
    """The platform session (Prolific's submission) this link entered, where it entered, and whether
    Prolific's API confirmed it."""
    # One INSERT .. ON CONFLICT DO NOTHING, then the scope of a row that had none: no read first and
    # no savepoint, on every arrival.
    PlatformSubmission.objects.bulk_create([PlatformSubmission(
        platform=ids["platform"], submission_id=ids["session_id"], worker=worker, participant_id=ids["worker_id"],
        study_id=ids["study_id"], scope=scope, verified=verified,
    )], ignore_conflicts=True)
    if verified:
        PlatformSubmission.objects.filter(platform=ids["platform"], submission_id=ids["session_id"],
                                          verified=False).update(verified=True, updated_at=timezone.now())
    if scope:
        PlatformSubmission.objects.filter(platform=ids["platform"], submission_id=ids["session_id"], scope="").update(
            scope=scope, updated_at=timezone.now())


def identity_of(user) -> CrowdWorker | None:
    """The platform identity behind an account; None for accounts made some other way."""
    return CrowdWorker.objects.filter(user_id=user.pk).first()


def is_crowd_worker(user) -> bool:
    return CrowdWorker.objects.filter(user_id=user.pk).exists()


def is_blocked(user, scope: str) -> bool:
    """Whether the account's platform identity is blocked in `scope` (models.scope_key) or everywhere."""
    identity = CrowdWorker.objects.filter(user_id=user.pk, worker_id=OuterRef("worker_id"))  # on any platform
    return BlockedWorker.objects.filter(Exists(identity), scope__in=["", scope]).exists()


# --- Leaving -------------------------------------------------------------------------------------


def new_completion_code() -> str:
    return "CQA_" + secrets.token_hex(5).upper()


def platform_completion_url(identity: CrowdWorker | None, code: str) -> str | None:
    """Where a participant returns to with `code` on their platform (Prolific); None for paste-back
    platforms and for accounts with no platform identity."""
    if identity is not None and identity.platform == CrowdPlatform.PROLIFIC:
        return settings.PROLIFIC_COMPLETION_URL.format(code=code)
    return None


def completion_url(user, code: str) -> str | None:
    return platform_completion_url(identity_of(user), code)


# --- Payment -------------------------------------------------------------------------------------


def amount_usd(pay_cents: int, pay_unit: int, accepted_units: int) -> str:
    """Pay for `accepted_units` at `pay_cents` per `pay_unit` units, pro rata to the cent."""
    per_unit = Decimal(pay_cents) / Decimal(100) / Decimal(pay_unit)
    return str((per_unit * accepted_units).quantize(Decimal("0.01"), ROUND_HALF_UP))


PAYMENT_COLUMNS = ["platform", "worker_id", "study_id", "submitted_units", "accepted_units", "amount_usd"]


def payment_report(work: dict[int, tuple[int, int]], pay_cents: int, pay_unit: int) -> list[dict]:
    """One row per account of `work` ({user id: (submitted units, accepted units)}), named by its
    platform identity (the account id for accounts with none), sorted by platform and worker id."""
    identities = {c.user_id: c for c in CrowdWorker.objects.filter(user_id__in=list(work))}
    rows = []
    for user_id, (submitted, accepted) in work.items():
        identity = identities.get(user_id)
        rows.append({
            "platform": identity.platform if identity else "",
            "worker_id": identity.worker_id if identity else str(user_id),
            "study_id": identity.study_id if identity else "",
            "submitted_units": submitted, "accepted_units": accepted,
            "amount_usd": amount_usd(pay_cents, pay_unit, accepted),
        })
    return sorted(rows, key=lambda row: (row["platform"], row["worker_id"]))


def payment_csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=PAYMENT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
