"""The admin's benchmark page: studies, model runs, releases, results."""

import json
import re
from functools import wraps

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation import selectors as annotation_selectors
from benchmarks import selectors as benchmark_selectors
from benchmarks import services as benchmark_services
from benchmarks.models import AssetRole, Benchmark
from benchmarks.releases import life
from construction import pipeline
from construction import selectors as construction_selectors
from construction.models import PipelineStage
from core import roles
from core.errors import DomainError
from core.idempotency import new_form_key, once_per_form
from core.labels import words
from humaneval import selectors as humaneval_selectors
from humaneval.services import design as humaneval_design
from modeleval import recipes
from modeleval import selectors as modeleval_selectors
from modeleval import services as modeleval_services
from modeleval.analysis.sweep import sweep_rows
from modeleval.prompting import visual_inputs
from results import services as results_services
from scoring.engine import get_family
from scoring.tables import csv_rows, interval_text, latex_table

from ..access import role_refusal, role_required
from ..benchmark_steps import GENERATING_FAMILIES, benchmark_steps, facts_by_benchmark
from ..radar import radar_svg, series_colour
from ..sweep_chart import sweep_svg
from .common import attachment, csv_attachment
from .home import crowd_links

STUDY_FORM_DEFAULTS = {"name": "Pilot study", "seconds_per_item": "120", "seconds_per_session": "1800", "items": None}


def next_version(versions) -> str:
    """A release version not taken yet: one minor step past the highest (1.0.0 for the first)."""
    taken = [tuple(int(part) for part in v.split(".")) for v in versions if re.fullmatch(r"\d+\.\d+\.\d+", v)]
    if not taken:
        return "1.0.0"
    major, minor, _ = max(taken)
    return f"{major}.{minor + 1}.0"


def study_rows(request, studies) -> list[dict]:
    """Each study with its Prolific entry link, absolute (what the platform is given)."""
    return [{"study": study, "link": next(link for link in crowd_links(request, f"/crowd/studies/{study.pk}/",
                                                                       study.created_at) if link["key"] == "prolific")}
            for study in studies]


def _manage_context(request, benchmark, **extra):
    lists = benchmark_selectors.manage_page_lists(benchmark)
    return {
        "benchmark": benchmark,
        "steps": benchmark_steps(benchmark, facts_by_benchmark([benchmark.pk])[benchmark.pk]),
        "form_key": new_form_key(),
        "study_form": STUDY_FORM_DEFAULTS,
        "campaigns": annotation_selectors.campaigns_of(benchmark),
        "approved_items": lists.approved_items,
        "studies": study_rows(request, humaneval_selectors.studies_of(benchmark)),
        "models": modeleval_selectors.models_for(benchmark),
        "protocols": benchmark_selectors.protocols_for(benchmark),
        "next_version": next_version(lists.release_versions),
        "visual_inputs": visual_inputs.names(),
        "recipes": [recipe for recipe in recipes.shipped() if recipe["family"] == benchmark.family],
        "runs": modeleval_selectors.recent_runs(benchmark),
        "releases": lists.releases,
        "scenes": lists.scenes,
        "asset_roles": AssetRole.choices,
        "stages": [{"stage": stage, "params": json.dumps(stage.params, ensure_ascii=False)}
                   for stage in construction_selectors.stages_of(benchmark)],
        "stage_kinds": [(value, label) for value, label in PipelineStage.Kind.choices
                        if value != PipelineStage.Kind.GENERATE or benchmark.family in GENERATING_FAMILIES],
        "pipeline_data": {"slug": benchmark.slug, "examples": {
            kind: example for kind, example in pipeline.param_examples(benchmark).items()
            if kind != PipelineStage.Kind.GENERATE or benchmark.family in GENERATING_FAMILIES}},
        **extra,
    }


def _form_error(request, benchmark, form: str, exc: DomainError, **extra):
    context = _manage_context(request, benchmark, **{f"{form}_error": {exc.field: exc.message}}, **extra)
    return render(request, "frontend/manage.html", context, status=exc.status_code)


