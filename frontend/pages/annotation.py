from functools import wraps

from django.contrib.auth import login
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone

from annotation import progress as annotation_progress
from annotation import selectors as annotation_selectors
from annotation import services as annotation_services
from annotation.family_tags import tag_fields
from annotation.guidelines import render_guidelines
from annotation.kinds import UNFLIPPED
from annotation.models import Assignment, Campaign
from config.throttle import crowd_entry_limited
from core import roles
from core.auth import remember_signed_in
from core.errors import DomainError
from crowd import services as crowd_services
from crowd.models import scope_key
from scenes.viewer import cached_scene_viewer_data

from ..access import role_required
from ..templatetags.safe_urls import http_url
from .common import BACKEND, carries_platform_ids, entry_params, error_page, squatted_page
from .home import crowd_links
from .humaneval import proceed_page

# Kinds whose stimulus is images or videos, not a 3D scene.
SCENELESS_KINDS = (Campaign.Kind.CHOICE_IMAGE, Campaign.Kind.CHOICE_VIDEO)


@crowd_entry_limited
def crowd_enter_campaign(request, campaign_id):
    """A crowd link: a GET checks the link and shows the start page, the POST signs in and leases."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)  # no account for a link to nowhere
    if not carries_platform_ids(entry_params(request)) and roles.has_role(request.user, roles.ANNOTATOR):
        return _next_assignment(request, campaign)  # a signed-in annotator opens the link without platform ids
    if request.method != "POST":
        try:
            crowd_services.check_link(entry_params(request),
                                      crowd_services.entry_rule(scope_key("campaign", campaign.pk)))
        except DomainError as exc:
            return error_page(request, exc)
        return proceed_page(request, campaign.name, "Press Start to get your first scene.", "Start")
    try:
        user, created = crowd_services.enter_from_crowd_link(entry_params(request),
                                                             role=roles.ANNOTATOR, signed_in=request.user,
                                                             scope=scope_key("campaign", campaign.pk))
    except crowd_services.SessionSquatted as exc:
        return squatted_page(request, exc)
    except DomainError as exc:
        return error_page(request, exc)
    login(request, user, backend=BACKEND)
    remember_signed_in(user)  # the page this redirects to finds the account (and its roles) in the cache
    # the annotator role was just granted: no check
    return _next_assignment(request, campaign, new_account=created)


@role_required(roles.ANNOTATOR)
def next_assignment(request, campaign_id):
    return _next_assignment(request, get_object_or_404(Campaign, pk=campaign_id))


def _next_assignment(request, campaign, new_account=False):
    """Quiz first if the campaign has one; then the open lease, the unfinished draft, or a new scene.
    A GET only reads: it goes to the open lease, or shows the page whose POST leases. new_account: the
    crowd link of this request made the account (annotation.services.lease_assignment)."""
    if annotation_services.needs_quiz(campaign, request.user):
        return redirect("campaign_quiz", campaign_id=campaign.pk)
    if request.method != "POST":
        open_lease = annotation_services.open_lease(campaign, request.user)
        if open_lease is not None:
            return redirect("annotate", assignment_id=open_lease.pk)
        return proceed_page(request, campaign.name, "Press Continue to get your next scene.", "Continue",
                            action=reverse("campaign_next", args=[campaign.pk]))
    try:
        assignment = annotation_services.lease_assignment(campaign, request.user, new_account=new_account)
    except DomainError as exc:
        return error_page(request, exc)
    return redirect("annotate", assignment_id=assignment.pk)


@role_required(roles.ANNOTATOR)
def campaign_quiz(request, campaign_id):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if not annotation_services.needs_quiz(campaign, request.user):
        return redirect("campaign_next", campaign_id=campaign.pk)
    error, status = "", 200
    if request.method == "POST":
        answers = [request.POST.get(f"q{i}") for i in range(len(campaign.quiz))]
        try:
            attempt = annotation_services.take_quiz(campaign, request.user, answers)
        except DomainError as exc:
            error, status = exc.message, exc.status_code
        else:
            if attempt.passed:
                return redirect("campaign_next", campaign_id=campaign.pk)
            left = annotation_services.quiz_attempts_left(campaign, request.user)
            error, status = f"Not all answers were right; {left} attempt(s) left. Read the guidelines again.", 400
    return render(request, "frontend/campaign_quiz.html", {
        "campaign": campaign,
        "guidelines": render_guidelines(campaign.guidelines),
        "questions": [(i, q["question"], q["choices"]) for i, q in enumerate(campaign.quiz)],
        "attempts_left": annotation_services.quiz_attempts_left(campaign, request.user),
        "error": error,
    }, status=status)


def _own_assignment(page):
    """An annotator's page on one of their own assignments: the view is `page(request, assignment)`;
    an assignment that is not theirs (or none) gets the error page."""

    @role_required(roles.ANNOTATOR)
    @wraps(page)
    def view(request, assignment_id):
        try:
            assignment = annotation_services.assignment_for_worker(assignment_id, request.user)
        except DomainError as exc:
            return error_page(request, exc)
        return page(request, assignment)

    return view


@_own_assignment
def annotate(request, assignment):
    if assignment.status == Assignment.Status.SUBMITTED:
        return redirect("annotate_done", assignment_id=assignment.pk)
    if assignment.status != Assignment.Status.LEASED or assignment.lease_expires_at < timezone.now():
        # The lease lapsed: lease again, which brings the draft back on the same scene if it is free.
        return redirect("campaign_next", campaign_id=assignment.campaign_id)
    campaign = assignment.campaign
    draft = annotation_services.draft_of(assignment)
    viewer = cached_scene_viewer_data(assignment.scene)
    context = {
        "assignment": assignment,
        "campaign": campaign,
        "guidelines": render_guidelines(campaign.guidelines),
        "first_assignment": annotation_selectors.is_first_assignment(assignment, request.user),
        "viewer": viewer,
        "draft": {
            "descriptions": draft.descriptions, "text": draft.text, "content": draft.content,
            "revision": draft.revision, "needed": campaign.descriptions_per_assignment,
            "heartbeat_seconds": max(15, campaign.lease_minutes * 60 // 3),
        },
        "page_data": {"assignment": assignment.pk, "kind": campaign.kind,
                 "done_url": reverse("annotate_done", args=[assignment.pk]),
                 "returned_url": reverse("annotate_returned", args=[assignment.pk])},
    }
    if campaign.kind == Campaign.Kind.CONTEXT_CHANGE:
        return render(request, "frontend/annotate.html", context)
    return render(request, "frontend/annotate_task.html", {
        **context,
        "task": annotation_services.task_of(assignment),
        "tag_fields": tag_fields(campaign.benchmark.family),
        "show_viewer": bool(viewer["points_url"]) and campaign.kind not in SCENELESS_KINDS,
        "asks_flip": campaign.benchmark.family not in UNFLIPPED,  # 3DSRBench's flip decision
    })


@_own_assignment
def annotate_done(request, assignment):
    return render(request, "frontend/complete.html", {
        "code": assignment.completion_code,
        "completion_url": annotation_services.assignment_completion_url(assignment),
        "campaign": assignment.campaign,
    })


@_own_assignment
def annotate_returned(request, assignment):
    """After "Give this scene back": back to the crowd platform with the campaign's return code
    (Prolific's "returned" flow), or a page saying what happens next."""
    if assignment.status != Assignment.Status.RELEASED:
        return redirect("annotate", assignment_id=assignment.pk)
    url = http_url(annotation_services.return_url(assignment) or "")
    if url:
        return redirect(url)
    return render(request, "frontend/returned.html", {
        "assignment": assignment, "campaign": assignment.campaign, "code": assignment.campaign.return_code,
        "crowd": crowd_services.is_crowd_worker(request.user),
    })


@role_required(roles.ADMIN)
def campaign_dashboard(request, campaign_id):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return render(request, "frontend/campaign_dashboard.html", {
        "campaign": campaign, "progress": annotation_progress.campaign_progress(campaign),
        "page_data": {"campaign": campaign.pk},
        "rate": f"${campaign.pay_cents / 100:.2f} per {campaign.pay_unit} accepted descriptions",
        "links": crowd_links(request, f"/crowd/campaigns/{campaign.pk}/", campaign.created_at),
    })
