"""The imagination gap (HypoLab's experiment, in no paper): per model and for humans, the score
given the changed scene (a run or study with `scene_state: changed`, shown the change's after-state)
minus the score imagining the change (its partner with `imagined`, the papers' condition), overall and
per change type, in points, with a 95 % interval and a paired test on the items both were scored on.

- A model: each `changed` run is paired with the run of the same model whose setting is the same but
  for the scene state (the closest by id: a recipe's pair, `hypo3d-imagination-gap`). Both rows carry
  their units' tallies (`score(..., units=True)`); the difference, its interval and p-value are the
  paired bootstrap over their shared units that the paper tables rank models with
  (`scoring.ranking`'s pairing, `comparison.paired_tallies`).
- Humans: each `changed` study is paired with the benchmark's `imagined` study closest by id. The two
  studies' participants differ, so the pairing is by item: each item's answers in each study are
  summed (its tallies), and the items both scored are resampled together (`paired_tallies`).
P-values are Holm-corrected across the table (`comparison.holm`), as the tables' comparisons are."""

import json

from benchmarks.models import ChangeType
from modeleval.analysis.labels import run_label, run_setting
from modeleval.prompting import scene_state
from scoring.comparison import holm, paired_tallies
from scoring.ranking import TABLE_RESAMPLES, _paired

METRICS = ("EM", "PM")
COLUMNS = [(None, "All")] + [(f"change_type={value}", label) for value, label in ChangeType.choices]


def _value(result: dict, key: str | None, metric: str):
    part = (result or {}).get("overall") if key is None else ((result or {}).get("by") or {}).get(key)
    return (part or {}).get(metric)


def _cells(changed: dict, imagined: dict, test) -> dict:
    """{metric: [a cell per column]}."""
    cells: dict = {}
    for metric in METRICS:
        for key, title in COLUMNS:
            found = test(changed, imagined, key, metric)
            cells.setdefault(metric, []).append({"column": title, "key": key or "", "metric": metric,
                          "changed": _value(changed, key, metric), "imagined": _value(imagined, key, metric),
                          "difference": None if found is None else found["difference"],
                          "ci": None if found is None else found["ci"],
                          "p_value": None if found is None else found["p_value"],
                          "n_items": None if found is None else found["n_units"]})
    return cells


def _without_state(run) -> str:
    setting = run_setting(run)
    setting["inputs"] = {name: value for name, value in setting["inputs"].items() if name != "scene_state"}
    return json.dumps(setting, sort_keys=True)


def model_pairs(entries: list[tuple]) -> list[tuple]:
    """(changed run, its result, imagined run, its result) for each `changed` run that has a partner."""
    imagined = [(run, result) for run, result in entries if not scene_state.is_changed(run.inputs)]
    pairs = []
    for run, result in entries:
        if not scene_state.is_changed(run.inputs):
            continue
        setting = _without_state(run)
        partners = [e for e in imagined if e[0].model_id == run.model_id and _without_state(e[0]) == setting]
        if partners:
            partner = min(partners, key=lambda e: (abs(e[0].pk - run.pk), e[0].pk))
            pairs.append((run, result, *partner))
    return pairs


def _item_tallies(units: dict, column: str) -> dict:
    """{item: [sum, n]} of a human row's answers (its units name their item)."""
    found = (units.get("tallies") or {}).get(column)
    names = units.get("items") or units.get("ids") or []
    per_item: dict = {}
    for u, total, n in zip(*(found[part] for part in ("unit", "sum", "n")), strict=True) if found else ():
        tally = per_item.setdefault(names[u], [0.0, 0.0])
        tally[0] += total
        tally[1] += n
    return per_item


def item_paired(changed: dict, imagined: dict, key: str | None, metric: str) -> dict | None:
    """Two human rows of different participants, paired by item: each item's answers summed per study,
    the shared items resampled (`paired_tallies`); None where they share no scored item."""
    column = f"{key or ''}|{metric}"
    a, b = (_item_tallies((result or {}).get("units") or {}, column) for result in (changed, imagined))
    shared = sorted(item for item in set(a) & set(b) if a[item][1] and b[item][1])
    if not shared:
        return None
    return paired_tallies([a[i][0] for i in shared], [a[i][1] for i in shared], [b[i][0] for i in shared],
                          [b[i][1] for i in shared], resamples=TABLE_RESAMPLES)


def human_pairs(studies: list[tuple]) -> list[tuple]:
    """(changed study, result, imagined study, result) for each `changed` study with an imagined one."""
    imagined = [(study, result) for study, result in studies if study.scene_state != scene_state.CHANGED]
    return [(study, result, *min(imagined, key=lambda e: (abs(e[0].pk - study.pk), e[0].pk)))
            for study, result in studies if study.scene_state == scene_state.CHANGED and imagined]


def imagination_gap(model_entries: list[tuple], study_entries: list[tuple]) -> dict | None:
    """The table: {"title", "metrics", "columns", "rows": [{"name", "kind", "changed", "imagined",
    "cells": {metric: [{column, key, metric, changed, imagined, difference, ci, p_value, p_holm, n_items}]}}]};
    None when no changed-scene run or study has its imagined partner."""
    rows = []
    for run, result, partner, theirs in model_pairs(model_entries):
        rows.append({"name": run.model.name, "kind": "model", "changed": run.pk, "imagined": partner.pk,
                     "changed_label": run_label(run), "imagined_label": run_label(partner),
                     "cells": _cells(result, theirs, _paired)})
    for study, result, partner, theirs in human_pairs(study_entries):
        rows.append({"name": f"Human — {study.name}", "kind": "human", "changed": study.pk, "imagined": partner.pk,
                     "changed_label": study.name, "imagined_label": partner.name,
                     "cells": _cells(result, theirs, item_paired)})
    if not rows:
        return None
    cells = [cell for row in rows for line in row["cells"].values() for cell in line]
    tested = [cell for cell in cells if cell["p_value"] is not None]
    for cell, adjusted in zip(tested, holm([cell["p_value"] for cell in tested]), strict=True):
        cell["p_holm"] = round(adjusted, 4)
    for cell in cells:
        cell.setdefault("p_holm", None)
    return {"title": "Imagination gap: given the changed scene minus imagining the change (points)",
            "metrics": list(METRICS), "columns": [title for _, title in COLUMNS], "rows": rows}