def _manage_form(form: str, refill=None):
    """An admin's POST of one of the manage page's forms, sent once per rendering (once_per_form): the
    view is `act(request, benchmark)`, returning the redirect; a DomainError shows the page again with
    the reason beside `form`'s fields (and `refill(request)`'s values in them)."""

    def decorate(act):
        @role_required(roles.ADMIN)
        @require_http_methods(["POST"])
        @wraps(act)
        def view(request, slug):
            return once_per_form(request, lambda: attempt(request, slug))

        def attempt(request, slug):
            benchmark = get_object_or_404(Benchmark, slug=slug)
            try:
                return act(request, benchmark)
            except DomainError as exc:
                extra = {f"{form}_form": refill(request)} if refill else {}
                return _form_error(request, benchmark, form, exc, **extra)

        return view

    return decorate


@role_required(roles.ADMIN)
def manage(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return render(request, "frontend/manage.html", _manage_context(request, benchmark))


@role_required(roles.ADMIN)
@require_http_methods(["POST"])
def set_public(request, slug):
    """The admin's switch for the benchmark's results (page, leaderboard, paper tables) read signed out."""
    benchmark = benchmark_services.set_results_public(get_object_or_404(Benchmark, slug=slug),
                                                      request.POST.get("public") == "on")
    messages.success(request, "Anyone can now read this benchmark's results, signed out too." if benchmark.public
                     else "This benchmark's results are for signed-in admins again.")
    return redirect(f"/manage/{benchmark.slug}/#visibility")


def _posted_study(request) -> dict:
    posted = {key: request.POST.get(key, "") for key in ("name", "seconds_per_item", "seconds_per_session")}
    posted["items"] = {int(i) for i in request.POST.getlist("items") if i.isdigit()}
    return posted


@_manage_form("study", refill=_posted_study)
def create_study(request, benchmark):
    item_ids = [int(i) for i in request.POST.getlist("items") if i.isdigit()]
    design = humaneval_design.StudyDesign(request.POST.get("name"), item_ids,
                                          request.POST.get("seconds_per_item", 120),
                                          request.POST.get("seconds_per_session", 1800))
    study = humaneval_design.create_study(benchmark, design, request.user)
    messages.success(request, f"Study “{study.name}” created: invite participants with its link below.")
    return redirect(f"/manage/{benchmark.slug}/#study-{study.pk}")


@_manage_form("run")
def launch_run(request, benchmark):
    run = modeleval_services.launch_run(
        request.POST.get("model"), benchmark, request.user, request.POST.get("batch_size", 8),
        repeats=request.POST.get("repeats", 1), condition=request.POST.get("condition") or "main",
        protocol={"circular": "circular" in request.POST, "flip": "flip" in request.POST},
        visual_input=request.POST.get("visual_input", ""),
    )
    return redirect("run_detail", run_id=run.pk)


@_manage_form("recipe")
def launch_recipe(request, benchmark):
    """Every run of a shipped recipe for each model chosen (recipes.launch_recipe: all or none)."""
    recipes.launch_recipe(request.POST.get("recipe") or "", benchmark, request.POST.getlist("models"), request.user,
                          request.POST.get("batch_size", 8))
    messages.success(request, "The recipe's runs are launched: each follows on its own page.")
    return redirect(f"/manage/{benchmark.slug}/#runs")


@_manage_form("release")  # the release form carries no form key: once_per_form leaves it as it is
def export_release(request, benchmark):
    release = life.export_release(benchmark, request.POST.get("version"), request.user,
                                      request.POST.get("notes", ""),
                                      require_consensus="require_consensus" in request.POST)
    messages.success(request, f"Release v{release.version} created: its files are listed below once exported.")
    return redirect(f"/manage/{benchmark.slug}/#releases")


def score_lines(scores) -> list[tuple]:
    """A run's overall metrics as its page shows them: (metric, value, its interval as `± 2.10` or None);
    `ci` holds the intervals, it is no metric."""
    scores = dict(scores or {})
    intervals = scores.pop("ci", None) or {}
    return [(metric, value, interval_text(value, intervals.get(metric))) for metric, value in scores.items()]


def metric_words(family: str) -> dict[str, str]:
    """The family's metric names in words, for run.js to name the scores a run ends with as the page does."""
    metrics = get_family(family)
    return {name: words(name) for name in (*metrics.metrics, *metrics.optional_metrics)}


@role_required(roles.ADMIN)
def run_detail(request, run_id):
    """A run and the widget of its current attempt's job, which follows it live (frontend/pages/run.js)."""
    run = get_object_or_404(modeleval_selectors.runs_with_job(), pk=run_id)
    progress = modeleval_services.run_progress(run)
    return render(request, "frontend/run.html", {"run": run, "progress": progress,
                                                 "score_lines": score_lines(progress["scores"]),
                                                 "metric_words": metric_words(run.benchmark.family)})


@role_required(roles.ADMIN)
def run_predictions(request, run_id):
    run = get_object_or_404(modeleval_selectors.runs_with_model_and_benchmark(), pk=run_id)
    page = Paginator(modeleval_services.run_predictions(run), 50).get_page(request.GET.get("page"))
    return render(request, "frontend/run_predictions.html", {
        "run": run, "page": page, "rows": list(modeleval_services.prediction_rows(run, page.object_list)),
    })


PREDICTION_COLUMNS = ["item", "repeat", "question", "gold", "output", "error", "extracted", "extraction",
                      "prompt_sha256", "prompt_template", "latency_ms", "scores"]
JSON_COLUMNS = {"gold", "scores"}  # a list and a dict: written as JSON


@role_required(roles.ADMIN)
def run_predictions_csv(request, run_id):
    run = get_object_or_404(modeleval_selectors.runs_with_benchmark(), pk=run_id)
    rows = ([json.dumps(row[c]) if c in JSON_COLUMNS else row[c] for c in PREDICTION_COLUMNS]
            for row in modeleval_services.prediction_rows(run, modeleval_services.run_predictions(run)))
    return csv_attachment(f"run-{run.pk}-predictions.csv", [PREDICTION_COLUMNS, *rows])


def results_export(request, data: dict, filename: str):
    """`?format=json` (what the API answers), `csv` (one table: `&table=<key>`, the main one by default)
    or `latex` (every table, or `&table=<key>`) of `results.services.benchmark_results`; None for the page."""
    fmt = request.GET.get("format")
    if fmt == "json":
        return JsonResponse(data)
    if fmt not in ("csv", "latex"):
        return None
    key = request.GET.get("table")
    tables = data["tables"] if fmt == "latex" and not key else [results_services.find_table(data, key)]
    if tables[0] is None:
        raise Http404("No such table.")
    if fmt == "latex":
        return attachment(f"{filename}-results.tex", "text/x-tex", "\n".join(latex_table(table) for table in tables))
    return csv_attachment(f"{filename}-{tables[0]['key']}.csv", csv_rows(tables[0]))


def results(request, slug):
    """The benchmark's paper tables (chance, human and model rows) with the radar chart, and exports: anyone's
    when the benchmark is public (signed out too), admins' otherwise. A signed-out visitor of a private or
    missing benchmark is sent to log in alike, so the answer tells no one which slugs exist."""
    benchmark = benchmark_selectors.public_benchmark(slug)
    if benchmark is None:
        refused = role_refusal(request, roles.ADMIN)
        if refused is not None:
            return refused
        benchmark = get_object_or_404(Benchmark, slug=slug)
    data = results_services.benchmark_results(benchmark)
    exported = results_export(request, data, benchmark.slug)
    if exported is not None:
        return exported
    radar = data["radar"]
    legend = [{**s, "colour": series_colour(i)} for i, s in enumerate(radar["series"])]
    return render(request, "frontend/results.html", {
        "benchmark": benchmark, "tables": data["tables"], "radar": radar, "radar_svg": radar_svg(radar),
        "legend": legend, "row_kinds": {row["kind"] for row in data["rows"]},
        "sweep": data["sweep"], "sweep_svg": sweep_svg(data["sweep"]), "sweep_table": sweep_table(data["sweep"]),
        "imagination_gap": data["imagination_gap"],
    })


def sweep_table(sweep: dict) -> dict:
    """The sweep's values under the chart: a column per frame count, a row per line in its colour."""
    header, *rows = sweep_rows(sweep)
    return {"counts": header[1:], "rows": [{"name": row[0], "colour": series_colour(index), "values": row[1:]}
                                           for index, row in enumerate(rows)]}
