from django.contrib.auth import login
from django.shortcuts import get_object_or_404, redirect, render

from annotation import services as annotation_services
from annotation.models import Campaign
from benchmarks import roles
from benchmarks.errors import DomainError
from benchmarks.viewer import scene_viewer_data

from ..access import role_required
from .common import BACKEND, error_page


def crowd_enter_campaign(request, campaign_id):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    try:
        user = annotation_services.enter_from_crowd_link(request.GET, role=roles.ANNOTATOR)
        login(request, user, backend=BACKEND)
        assignment = annotation_services.lease_assignment(campaign, user)
    except DomainError as exc:
        return error_page(request, exc)
    return redirect("annotate", assignment_id=assignment.pk)


@role_required(roles.ANNOTATOR)
def annotate(request, assignment_id):
    try:
        assignment = annotation_services.assignment_for_worker(assignment_id, request.user)
    except DomainError as exc:
        return error_page(request, exc)
    if assignment.status == "submitted":
        return redirect("annotate_done", assignment_id=assignment.pk)
    return render(request, "frontend/annotate.html", {
        "assignment": assignment,
        "campaign": assignment.campaign,
        "viewer": scene_viewer_data(assignment.scene),
    })


@role_required(roles.ANNOTATOR)
def annotate_done(request, assignment_id):
    try:
        assignment = annotation_services.assignment_for_worker(assignment_id, request.user)
    except DomainError as exc:
        return error_page(request, exc)
    return render(request, "frontend/complete.html", {
        "code": assignment.completion_code,
        "completion_url": annotation_services.completion_url(request.user, assignment.completion_code),
    })
