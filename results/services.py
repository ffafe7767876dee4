"""One home for results: the rows of a benchmark's paper tables, all graded by the one scorer.

`benchmark_results` is the only place the rows are assembled; the results pages (HTML, JSON, CSV,
LaTeX), the study page and both results API endpoints call it, so they carry the same numbers.

- a human row per study: `humaneval.services.results.study_results` (each scored response of a session not
  excluded is one scorer row);
- a model row per finished run: the run's stored `scores` (scored by `modeleval.runs.run_scoring.score_run`
  with `by=breakdowns(family)`);
- chance rows (the Random / Random++ the family's paper reports): `scoring.chance_levels` on the gold
  lines of the items.

With a study, every row is restricted to that study's scored items: its own human row, each run
scored again from its stored predictions on those items (every variant and repeat, the lines built
by `modeleval.runs.run_scoring.scoring_lines` as `score_run` builds them), chance on those items.
"""

import re

import scoring
from benchmarks import protocols
from benchmarks.models import Benchmark, Item
from benchmarks.protocols import Protocol
from core.errors import NotFound
from humaneval.models import ItemRole, Study
from humaneval.services.results import study_results
from modeleval.analysis.ablations import ablation_tables
from modeleval.analysis.counterfactual import counterfactual_tables
from modeleval.analysis.labels import comparable_key, run_label, run_setting
from modeleval.analysis.sweep import frame_sweep
from modeleval.models import Run
from modeleval.runs import run_scoring
from modeleval.runs.prediction_files import gold_lines
from scoring.tables import breakdowns, family_record, paper_tables, radar_chart
from scoring.uncertainty import TABLE_LEVEL

from .imagination_gap import imagination_gap

HUMAN, MODEL, CHANCE = "human", "model", "chance"
CHANCE_NAMES = {"random": "Random", "random++": "Random++"}


def result_row(name: str, kind: str, result: dict | None, **extra) -> dict:
    return {"name": name, "kind": kind, "n": (result or {}).get("n_items"), "result": result, **extra}


def human_row_name(study: Study) -> str:
    return f"Human — {study.name}"


def model_row(run: Run, result: dict | None) -> dict:
    """A run's row, named by its label (model x condition x visual input x subset x settings); rows
    with the same `comparable` key are ranked against each other."""
    return result_row(run_label(run), MODEL, result, run=run.pk, setting=run_setting(run),
                      comparable=comparable_key(run))


def chance_rows(family: str, items, by: list[str], protocol: Protocol | None = None) -> list[dict]:
    """The family's chance rows on these items' gold lines under the protocol of the runs beside them
    (an item written here run circular is scored over its rotations, so Random is 1/n^n, not 1/n):
    expected values of `chance_levels`."""
    guessers = family_record(family).chance_rows
    if not guessers:
        return []
    levels = scoring.chance_levels(family, gold_lines(items, protocol), by=by)
    if not levels["n_items"]:
        return []
    return [
        result_row(CHANCE_NAMES.get(guesser, guesser), CHANCE, {
            "family": levels["family"],
            "n_items": levels["n_items"],
            "overall": levels[guesser]["overall"],
            "by": levels[guesser]["by"],
            "errors": levels["errors"],
        })
        for guesser in guessers
        if levels.get(guesser) is not None
    ]


def chance_protocol(runs, items: list[Item]) -> Protocol:
    """The variants the runs beside the chance rows are scored on (circular if one is, flip if one is),
    unless the items already are their variants (imported rotations `X-1`, mirrored rows)."""
    wanted = [Protocol.from_data(run.protocol) for run in runs]
    imported_rotations = any(re.search(r"-[0-9]$", item.scoring_id) for item in items)
    imported_flips = any((item.tags or {}).get(protocols.IMAGE_VARIANT) == protocols.FLIPPED for item in items)
    return Protocol(circular=any(p.circular for p in wanted) and not imported_rotations,
                    flip=any(p.flip for p in wanted) and not imported_flips)


def study_scored_items(study: Study) -> list[Item]:
    return list(
        Item.objects.filter(studyitem__study=study, studyitem__role=ItemRole.SCORED).order_by("pk")
    )


