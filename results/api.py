"""Results over the API: a benchmark's paper tables (reviewers and admins) and a study's (admins).
Both answer what `results.services.benchmark_results` returns, so they carry the pages' numbers."""

from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.errors import DomainError, NotFound
from benchmarks.models import Benchmark
from benchmarks.permissions import IsAdmin, IsReviewer
from humaneval.models import Study

from . import services


def _study_id(value) -> int:
    if not str(value).isdigit() or len(str(value)) > 18:
        raise DomainError("Give a study by its id.", field="study")
    return int(value)


class BenchmarkResults(APIView):
    """`GET /api/v1/benchmarks/<slug>/results/[?study=<id>]`: chance, human and model rows, the paper
    tables and the radar chart; with `study`, every row on that study's scored items."""

    permission_classes = [IsReviewer]

    def get(self, request, slug):
        benchmark = Benchmark.objects.filter(slug=slug).first()
        if benchmark is None:
            raise NotFound("No such benchmark.", field="benchmark")
        study = None
        if request.query_params.get("study"):
            study = Study.objects.filter(pk=_study_id(request.query_params["study"]), benchmark=benchmark).first()
            if study is None:
                raise NotFound("No such study on this benchmark.", field="study")
        return Response(services.benchmark_results(benchmark, study))


class StudyResults(APIView):
    """`GET /api/v1/studies/<id>/results/`: the human result as `humaneval.services.study_results` gives
    it (overall, by, agreement, exclusions, design ...), with the tables, radar and rows of
    `benchmark_results(benchmark, study)` beside it."""

    permission_classes = [IsAdmin]

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
