"""Each family's paper table: which tag the columns break down by and which metrics each cell
shows, and the table itself built from `score()` results (one row per human study or model run);
and the radar chart by question type beside it, from the same results.

The higher-is-better metrics get the row holding the best value marked per column, as the papers
bold it; Not-Sure rate is not a score, so nothing is marked for it."""

PAPER_LAYOUT = {
    "hypo3d": ("change_type", ("EM", "PM")),
    "3dsrbench": ("category", ("circular", "vanilla")),
    "causalspatial": ("level+task", ("accuracy", "not_sure_rate")),
    "spatial457": ("level", ("accuracy",)),
    "m3verse": ("state_type+capabilities", ("score", "hallucination_score", "factual_score")),
}
NOT_RANKED = {"not_sure_rate"}
# The radar chart's axes, one per value of this tag (Hypo3D Fig. 5: EM by question type; 3DSRBench
# Fig. 1: by category); it plots the first metric of the family's layout.
RADAR_AXES = {
    "hypo3d": "question_type",
    "3dsrbench": "category",
    "causalspatial": "task",
    "spatial457": "level",
    "m3verse": "capabilities",
}


def breakdowns(family: str) -> list[str]:
    """The `by` a result is scored with so it fills both the paper table and the radar chart."""
    return list(dict.fromkeys((PAPER_LAYOUT[family][0], RADAR_AXES[family])))


def paper_table(family: str, results: list[tuple[str, str, dict]]) -> dict:
    """Columns (overall, then each breakdown value) and one row per (name, kind, result); each cell
    is a list of {"value", "best"} for the layout's metrics."""
    by, metrics = PAPER_LAYOUT[family]
    groups = sorted(
        {key for _, _, result in results for key in result.get("by", {}) if key.startswith(by + "=")}
    )
    columns = [("Overall", None)] + [(key.split("=", 1)[1], key) for key in groups]
    values = [
        [
            [(result["overall"] if key is None else result["by"].get(key, {})).get(metric) for metric in metrics]
            for _, key in columns
        ]
        for _, _, result in results
    ]
    best = {
        (c, m): max(v for row in values if (v := row[c][m]) is not None)
        for c in range(len(columns))
        for m, metric in enumerate(metrics)
        if metric not in NOT_RANKED and any(row[c][m] is not None for row in values)
    }
    rows = [
        {
            "name": name,
            "kind": kind,
            "n": result.get("n_items"),
            "cells": [
                [{"value": v, "best": len(results) > 1 and v is not None and v == best.get((c, m))}
                 for m, v in enumerate(cell)]
                for c, cell in enumerate(row_values)
            ],
        }
        for (name, kind, result), row_values in zip(results, values, strict=True)
    ]
    return {"by": by, "metrics": metrics, "columns": [label for label, _ in columns], "rows": rows}


def radar_chart(family: str, results: list[tuple[str, str, dict]]) -> dict:
    """One series per (name, kind, result): the metric per value of the radar tag (None where the
    result has no item of that value), over the axes found in any result, sorted."""
    tag, metric = RADAR_AXES[family], PAPER_LAYOUT[family][1][0]
    prefix = tag + "="
    axes = sorted(
        {key[len(prefix):] for _, _, result in results for key in result.get("by", {}) if key.startswith(prefix)}
    )
    series = [
        {
            "name": name,
            "kind": kind,
            "values": [result.get("by", {}).get(prefix + axis, {}).get(metric) for axis in axes],
        }
        for name, kind, result in results
    ]
    return {"by": tag, "metric": metric, "axes": axes, "series": series}
