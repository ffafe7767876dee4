"""Ablation tables: the runs of one model that differ on one axis of their setting (prompt condition,
visual input, item subset, protocol, in-context examples, per-tag prompts, generation settings), each
beside the run with the main value of that axis and its difference from it, as the papers' ablation
tables report them (Hypo3D Tables 2, 11-13; 3DSRBench's vanilla / circular / flip side by side).

One table per axis and per setting held fixed (the other axes, the visual input aside: each model is
compared on its own input); its rows are every varied model's runs, the main one first."""

import json

from .labels import AXES, axis_text, main_value, run_label, run_setting


def _key(value) -> str:
    return json.dumps(value, sort_keys=True)


def _overall(result: dict | None, metrics: list[str]) -> dict:
    overall = (result or {}).get("overall") or {}
    return {metric: overall.get(metric) for metric in metrics}


def ablation_tables(entries: list[tuple], metrics: list[str]) -> list[dict]:
    """`entries` are (run, result) of finished runs; a table for each axis on which some model has
    runs that differ, holding the rest of the setting fixed."""
    settings = {run.pk: run_setting(run) for run, _ in entries}
    tables = []
    for axis in AXES:
        ignored = {axis, "visual_input"}
        groups: dict[str, list[tuple]] = {}
        for run, result in entries:
            fixed = {k: v for k, v in settings[run.pk].items() if k not in ignored}
            groups.setdefault(_key(fixed), []).append((run, result))
        for fixed, members in groups.items():
            per_model: dict[tuple, list[tuple]] = {}
            for run, result in members:
                per_model.setdefault((run.model_id, settings[run.pk]["visual_input"] if axis != "visual_input"
                                      else ""), []).append((run, result))
            rows = []
            for runs in per_model.values():
                if len({_key(settings[run.pk][axis]) for run, _ in runs}) < 2:
                    continue
                reference = next((entry for entry in runs
                                  if settings[entry[0].pk][axis] == main_value(entry[0], axis)), None)
                base = _overall(reference[1], metrics) if reference else {}
                ordered = sorted(runs, key=lambda entry: (entry is not reference, entry[0].pk))
                for entry in ordered:
                    run, result = entry
                    values = _overall(result, metrics)
                    rows.append({
                        "name": run_label(run), "run": run.pk, "model": run.model.name,
                        "value": axis_text(axis, settings[run.pk][axis]), "main": entry is reference,
                        "overall": values,
                        "difference": {metric: None if values[metric] is None or base.get(metric) is None
                                       else round(values[metric] - base[metric], 2) for metric in metrics},
                    })
            if rows:
                held = {k: axis_text(k, v) for k, v in json.loads(fixed).items() if v != main_value(members[0][0], k)}
                title = f"{axis.replace('_', ' ')} ablation" + (
                    f" ({', '.join(held.values())})" if held else "")
                tables.append({"axis": axis, "title": title, "fixed": held, "metrics": metrics, "rows": rows})
    return tables
