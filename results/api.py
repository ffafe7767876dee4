"""Results over the API: a benchmark's paper tables (reviewers and admins; anyone's for a public
benchmark) and a study's (admins). Both answer what `results.services.benchmark_results` returns, so they
carry the pages' numbers."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks import selectors as benchmark_selectors
from benchmarks.models import Benchmark
from core.errors import DomainError, NotFound
from core.permissions import IsAdmin, IsReviewer
from humaneval.models import Study

from . import planning, services


class ResultRowSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="A model row's label: model · condition · visual input[ · subset]"
                                 "[ · protocol][ · n-shot][ · settings that differ from the recipe's] (run N).")
    kind = serializers.CharField(help_text="chance, human or model.")
    n = serializers.IntegerField(allow_null=True, help_text="Items scored.")
    result = serializers.JSONField(allow_null=True, help_text="The scorer's output (overall, by, ...).")
    run = serializers.IntegerField(required=False, help_text="Model rows: the run.")
    setting = serializers.JSONField(required=False, help_text="Model rows: condition, visual_input, subset, "
                                    "protocol, examples, prompts and the settings that differ (modeleval.analysis.labels).")
    comparable = serializers.CharField(required=False, help_text="Model rows with equal keys are ranked together.")


class RadarSerializer(serializers.Serializer):
    by = serializers.CharField(allow_null=True)
    metric = serializers.CharField()
    axes = serializers.ListField(child=serializers.CharField())
    series = serializers.JSONField(help_text="[{name, kind, values}] with one value (or null) per axis.")


class ResultTablesSerializer(serializers.Serializer):
    tables = serializers.JSONField(help_text="The family's paper tables, the main one first; each cell with its "
                                   "interval, each table with its comparisons and human_comparisons (model - human, "
                                   "participants resampled, Holm-corrected).")
    radar = RadarSerializer()
    rows = ResultRowSerializer(many=True)


class BenchmarkResultsSerializer(ResultTablesSerializer):
    ablations = serializers.JSONField(help_text="[{axis, title, fixed, metrics, rows: [{name, run, model, value, "
                                      "main, overall, difference}]}]: one model's runs differing on one axis.")
    counterfactual = serializers.JSONField(help_text="Hypo3D Tables 3-4: [{key, title, metrics, rows: [{model, "
                                           "without_change, with_change, affects, irrelevant}]}]; each group "
                                           "{n, EM_without_change, EM_with_change, drop, answer_changed[, flip_rate]}.")
    imagination_gap = serializers.JSONField(
        allow_null=True, help_text="HypoLab's experiment, in no paper: per model and for humans, the score given the changed "
        "scene minus imagining the change: {title, metrics, columns, rows: [{name, kind, changed, imagined, cells: "
        "{metric: [{column, key, metric, changed, imagined, difference, ci, p_value, p_holm, n_items}]}}]}; null without a "
        "changed-scene run or study and its imagined partner (results.imagination_gap).")
    sweep = serializers.JSONField(help_text="The frame-count sweep: {metric, x, series: [{name, model, points: "
                                  "[{frames, value, run}]}]}, one line per model (modeleval.analysis.sweep).")
    benchmark = serializers.CharField()
    family = serializers.CharField()
    study = serializers.IntegerField(allow_null=True)
    by = serializers.JSONField(help_text="The main table's breakdown.")
    metrics = serializers.ListField(child=serializers.CharField())
    columns = serializers.ListField(child=serializers.CharField())


class StudyResultsSerializer(ResultTablesSerializer):
    """The human result (humaneval.services.study_results: overall, by, agreement, exclusions, design ...)
    with the tables, radar and rows of the study's benchmark results."""

    overall = serializers.JSONField(required=False)
    by = serializers.JSONField(required=False)
    design = serializers.JSONField(required=False)


class PlannedCellSerializer(serializers.Serializer):
    column = serializers.CharField()
    accuracy = serializers.FloatField(help_text="The pilot's value in points, or 50 where assumed.")
    assumed = serializers.BooleanField()
    source = serializers.CharField(required=False, help_text="given (typed on the design page), pilot or assumed.")
    answers = serializers.IntegerField(help_text="Answers the cell needs.")
    participants = serializers.IntegerField()
    design_effect = serializers.FloatField()


