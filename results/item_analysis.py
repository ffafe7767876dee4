"""Item analysis of a benchmark for its reviewers: every scored answer to an item, from the human
rows (each participant's answer) and the model rows (each finished run's), graded by the one scorer,
through `scoring.items.item_analysis` (difficulty for humans and for models, discrimination, flags).
Runs of the random guessers are baselines, not models: shown apart, never in a flag.

An answer's score is the family's primary metric on that item (0..1): the human row's per-answer
tallies (`study_results(..., units=True)`: one participant's answer to one item, its repeats and
3DSRBench rotations together) and each run's stored per-item tallies (`score_run` keeps them).
Items are named by the id the scorer keys them under and matched to the benchmark's items.
"""

from benchmarks.models import Benchmark, Item
from core.errors import DomainError
from humaneval.models import Study
from humaneval.services.results import study_results
from modeleval.models import ModelSpec, Run
from scoring.items import BASELINE, FLAGS, HUMAN, MODEL, item_analysis
from scoring.tables import family_record


def _answers(units: dict, metric: str):
    """(unit index, score 0..1) of each unit the primary metric reaches."""
    found = (units or {}).get("tallies", {}).get(f"|{metric}")
    if not found:
        return []
    return [(u, total / n) for u, total, n in zip(found["unit"], found["sum"], found["n"], strict=True) if n]


def graded_answers(benchmark: Benchmark) -> list[tuple[str, str, str, float]]:
    """(respondent, "human", "model" or "baseline", item key, score) of every scored answer on the benchmark."""
    metric = family_record(benchmark.family).primary_metric
    graded = []
    for study in Study.objects.filter(benchmark=benchmark).select_related("benchmark").order_by("pk"):
        units = study_results(study, units=True).get("units") or {}
        for u, score in _answers(units, metric):
            graded.append((f"study {study.pk} {units['clusters'][u]}", HUMAN, units["items"][u], score))
    runs = Run.objects.filter(benchmark=benchmark, status=Run.Status.FINISHED).order_by("pk")
    for run in runs.only("pk", "scores", "model__adapter").select_related("model"):
        units = (run.scores or {}).get("units") or {}
        kind = BASELINE if run.model.adapter in ModelSpec.BASELINE_ADAPTERS else MODEL
        for u, score in _answers(units, metric):
            graded.append((f"run {run.pk}", kind, units["ids"][u], score))
    return graded


def benchmark_item_analysis(benchmark: Benchmark, flag: str = "") -> dict:
    """{"metric", "flags", "counts": {flag: n}, "entries": [analysis entry + "item" (the Item or None)]},
    the entries with `flag` only (any flag with "any", every item with "")."""
    if flag not in ("", "any", *FLAGS):
        raise DomainError(f"The flag is one of: any, {', '.join(FLAGS)}.", field="flag")
    analysis = item_analysis(graded_answers(benchmark))
    counts = {name: sum(name in entry["flags"] for entry in analysis) for name in FLAGS}
    if flag == "any":
        analysis = [entry for entry in analysis if entry["flags"]]
    elif flag:
        analysis = [entry for entry in analysis if flag in entry["flags"]]
    items = {}
    for item in Item.objects.filter(benchmark=benchmark).only("pk", "external_id", "origin_id", "question", "status"):
        items.setdefault(item.scoring_id, item)
    return {
        "metric": family_record(benchmark.family).primary_metric,
        "flags": FLAGS,
        "counts": counts,
        "entries": [{**entry, "item": items.get(entry["id"])} for entry in analysis],
    }
