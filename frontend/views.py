"""Pages: thin views that call each app's services and render templates."""

from django.contrib.auth import login
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation import services as annotation_services
from annotation.models import Campaign
from benchmarks import roles
from benchmarks import services as benchmark_services
from benchmarks.errors import DomainError
from benchmarks.models import Benchmark, ContextChange, Item, Release
from benchmarks.viewer import scene_viewer_data
from humaneval import services as humaneval_services
from humaneval.models import Study
from modeleval import services as modeleval_services
from modeleval.models import ModelSpec, Run
from review import services as review_services

from .access import role_required

BACKEND = "django.contrib.auth.backends.ModelBackend"


def error_page(request, exc: DomainError):
    return render(request, "frontend/error.html", {"message": exc.message, "field": exc.field},
                  status=exc.status_code)


def home(request):
    user = request.user
    return render(request, "frontend/home.html", {
        "is_admin": roles.has_role(user, roles.ADMIN),
        "is_reviewer": roles.has_role(user, roles.REVIEWER),
        "benchmarks": Benchmark.objects.all(),
        "campaigns": Campaign.objects.filter(is_active=True).select_related("benchmark"),
        "studies": Study.objects.filter(is_open=True),
    })


# --- annotators -------------------------------------------------------------------------------

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


# --- reviewers --------------------------------------------------------------------------------

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


# --- admins -----------------------------------------------------------------------------------

@role_required(roles.ADMIN)
def manage(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return render(request, "frontend/manage.html", _manage_context(benchmark))


def _manage_context(benchmark, **extra):
    return {
        "benchmark": benchmark,
        "approved_items": Item.objects.filter(benchmark=benchmark, status="approved").select_related("change"),
        "studies": Study.objects.filter(benchmark=benchmark).order_by("-created_at"),
        "models": ModelSpec.objects.all(),
        "runs": Run.objects.filter(benchmark=benchmark).select_related("model")[:20],
        "releases": Release.objects.filter(benchmark=benchmark),
        **extra,
    }


@role_required(roles.ADMIN)
@require_http_methods(["POST"])
def create_study(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        item_ids = [int(i) for i in request.POST.getlist("items")]
        study = humaneval_services.create_study(
            benchmark, request.POST.get("name"), item_ids, request.user,
            request.POST.get("seconds_per_item", 120), request.POST.get("seconds_per_session", 1800),
        )
    except ValueError:
        return render(request, "frontend/manage.html",
                      _manage_context(benchmark, study_error={"items": "Item ids are numbers."}), status=400)
    except DomainError as exc:
        return render(request, "frontend/manage.html",
                      _manage_context(benchmark, study_error={exc.field: exc.message}), status=exc.status_code)
    return redirect(f"/manage/{slug}/#study-{study.pk}")


@role_required(roles.ADMIN)
@require_http_methods(["POST"])
def launch_run(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        run = modeleval_services.launch_run(
            request.POST.get("model"), benchmark, request.user, request.POST.get("batch_size", 8)
        )
    except DomainError as exc:
        return render(request, "frontend/manage.html",
                      _manage_context(benchmark, run_error={exc.field: exc.message}), status=exc.status_code)
    return redirect("run_detail", run_id=run.pk)


@role_required(roles.ADMIN)
def run_detail(request, run_id):
    run = get_object_or_404(Run.objects.select_related("model", "benchmark"), pk=run_id)
    return render(request, "frontend/run.html", {"run": run, "progress": modeleval_services.run_progress(run)})


@role_required(roles.ADMIN)
@require_http_methods(["POST"])
def export_release(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        benchmark_services.export_release(benchmark, request.POST.get("version"), request.user,
                                          request.POST.get("notes", ""))
    except DomainError as exc:
        return render(request, "frontend/manage.html",
                      _manage_context(benchmark, release_error={exc.field: exc.message}), status=exc.status_code)
    return redirect(f"/manage/{slug}/#releases")


@role_required(roles.ADMIN)
def results(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    human_rows = [
        {"name": f"Human — {s.name}", "result": humaneval_services.study_results(s)}
        for s in Study.objects.filter(benchmark=benchmark).order_by("created_at")
    ]
    model_rows = [
        {"name": f"{r.model.name} (run {r.pk})", "result": r.scores}
        for r in Run.objects.filter(benchmark=benchmark, status="finished").select_related("model").order_by("pk")
    ]
    rows = [r for r in human_rows + model_rows if r["result"] and r["result"].get("n_items")]
    change_types = sorted({k.split("=", 1)[1] for r in rows for k in r["result"].get("by", {})})
    table = [
        {
            "name": r["name"],
            "kind": "human" if r in human_rows else "model",
            "n": r["result"]["n_items"],
            "overall": r["result"]["overall"],
            "by": [r["result"]["by"].get(f"change_type={t}", {}) for t in change_types],
        }
        for r in rows
    ]
    return render(request, "frontend/results.html",
                  {"benchmark": benchmark, "table": table, "change_types": change_types})


# --- evaluators -------------------------------------------------------------------------------

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
