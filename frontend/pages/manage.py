"""The admin's benchmark page: studies, model runs, releases, results."""

import csv
import json

from django.core.paginator import Paginator
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from benchmarks import roles
from benchmarks import services as benchmark_services
from benchmarks.errors import DomainError
from benchmarks.models import AssetRole, Benchmark, Item, Release
from humaneval import services as humaneval_services
from humaneval.models import Study
from modeleval import services as modeleval_services
from modeleval.models import ModelSpec, Run
from scoring.tables import paper_table, radar_chart

from ..access import role_required
from ..radar import radar_svg, series_colour


def _manage_context(benchmark, **extra):
    return {
        "benchmark": benchmark,
        "approved_items": Item.objects.filter(benchmark=benchmark, status="approved").select_related("change"),
        "studies": Study.objects.filter(benchmark=benchmark).order_by("-created_at"),
        "models": ModelSpec.objects.all(),
        "runs": Run.objects.filter(benchmark=benchmark).select_related("model")[:20],
        "releases": Release.objects.filter(benchmark=benchmark),
        "scenes": benchmark.scenes.order_by("external_id"),
        "asset_roles": AssetRole.choices,
        **extra,
    }


def _form_error(request, benchmark, form: str, exc: DomainError):
    context = _manage_context(benchmark, **{f"{form}_error": {exc.field: exc.message}})
    return render(request, "frontend/manage.html", context, status=exc.status_code)


@role_required(roles.ADMIN)
def manage(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return render(request, "frontend/manage.html", _manage_context(benchmark))


@role_required(roles.ADMIN)
@require_http_methods(["POST"])
def create_study(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        item_ids = [int(i) for i in request.POST.getlist("items") if i.isdigit()]
        study = humaneval_services.create_study(
            benchmark, request.POST.get("name"), item_ids, request.user,
            request.POST.get("seconds_per_item", 120), request.POST.get("seconds_per_session", 1800),
        )
    except DomainError as exc:
        return _form_error(request, benchmark, "study", exc)
    return redirect(f"/manage/{slug}/#study-{study.pk}")


@role_required(roles.ADMIN)
@require_http_methods(["POST"])
def launch_run(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        run = modeleval_services.launch_run(
            request.POST.get("model"), benchmark, request.user, request.POST.get("batch_size", 8),
            repeats=request.POST.get("repeats", 1), condition=request.POST.get("condition") or "main",
            protocol={"circular": "circular" in request.POST, "flip": "flip" in request.POST},
        )
    except DomainError as exc:
        return _form_error(request, benchmark, "run", exc)
    return redirect("run_detail", run_id=run.pk)


@role_required(roles.ADMIN)
@require_http_methods(["POST"])
def export_release(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        benchmark_services.export_release(benchmark, request.POST.get("version"), request.user,
                                          request.POST.get("notes", ""))
    except DomainError as exc:
        return _form_error(request, benchmark, "release", exc)
    return redirect(f"/manage/{slug}/#releases")


@role_required(roles.ADMIN)
def run_detail(request, run_id):
    run = get_object_or_404(Run.objects.select_related("model", "benchmark"), pk=run_id)
    return render(request, "frontend/run.html", {"run": run, "progress": modeleval_services.run_progress(run)})


@role_required(roles.ADMIN)
def run_predictions(request, run_id):
    run = get_object_or_404(Run.objects.select_related("model", "benchmark"), pk=run_id)
    page = Paginator(modeleval_services.run_predictions(run), 50).get_page(request.GET.get("page"))
    return render(request, "frontend/run_predictions.html", {
        "run": run, "page": page, "rows": list(modeleval_services.prediction_rows(run, page.object_list)),
    })


@role_required(roles.ADMIN)
def run_predictions_csv(request, run_id):
    run = get_object_or_404(Run.objects.select_related("benchmark"), pk=run_id)
    response = HttpResponse(content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-predictions.csv"'
    writer = csv.writer(response)
    writer.writerow(["item", "repeat", "question", "gold", "output", "error", "extracted", "extraction",
                     "prompt_sha256", "prompt_template", "latency_ms", "scores"])
    for row in modeleval_services.prediction_rows(run, modeleval_services.run_predictions(run)):
        writer.writerow([row["item"], row["repeat"], row["question"], json.dumps(row["gold"]), row["output"],
                         row["error"], row["extracted"], row["extraction"], row["prompt_sha256"],
                         row["prompt_template"], row["latency_ms"], json.dumps(row["scores"])])
    return response


def leaderboard(benchmark: Benchmark) -> tuple[dict, dict]:
    """The family's paper table and radar chart: one human row per study, one row per finished run."""
    results = [
        (f"Human — {study.name}", "human", humaneval_services.study_results(study))
        for study in Study.objects.filter(benchmark=benchmark).order_by("created_at")
    ] + [
        (f"{run.model.name} (run {run.pk})", "model", run.scores)
        for run in Run.objects.filter(benchmark=benchmark, status="finished").select_related("model").order_by("pk")
    ]
    scored = [r for r in results if r[2] and r[2].get("n_items")]
    return paper_table(benchmark.family, scored), radar_chart(benchmark.family, scored)


@role_required(roles.ADMIN)
def results(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    table, radar = leaderboard(benchmark)
    if request.GET.get("format") == "json":
        return JsonResponse({"benchmark": benchmark.slug, "family": benchmark.family, **table, "radar": radar})
    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}-leaderboard.csv"'
        writer = csv.writer(response)
        writer.writerow(["row", "kind", "n"] + [f"{c} {m}" for c in table["columns"] for m in table["metrics"]])
        for row in table["rows"]:
            writer.writerow([row["name"], row["kind"], row["n"]] + [v["value"] for cell in row["cells"] for v in cell])
        return response
    legend = [{**s, "colour": series_colour(i)} for i, s in enumerate(radar["series"])]
    return render(request, "frontend/results.html", {
        "benchmark": benchmark, "table": table, "radar": radar, "radar_svg": radar_svg(radar), "legend": legend,
    })
