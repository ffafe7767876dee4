"""The life of an assignment: a crowd worker arrives from a platform link, leases a scene,
writes a context change that the server checks, submits, and leaves with a completion code."""

import re
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from benchmarks import roles
from benchmarks.errors import Conflict, DomainError, Forbidden, NotFound
from benchmarks.models import ChangeType, ContextChange, Scene

from .models import Assignment, Campaign, CrowdPlatform, CrowdWorker

PLATFORM_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def parse_crowd_params(params) -> dict:
    """Read the platform ids from an entry URL's query; the field named in errors is the URL parameter."""
    if params.get("PROLIFIC_PID"):
        ids = {
            "platform": CrowdPlatform.PROLIFIC,
            "worker_id": params.get("PROLIFIC_PID", ""),
            "study_id": params.get("STUDY_ID", ""),
            "session_id": params.get("SESSION_ID", ""),
        }
        names = {"worker_id": "PROLIFIC_PID", "study_id": "STUDY_ID", "session_id": "SESSION_ID"}
    elif params.get("worker_id"):
        ids = {"platform": CrowdPlatform.GENERIC, "worker_id": params["worker_id"], "study_id": "", "session_id": ""}
        names = {"worker_id": "worker_id"}
    else:
        raise DomainError("The link must carry PROLIFIC_PID (with STUDY_ID and SESSION_ID) or worker_id.",
                          field="PROLIFIC_PID")
    for key, param in names.items():
        value = ids[key]
        if key == "worker_id" or value:
            if not PLATFORM_ID.match(value):
                raise DomainError("Must be 1-100 letters, digits, '-' or '_'.", field=param)
    return ids


@transaction.atomic
def enter_from_crowd_link(params, role: str):
    """One account per platform worker id; a returning worker gets the same account."""
    ids = parse_crowd_params(params)
    worker = (
        CrowdWorker.objects.select_related("user")
        .filter(platform=ids["platform"], worker_id=ids["worker_id"])
        .first()
    )
    if worker is None:
        user = get_user_model().objects.create_user(username=f"{ids['platform']}-{ids['worker_id']}")
        user.set_unusable_password()
        user.save()
        worker = CrowdWorker.objects.create(user=user, **ids)
    elif ids["session_id"] and ids["session_id"] != worker.session_id:
        worker.session_id = ids["session_id"]
        worker.study_id = ids["study_id"] or worker.study_id
        worker.save(update_fields=["session_id", "study_id"])
    roles.grant_role(worker.user, role)
    return worker.user


def completion_url(user, code: str) -> str | None:
    """Where the worker returns to with their code (Prolific); None for paste-back platforms."""
    from django.conf import settings

    worker = CrowdWorker.objects.filter(user=user).first()
    if worker and worker.platform == CrowdPlatform.PROLIFIC:
        return settings.PROLIFIC_COMPLETION_URL.format(code=code)
    return None


def new_completion_code() -> str:
    return "CQA_" + secrets.token_hex(5).upper()


def _expire_stale_leases(campaign: Campaign) -> None:
    campaign.assignments.filter(status=Assignment.Status.LEASED, lease_expires_at__lt=timezone.now()).update(
        status=Assignment.Status.EXPIRED
    )


@transaction.atomic
def lease_assignment(campaign: Campaign, worker) -> Assignment:
    """Resume the worker's open lease, or lease the least-filled scene of the pool."""
    if not campaign.is_active:
        raise DomainError("This campaign is closed.", field="campaign")
    Campaign.objects.select_for_update().get(pk=campaign.pk)  # one leaser at a time per campaign
    _expire_stale_leases(campaign)
    open_lease = campaign.assignments.filter(worker=worker, status=Assignment.Status.LEASED).first()
    if open_lease:
        return open_lease
    scene = (
        campaign.scenes.annotate(
            filled=Count("assignments", filter=Q(assignments__campaign=campaign) & ~Q(assignments__status="expired"))
        )
        .order_by("filled", "id")
        .first()
    )
    if scene is None:
        raise DomainError("This campaign has no scenes to annotate.", field="campaign")
    return Assignment.objects.create(
        campaign=campaign,
        scene=scene,
        worker=worker,
        lease_expires_at=timezone.now() + timedelta(minutes=campaign.lease_minutes),
    )


def assignment_for_worker(assignment_id: int, worker) -> Assignment:
    assignment = Assignment.objects.select_related("campaign", "scene").filter(pk=assignment_id).first()
    if assignment is None:
        raise NotFound("No such assignment.", field="assignment")
    if assignment.worker_id != worker.pk:
        raise Forbidden("This assignment belongs to another worker.", field="assignment")
    return assignment


WORD = re.compile(r"[A-Za-z0-9']+")


def named_objects(scene: Scene, text: str) -> list[str]:
    """Labels of the scene's objects that the text names (whole words, singular or plural)."""
    lowered = " ".join(WORD.findall(text.lower()))
    found = []
    for label in sorted(set(scene.scene_objects.values_list("label", flat=True))):
        pattern = r"\b" + re.escape(label.lower()) + r"(s|es)?\b"
        if re.search(pattern, lowered):
            found.append(label)
    return found


def check_change_text(scene: Scene, text: str, min_words: int) -> list[str]:
    """The server-side rules a description must pass; returns the objects it names."""
    words = WORD.findall(text)
    if len(words) < min_words:
        raise DomainError(
            f"A description needs at least {min_words} words; this one has {len(words)}.", field="text"
        )
    objects = named_objects(scene, text)
    if not objects:
        raise DomainError(
            "The description names no object of this scene; use a label from the object list "
            "(hover the top-view map to see them).",
            field="text",
        )
    return objects


@transaction.atomic
def submit_assignment(assignment_id: int, worker, text: str) -> Assignment:
    assignment = assignment_for_worker(assignment_id, worker)
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.status == Assignment.Status.SUBMITTED:
        raise Conflict("This assignment was already submitted.", field="assignment",
                       completion_code=assignment.completion_code)
    if assignment.status != Assignment.Status.LEASED or assignment.lease_expires_at < timezone.now():
        raise Conflict("The lease on this assignment expired; open the link again for a new one.",
                       field="assignment")
    text = (text or "").strip()
    objects = check_change_text(assignment.scene, text, assignment.campaign.min_words)
    ContextChange.objects.create(
        scene=assignment.scene,
        change_type=assignment.campaign.change_type,
        raw_text=text,
        author=worker,
        provenance={
            "source": "crowd",
            "campaign": assignment.campaign_id,
            "assignment": assignment.pk,
            "named_objects": objects,
        },
    )
    assignment.move_to(Assignment.Status.SUBMITTED)
    assignment.submitted_at = timezone.now()
    assignment.completion_code = new_completion_code()
    assignment.save(update_fields=["status", "submitted_at", "completion_code"])
    return assignment



@transaction.atomic
def create_campaign(benchmark, name: str, change_type: str, scenes, guidelines: str = "", min_words: int = 10,
                    lease_minutes: int = 30) -> Campaign:
    if change_type not in ChangeType.values:
        raise DomainError(f"Change type must be one of {', '.join(ChangeType.values)}.", field="change_type")
    scenes = list(scenes)
    if not scenes or any(s.benchmark_id != benchmark.pk for s in scenes):
        raise DomainError("Pick one or more scenes of this benchmark.", field="scenes")
    campaign = Campaign.objects.create(
        benchmark=benchmark, name=name, change_type=change_type, guidelines=guidelines, min_words=min_words,
        lease_minutes=lease_minutes,
    )
    campaign.scenes.set(scenes)
    return campaign
