from django.contrib.auth import login
from django.shortcuts import redirect, render

from annotation import services as annotation_services
from benchmarks import roles
from benchmarks.errors import DomainError
from humaneval import services as humaneval_services

from ..access import role_required
from .common import BACKEND, error_page


def crowd_enter_study(request, study_id):
    try:
        user, session = humaneval_services.enter_study_from_crowd_link(study_id, request.GET)
    except DomainError as exc:
        return error_page(request, exc)
    login(request, user, backend=BACKEND)
    return redirect("eval_session", session_id=session.pk)


@role_required(roles.EVALUATOR)
def eval_session(request, session_id):
    try:
        session = humaneval_services.session_for(session_id, request.user)
    except DomainError as exc:
        return error_page(request, exc)
    return render(request, "frontend/eval_session.html", {
        "session": session,
        "completion_url": annotation_services.completion_url(request.user, session.completion_code or "{code}"),
    })