class StudyPlanSerializer(serializers.Serializer):
    metric = serializers.CharField()
    level = serializers.FloatField()
    half_width = serializers.FloatField()
    items_per_participant = serializers.IntegerField()
    icc = serializers.FloatField()
    pilot = serializers.CharField(allow_null=True, help_text="The human row the accuracies come from.")
    cells = PlannedCellSerializer(many=True)
    participants = serializers.IntegerField(help_text="The most any cell needs.")


def _study_id(value) -> int:
    if not str(value).isdigit() or len(str(value)) > 18:
        raise DomainError("Give a study by its id.", field="study")
    return int(value)


def _benchmark_and_study(slug: str, params) -> tuple[Benchmark, Study | None]:
    """The benchmark named by the URL and the study of `?study=` on it (None when not given)."""
    benchmark = Benchmark.objects.filter(slug=slug).first()
    if benchmark is None:
        raise NotFound("No such benchmark.", field="benchmark")
    if not params.get("study"):
        return benchmark, None
    study = Study.objects.filter(pk=_study_id(params["study"]), benchmark=benchmark).first()
    if study is None:
        raise NotFound("No such study on this benchmark.", field="study")
    return benchmark, study


class ReviewerOrPublicResults(BasePermission):
    """Reviewers and admins read every benchmark's results; anyone, signed out too, a public benchmark's
    (Benchmark.public), without `?study=`: a study's rows stay its admins'."""

    def has_permission(self, request, view):
        if IsReviewer().has_permission(request, view):
            return True
        return (not request.query_params.get("study")
                and benchmark_selectors.public_benchmark(view.kwargs["slug"]) is not None)


class BenchmarkResults(APIView):
    """`GET /api/v1/benchmarks/<slug>/results/[?study=<id>]`: chance, human and model rows, the paper
    tables and the radar chart; with `study`, every row on that study's scored items."""

    permission_classes = [ReviewerOrPublicResults]

    @extend_schema(parameters=[OpenApiParameter("study", int, description="Rows on its scored items.")],
                   responses=BenchmarkResultsSerializer)
    def get(self, request, slug):
        return Response(services.benchmark_results(*_benchmark_and_study(slug, request.query_params)))


class StudyResults(APIView):
    """`GET /api/v1/studies/<id>/results/`: the human result as `humaneval.services.study_results` gives
    it (overall, by, agreement, exclusions, design ...), with the tables, radar and rows of
    `benchmark_results(benchmark, study)` beside it."""

    permission_classes = [IsAdmin]

    @extend_schema(responses=StudyResultsSerializer)
    def get(self, request, pk):
        study = Study.objects.select_related("benchmark").filter(pk=pk).first()
        if study is None:
            raise NotFound("No such study.", field="study")
        results = services.benchmark_results(study.benchmark, study)
        return Response({
            **services.human_result(results),
            "tables": results["tables"],
            "radar": results["radar"],
            "rows": results["rows"],
        })


class StudyPlan(APIView):
    """`GET /api/v1/benchmarks/<slug>/plan/?half_width=5&items_per_participant=50[&icc=0.05][&study=<id>]`:
    participants needed per cell of the main paper table for the human row's 95 % interval to be
    +- half_width points, from the pilot study's accuracies (50 % where none)."""

    permission_classes = [IsAdmin]

    @extend_schema(parameters=[
        OpenApiParameter("half_width", float, required=True, description="Points, e.g. 5 for +-5."),
        OpenApiParameter("items_per_participant", int, required=True, description="Items of a cell each answers."),
        OpenApiParameter("icc", float, description="Intraclass correlation of answers within a participant."),
        OpenApiParameter("study", int, description="The pilot study (default: the benchmark's first)."),
    ], responses=StudyPlanSerializer)
    def get(self, request, slug):
        benchmark, study = _benchmark_and_study(slug, request.query_params)
        params = request.query_params
        return Response(planning.study_plan(benchmark, params.get("half_width"), params.get("items_per_participant"),
                                            params.get("icc", 0), study))
