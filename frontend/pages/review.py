from django.shortcuts import get_object_or_404, render

from benchmarks import roles
from benchmarks.models import ContextChange
from benchmarks.viewer import scene_viewer_data
from review import services as review_services

from ..access import role_required


@role_required(roles.REVIEWER)
def review_queue(request):
    approved = ContextChange.objects.filter(status="approved").select_related("scene").order_by("-updated_at")[:50]
    return render(request, "frontend/review_queue.html", {
        "queue": review_services.review_queue(request.user)[:100],
        "approved": approved,
    })


@role_required(roles.REVIEWER)
def review_change(request, change_id):
    change = get_object_or_404(ContextChange.objects.select_related("scene", "author"), pk=change_id)
    return render(request, "frontend/review_change.html", {
        "change": change,
        "viewer": scene_viewer_data(change.scene),
        "revisions": change.revisions.select_related("author"),
        "items": change.items.all(),
        "criteria": review_services.HYPO3D_CRITERIA,
        "question_types": review_services.QUESTION_TYPES,
        "own_work": change.author_id == request.user.pk,
    })
