"""A recipe's runs as the paper's tables: each finished run a row named by its label, ranked among
comparable rows, and the ablation tables of the runs that differ on one axis (modeleval.analysis.ablations)."""

from scoring.tables import csv_rows, paper_tables

from ..analysis.ablations import ablation_tables
from ..analysis.counterfactual import counterfactual_tables
from ..analysis.labels import comparable_key, run_label, run_setting
from ..analysis.sweep import frame_sweep, sweep_rows
from ..models import Run


def recipe_report(runs: list[Run]) -> dict:
    finished = [run for run in runs if run.status == Run.Status.FINISHED and run.scores]
    rows = [{"name": run_label(run), "kind": "model", "n": run.scores.get("n_items"), "result": run.scores,
             "run": run.pk, "setting": run_setting(run), "comparable": comparable_key(run)} for run in finished]
    family = runs[0].benchmark.family if runs else ""
    tables = paper_tables(family, rows) if rows else []
    metrics = tables[0]["metrics"] if tables else []
    return {"runs": [{"run": run.pk, "label": run_label(run), "status": run.status,
                      "recipe": run.recipe} for run in runs],
            "sweep": frame_sweep([(run, run.scores) for run in finished], (metrics or [None])[0]),
            "tables": tables, "ablations": ablation_tables([(run, run.scores) for run in finished], metrics),
            "counterfactual": counterfactual_tables(finished)}


def _number(value) -> str:
    return "" if value is None or value == "" else (f"{value:.2f}" if isinstance(value, float) else str(value))


def as_text(report: dict) -> str:
    """The tables as tab-separated text, the ablations with each run's difference from the main one."""
    out = []
    for table in report["tables"]:
        out += [f"== {table['title']}", *("\t".join(_number(v) for v in line) for line in csv_rows(table)), ""]
    for table in report["ablations"]:
        metrics = table["metrics"]
        out.append(f"== {table['title']}")
        out.append("\t".join(["run", table["axis"], *metrics, *(f"Δ {m}" for m in metrics)]))
        for row in table["rows"]:
            out.append("\t".join([row["name"], row["value"], *(_number(row["overall"][m]) for m in metrics),
                                  *(_number(row["difference"][m]) for m in metrics)]))
        out.append("")
    for table in report.get("counterfactual") or []:
        out += [f"== {table['title']}", "\t".join(["model", "items", "n", *table["metrics"]])]
        for row in table["rows"]:
            out += ["\t".join([row["model"], group, str(row[group]["n"]),
                               *(_number(row[group].get(metric)) for metric in table["metrics"])])
                    for group in ("affects", "irrelevant") if group in row]
        out.append("")
    if report.get("sweep", {}).get("series"):
        out.append(f"== Frame-count sweep: {report['sweep']['metric']} by frames per video")
        out += ["\t".join(_number(v) for v in line) for line in sweep_rows(report["sweep"])]
        out.append("")
    return "\n".join(out)