def rescore_run(run: Run, items: list[Item], by: list[str]) -> dict:
    """A run graded again on these items only (those it covers: its own items, or items it has
    predictions for), from its stored predictions, as `score_run` grades the whole run."""
    wanted = [item.pk for item in items]
    covered = set(run.items.filter(pk__in=wanted).values_list("pk", flat=True))
    covered |= set(run.predictions.filter(item_id__in=wanted).values_list("item_id", flat=True).distinct())
    chosen = {item.pk: item for item in items if item.pk in covered}
    gold, lines = run_scoring.scoring_lines(run, chosen, run.predictions.filter(item_id__in=list(chosen)))
    return scoring.score(run.benchmark.family, gold, lines, by=by, sbert=False, ci=TABLE_LEVEL, units=True)


def without_units(result: dict | None) -> dict | None:
    """A result less its units' tallies: the tables have used them to pair rows; they are long."""
    return None if result is None else {key: value for key, value in result.items() if key != "units"}


def benchmark_results(benchmark: Benchmark, study: Study | None = None) -> dict:
    """The rows (chance, human, model) of the benchmark's paper tables, the tables and the radar chart.

    Returns {"benchmark", "family", "study", "tables", "radar", "rows": [{"name", "kind", "n", "result"}]}
    plus the main table's "by", "metrics" and "columns" (what the leaderboard's JSON always carried).
    Rows without a scored item are left out, except the study's own human row.
    """
    family = benchmark.family
    by = breakdowns(family)
    runs = (
        Run.objects.filter(benchmark=benchmark, status=Run.Status.FINISHED)
        .select_related("model", "benchmark")
        .order_by("pk")
    )
    if study is None:
        studies = list(Study.objects.filter(benchmark=benchmark).select_related("benchmark").order_by(
            "created_at", "pk"))
        humans = [result_row(human_row_name(each), HUMAN, study_results(each, units=True)) for each in studies]
        by_study = [(each, row["result"]) for each, row in zip(studies, humans, strict=True) if row["n"]]
        humans = [row for row in humans if row["n"]]
        models = [model_row(run, run.scores) for run in runs]
        items = list(Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).order_by("pk"))
    else:
        if study.benchmark_id != benchmark.pk:
            raise NotFound("No such study on this benchmark.", field="study")
        humans = [result_row(human_row_name(study), HUMAN, study_results(study, units=True))]
        by_study = []  # one study: no changed-scene pair of studies
        items = study_scored_items(study)
        models = [model_row(run, rescore_run(run, items, by)) for run in runs]
    models = [row for row in models if row["n"]]
    by_run = {run.pk: run for run in runs}
    rows = chance_rows(family, items, by, chance_protocol(runs, items)) + humans + models
    tables = paper_tables(family, rows)
    gap = imagination_gap([(by_run[row["run"]], row["result"]) for row in models], by_study)  # before units go
    rows = [{**row, "result": without_units(row["result"])} for row in rows]
    return {
        "benchmark": benchmark.slug,
        "family": family,
        "study": study.pk if study is not None else None,
        "tables": tables,
        "radar": radar_chart(family, [row for row in rows if row["kind"] != CHANCE]),
        "rows": rows,
        "ablations": ablation_tables([(by_run[row["run"]], row["result"]) for row in models], tables[0]["metrics"]),
        "counterfactual": counterfactual_tables(list(runs)),  # Hypo3D Tables 3-4
        "imagination_gap": gap,  # changed scene given minus imagined, per change type (results.imagination_gap)
        "sweep": frame_sweep([(by_run[row["run"]], row["result"]) for row in models],
                             (tables[0]["metrics"] or [None])[0]),
        "by": tables[0]["by"],
        "metrics": tables[0]["metrics"],
        "columns": tables[0]["columns"],
    }


def human_result(results: dict) -> dict | None:
    """The study's human row's result in `benchmark_results(benchmark, study)`."""
    return next((row["result"] for row in results["rows"] if row["kind"] == HUMAN), None)


def find_table(results: dict, key: str | None) -> dict | None:
    """The table named `key` (the main table when None); None when the family has no such table."""
    if not key:
        return results["tables"][0]
    return next((table for table in results["tables"] if table["key"] == key), None)
