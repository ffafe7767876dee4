"""Evaluator pages (crowd entry, invited start, the timed session) and the admin's study pages
(design form, results in the paper layout beside the model runs, CSV export)."""

import csv

from django.contrib.auth import login
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation import services as annotation_services
from benchmarks import roles
from benchmarks.errors import DomainError
from benchmarks.models import Benchmark, Item
from config.throttle import crowd_entry_limited
from humaneval import services as humaneval_services
from humaneval.models import Study
from results import services as results_services

from ..access import role_required
from .common import BACKEND, error_page
from .manage import results_export


@crowd_entry_limited
def crowd_enter_study(request, study_id):
    try:
        user, session = humaneval_services.enter_study_from_crowd_link(study_id, request.GET)
    except DomainError as exc:
        return error_page(request, exc)
    login(request, user, backend=BACKEND)
    return redirect("eval_session", session_id=session.pk)


def start_invited(request, study_id):
    """Invited evaluators and staff with an account start here instead of a crowd link."""
    if not request.user.is_authenticated:
        return redirect(f"/accounts/login/?next={request.path}")
    if not (roles.has_role(request.user, roles.EVALUATOR) or roles.has_role(request.user, roles.ADMIN)):
        return render(
            request, "frontend/error.html", {"message": "This page is for invited evaluators."}, status=403
        )
    try:
        session = humaneval_services.start_invited_session(study_id, request.user)
    except DomainError as exc:
        return error_page(request, exc)
    return redirect("eval_session", session_id=session.pk)


def eval_session(request, session_id):
    if not request.user.is_authenticated:
        return redirect(f"/accounts/login/?next={request.path}")
    try:
        session = humaneval_services.session_for(session_id, request.user)
    except DomainError as exc:
        return error_page(request, exc)
    return render(
        request,
        "frontend/eval_session.html",
        {
            "session": session,
            "completion_url": annotation_services.completion_url(
                request.user, session.completion_code or "{code}"
            ),
        },
    )


DESIGN_FIELDS = (
    "stratify_by",
    "per_stratum",
    "seed",
    "familiarisation_count",
    "attention_failures_allowed",
    "participants_per_item",
    "items_per_session",
)
DESIGN_FLAGS = (
    "allow_going_back", "shuffle_items", "shuffle_choices", "offer_not_sure", "circular_variants", "flip_images"
)


def _design_context(benchmark, **extra):
    items = Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).order_by("pk")
    return {
        "benchmark": benchmark,
        "approved_items": items,
        "tags": sorted({tag for tags in items.values_list("tags", flat=True) for tag in (tags or {})}),
        **extra,
    }


@role_required(roles.ADMIN)
def study_design(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if request.method != "POST":
        return render(request, "frontend/study_design.html", _design_context(benchmark))
    post = request.POST
    design = {field: post.get(field) or None for field in DESIGN_FIELDS}
    design["stratify_by"] = design["stratify_by"] or ""
    design["familiarisation_count"] = design["familiarisation_count"] or 0
    design["attention_failures_allowed"] = design["attention_failures_allowed"] or 0
    design["participants_per_item"] = design["participants_per_item"] or 3
    design.update({flag: flag in post for flag in DESIGN_FLAGS})
    try:
        study = humaneval_services.create_study(
            benchmark,
            post.get("name"),
            [i for i in post.getlist("items") if i.isdigit()],
            request.user,
            post.get("seconds_per_item", 120),
            post.get("seconds_per_session", 1800),
            attention_ids=[i for i in post.getlist("attention_ids") if i.isdigit()],
            **design,
        )
    except DomainError as exc:
        context = _design_context(benchmark, error={exc.field: exc.message}, posted=post)
        return render(request, "frontend/study_design.html", context, status=exc.status_code)
    return redirect("study_results", study_id=study.pk)


@role_required(roles.ADMIN)
def study_results(request, study_id):
    """The study's human row beside the finished runs and chance, all on the study's scored items
    (`results.services.benchmark_results(benchmark, study)`); `?format=json|csv|latex` exports them."""
    study = get_object_or_404(Study.objects.select_related("benchmark"), pk=study_id)
    data = results_services.benchmark_results(study.benchmark, study)
    exported = results_export(request, data, f"study-{study.pk}")
    if exported is not None:
        return exported
    return render(
        request,
        "frontend/study_results.html",
        {
            "study": study,
            "human": results_services.human_result(data),
            "tables": data["tables"],
            "crowd_link": f"/crowd/studies/{study.pk}/",
        },
    )


@role_required(roles.ADMIN)
def study_results_csv(request, study_id):
    study = get_object_or_404(Study.objects.select_related("benchmark"), pk=study_id)
    response = HttpResponse(content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-responses.csv"'
    writer = csv.writer(response)
    writer.writerow(humaneval_services.CSV_HEADER)
    writer.writerows(humaneval_services.response_table(study))
    return response
