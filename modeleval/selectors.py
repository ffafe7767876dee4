"""What pages read of models and runs: querysets and small typed results."""

from dataclasses import dataclass

from django.db.models import Count, Q

from .models import ModelSpec, Run


def models_for(benchmark) -> list:
    """The models a run of this benchmark can use: those meant for its family (or any), and recorded
    outputs only when they were recorded on this benchmark."""
    models = ModelSpec.objects.filter(Q(family="") | Q(family=benchmark.family)).order_by("name")
    return [m for m in models if m.adapter != ModelSpec.Adapter.RECORDED_OUTPUTS
            or (m.config or {}).get("benchmark") in (None, "", benchmark.slug)]


def openai_compatible_models():
    """The models that can polish text (an OpenAI-compatible endpoint), by name."""
    return ModelSpec.objects.filter(adapter=ModelSpec.Adapter.OPENAI_COMPATIBLE).order_by("name")


def recent_runs(benchmark):
    """The benchmark's latest 20 runs with their model."""
    return Run.objects.filter(benchmark=benchmark).select_related("model")[:20]


def runs_with_model_and_benchmark():
    """Runs with their model and benchmark, for a lookup by id."""
    return Run.objects.select_related("model", "benchmark")


def runs_with_job():
    """Runs with their model, benchmark and current job (the run's page), for a lookup by id."""
    return Run.objects.select_related("model", "benchmark", "job")


def runs_with_benchmark():
    """Runs with their benchmark, for a lookup by id."""
    return Run.objects.select_related("benchmark")


@dataclass
class RunCounts:
    finished: int = 0
    running: int = 0  # queued, running or scoring


def run_counts_by_benchmark(ids) -> dict[int, RunCounts]:
    """Benchmark id -> its runs finished and under way (benchmarks with none are absent), in one query."""
    rows = (Run.objects.filter(benchmark__in=ids).values("benchmark")
            .annotate(finished=Count("id", filter=Q(status=Run.Status.FINISHED)),
                      running=Count("id", filter=Q(status__in=[Run.Status.QUEUED, Run.Status.RUNNING,
                                                               Run.Status.SCORING]))))
    return {row["benchmark"]: RunCounts(row["finished"], row["running"]) for row in rows}
