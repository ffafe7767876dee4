"""Each family's paper tables and radar chart, built from `score()` results (one row per human
study, model run or chance level), and their exports (CSV rows, LaTeX).

The layouts are facts of the family (`Family.tables`, `radar_axis`, `question_types` in each family
module); this file only reads them. A row is `{"name", "kind", "n", "result"}` (or the tuple
`(name, kind, result)`), where `result` is a `score()` output or anything with its `overall` and
`by` keys. A cell is one value per metric of the table: `{"metric", "value", "std", "ci", "interval",
"best", "separated"}`, `std` being the spread over repeats the scorer reports as `<metric>_std` (None
without repeats), `ci` its interval `[low, high]` where the result has one (`score(..., ci=)`), and
`interval` that interval as the table prints it (`interval_text`).

As in the papers, the best model is marked: per column and metric, the highest value among model
rows when there are two or more (human and chance rows are references, not contestants); a metric
with no better direction (Not-Sure rate, a difference) is never marked. Only comparable rows compete:
model rows with the same `comparable` key (runs with the same prompt, input, items and settings).
Where the rows carry the data to test it, the best is marked only where it is separated from the
next (`scoring.ranking`: `separated` True or False; None where untested); `best_rule` says how.
`human_comparisons` sets each model row against each human row with its participants' tallies
(paired over shared items, participants resampled; `ranking.human_comparisons`).
"""

from .engine import get_family
from .family import Family, Table
from .ranking import best_cells, best_rule, human_comparisons
from .uncertainty import unavailable_text

OVERALL = "Overall"
GROUP_AVERAGE = "Avg."
RANKED_KIND = "model"


def family_record(family: str | Family) -> Family:
    return family if isinstance(family, Family) else get_family(family)


def breakdowns(family: str | Family) -> list[str]:
    """The `by` a result is scored with so it fills every paper table and the radar chart."""
    record = family_record(family)
    specs = [spec for table in record.tables for spec in table.breakdowns]
    if record.radar_axis:
        specs.append(record.radar_axis)
    return list(dict.fromkeys(specs))


def as_rows(rows) -> list[dict]:
    """Rows as dicts; a `(name, kind, result)` tuple is accepted too."""
    out = []
    for row in rows:
        if not isinstance(row, dict):
            name, kind, result = row
            row = {"name": name, "kind": kind, "n": (result or {}).get("n_items"), "result": result}
        out.append(row)
    return out


def _ordered(values, order) -> list[str]:
    """The paper's order first, then any other value sorted."""
    return [v for v in order if v in values] + sorted(set(values) - set(order))


def _keys(rows: list[dict]) -> set[str]:
    return {key for row in rows for key in ((row["result"] or {}).get("by") or {})}


def _values_after(prefix: str, keys: set[str]) -> set[str]:
    return {key[len(prefix):] for key in keys if key.startswith(prefix)}


def columns(table: Table, rows: list[dict]) -> list[dict]:
    """Overall, then the table's breakdown columns found in any row's result: `{"label", "group", "key"}`
    (key None: the overall values; group "" where the table has no `within`)."""
    cols = [{"label": OVERALL, "group": "", "key": None}]
    if table.by is None:
        return cols
    keys = _keys(rows)
    if table.within is None:
        prefix = f"{table.by}="
        return cols + [
            {"label": value, "group": "", "key": prefix + value}
            for value in _ordered(_values_after(prefix, keys), table.order)
        ]
    cross = f"{table.within}+{table.by}="
    crossed = _values_after(cross, keys)
    groups = _values_after(f"{table.within}=", keys) | {pair.split("+", 1)[0] for pair in crossed}
    for group in _ordered(groups, table.within_order):
        inner = [
            {"label": value, "group": group, "key": f"{cross}{group}+{value}"}
            for value in _ordered(_values_after(f"{group}+", crossed), table.order)
        ]
        average = [{"label": GROUP_AVERAGE, "group": group, "key": f"{table.within}={group}"}]
        if table.group_average == "first":
            inner = average + inner
        elif table.group_average == "last":
            inner = inner + average
        cols += inner
    return cols


def _value(table: Table, values: dict, metric: str, cluster: str | None = None) -> tuple:
    """(value, std, ci, note) of one metric of a cell; `note` says why a clustered value has no
    interval (one participant), else None."""
    for name, minuend, subtrahend in table.differences:
        if name == metric:
            a, b = values.get(minuend), values.get(subtrahend)
            return (None if a is None or b is None else round(a - b, 2)), None, None, None
    value, intervals = values.get(metric), values.get("ci") or {}
    ci = intervals.get(metric)
    note = unavailable_text(cluster) if cluster and value is not None and metric in intervals and ci is None else None
    return value, values.get(f"{metric}_std"), ci, note


def build_table(table: Table, rows) -> dict:
    """One table: its header (`columns` labels, `groups` with their spans in cells) and one row per
    result, each cell a list over the table's metrics."""
    rows = as_rows(rows)
    cols = columns(table, rows)
    grid = []
    for row in rows:
        result = row["result"] or {}
        cells = []
        for col in cols:
            values = (result.get("overall") if col["key"] is None else (result.get("by") or {}).get(col["key"]))
            values = values or {}
            cluster = (result.get("uncertainty") or {}).get("cluster")
            cells.append([_value(table, values, metric, cluster) for metric in table.metrics])
        grid.append(cells)
    ranked = [r for r, row in enumerate(rows) if row["kind"] == RANKED_KIND]
    cohorts: dict[str, list[int]] = {}
    for r in ranked:
        cohorts.setdefault(rows[r].get("comparable") or "", []).append(r)
    best: dict = {}
    comparisons: list[dict] = []
    for members in cohorts.values():
        found, compared = best_cells(table.metrics, table.not_ranked, [col["key"] for col in cols], rows, grid,
                                     members)
        best.update(found)
        comparisons += compared
    titles = [f"{col['group']} {col['label']}" if col["group"] else col["label"] for col in cols]
    for entry in comparisons:
        entry["column"] = titles[entry["column"]]
    groups: list[dict] = []
    for col in cols:
        if groups and groups[-1]["label"] == col["group"]:
            groups[-1]["span"] += len(table.metrics)
        else:
            groups.append({"label": col["group"], "span": len(table.metrics)})
    return {
        "key": table.key,
        "title": table.title,
        "by": table.by if table.within is None else f"{table.within}+{table.by}",
        "metrics": list(table.metrics),
        "columns": [col["label"] for col in cols],
        "groups": [col["group"] for col in cols],
        "group_spans": groups if table.within else [],
        "keys": [col["key"] for col in cols],
        "interval_style": table.interval_style,
        "best_rule": best_rule(comparisons),
        "comparisons": comparisons,
        "human_comparisons": human_comparisons(table.metrics, table.not_ranked, [col["key"] for col in cols], titles,
                                               rows),
        "rows": [
            {
                "name": row["name"],
                "kind": row["kind"],
                "n": row["n"],
                "cells": [
                    [
                        {
                            "metric": metric,
                            "value": value,
                            "std": std,
                            "ci": ci,
                            "interval": note or interval_text(value, ci, table.interval_style),
                            "best": (r, c, m) in best and best[(r, c, m)] is not False,
                            "separated": best.get((r, c, m)),
                        }
                        for m, (metric, (value, std, ci, note)) in enumerate(zip(table.metrics, cell,
                                                                                strict=True))
                    ]
                    for c, cell in enumerate(cells)
                ],
            }
            for r, (row, cells) in enumerate(zip(rows, grid, strict=True))
        ],
    }


def paper_tables(family: str | Family, rows) -> list[dict]:
    """The family's paper tables for these rows, the main one first; an optional table (3DSRBench's
    viewpoint splits) only when some result has its breakdown."""
    record = family_record(family)
    rows = as_rows(rows)
    keys = _keys(rows)
    tables = []
    for table in record.tables:
        if table.optional and not _shown(record, table, rows, keys):
            continue
        tables.append(build_table(table, rows))
    return tables


def _shown(record: Family, table: Table, rows: list[dict], keys: set[str]) -> bool:
    """An optional table is shown when some result has its breakdown, or, for one holding the family's
    optional metrics (Hypo3D's SBERT and judge score), one of them."""
    extra = [metric for metric in table.metrics if metric in record.optional_metrics]
    if extra:
        return any(metric in ((row["result"] or {}).get("overall") or {}) for row in rows for metric in extra)
    return any(key.startswith(f"{spec}=") for key in keys for spec in table.breakdowns)


def paper_table(family: str | Family, rows) -> dict:
    """The main table flattened: Overall, then each value of its finest breakdown (`level+task=L1+collision`
    is the column `L1+collision`), for callers that want one row of columns."""
    main = family_record(family).tables[0]
    spec = main.breakdowns[-1] if main.breakdowns else None
    flat = Table(main.key, main.title, main.metrics, by=spec, differences=main.differences,
                 not_ranked=main.not_ranked, interval_style=main.interval_style)
    return build_table(flat, rows)


def radar_chart(family: str | Family, rows) -> dict:
    """One series per row: the main table's headline metric per value of the family's radar tag (None
    where the result has no item of that value), over the axes found in any result, in the paper's order."""
    record = family_record(family)
    rows = as_rows(rows)
    tag, metric = record.radar_axis, record.tables[0].metrics[0]
    prefix = f"{tag}="
    axes = _ordered(_values_after(prefix, _keys(rows)), record.question_types)
    series = [
        {
            "name": row["name"],
            "kind": row["kind"],
            "values": [((row["result"] or {}).get("by") or {}).get(prefix + axis, {}).get(metric) for axis in axes],
        }
        for row in rows
    ]
    return {"by": tag, "metric": metric, "axes": axes, "series": series}


# --- exports ------------------------------------------------------------------------------------


def column_titles(table: dict) -> list[str]:
    """`Overall`, `movement`, `L1 collision`, `L1 Avg.`: a column's group, then its label."""
    return [f"{group} {label}" if group else label for group, label in zip(table["groups"], table["columns"],
                                                                            strict=True)]


def csv_rows(table: dict) -> list[list]:
    """The table as CSV rows: a header `row, kind, n, <column> <metric>...` (with `<column> <metric> std`
    after each metric when some row has a spread, `... ci low`, `... ci high` when some row has an
    interval), then one line per row; an empty value is ''."""
    spreads = any(v["std"] is not None for row in table["rows"] for cell in row["cells"] for v in cell)
    intervals = any(v.get("ci") or v.get("interval") for row in table["rows"] for cell in row["cells"] for v in cell)
    header = ["row", "kind", "n"]
    for title in column_titles(table):
        for metric in table["metrics"]:
            header.append(f"{title} {metric}")
            if spreads:
                header.append(f"{title} {metric} std")
            if intervals:
                header += [f"{title} {metric} ci low", f"{title} {metric} ci high"]
    lines = [header]
    for row in table["rows"]:
        line = [row["name"], row["kind"], "" if row["n"] is None else row["n"]]
        for cell in row["cells"]:
            for v in cell:
                line.append("" if v["value"] is None else v["value"])
                if spreads:
                    line.append("" if v["std"] is None else v["std"])
                if intervals:
                    line += list(v["ci"]) if v.get("ci") else [v.get("interval") or "", v.get("interval") or ""]
        lines.append(line)
    return lines


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "±": r"$\pm$", "—": "---", "–": "--",
}


def latex_escape(text) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in str(text))


def interval_text(value: float | None, ci: list | None, style: str = "pm") -> str | None:
    """A cell's interval as its table prints it: `± 2.10` (the longer side) or `[60.20, 64.40]`."""
    if value is None or not ci:
        return None
    if style == "pm":
        return f"± {max(ci[1] - value, value - ci[0]):.2f}"
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def latex_number(
    value: float | None, std: float | None = None, best: bool = False, ci: list | None = None, style: str = "pm",
    note: str | None = None,
) -> str:
    """Two decimals, `$\\pm$ std` when repeated, the interval as `$\\pm$ half-width` (style "pm", its
    longer side) or `[low, high]` (style "brackets"), bold when best; `--` when there is no value."""
    if value is None:
        return "--"
    text = f"{value:.2f}"
    if std is not None:
        text += f" $\\pm$ {std:.2f}"
    if ci:
        text += " " + latex_escape(interval_text(value, ci, style))
    elif note:
        text += f" ({latex_escape(note)})"
    return f"\\textbf{{{text}}}" if best else text


def latex_table(table: dict) -> str:
    """The table as a booktabs `table` environment: a header row of groups (with \\cmidrule) where the
    table has them, one of columns, one of metrics when there are several; a \\midrule between kinds
    of rows (chance, human, model); numbers to 2 decimals, the best in bold."""
    metrics = table["metrics"]
    n_metrics = len(metrics)
    n_values = len(table["columns"]) * n_metrics
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        f"\\caption{{{latex_escape(table['title'])}}}",
        f"\\begin{{tabular}}{{l{'r' * n_values}}}",
        r"\toprule",
    ]
    if table["group_spans"]:
        heads, rules, start = [""], [], 2
        for group in table["group_spans"]:
            span = group["span"]
            heads.append(f"\\multicolumn{{{span}}}{{c}}{{{latex_escape(group['label'])}}}" if group["label"]
                         else " & ".join([""] * span))
            if group["label"]:
                rules.append(f"\\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        lines.append(" & ".join(heads) + r" \\")
        if rules:
            lines.append(" ".join(rules))
    labels = [latex_escape(label) for label in table["columns"]]
    if n_metrics == 1:
        lines.append(" & ".join(["Model", *labels]) + r" \\")
    else:
        lines.append(" & ".join(["Model", *(f"\\multicolumn{{{n_metrics}}}{{c}}{{{label}}}" for label in labels)])
                     + r" \\")
        lines.append(" & ".join(["", *(latex_escape(m) for _ in labels for m in metrics)]) + r" \\")
    lines.append(r"\midrule")
    previous = None
    for row in table["rows"]:
        if previous is not None and row["kind"] != previous:
            lines.append(r"\midrule")
        previous = row["kind"]
        values = [latex_number(v["value"], v["std"], v["best"], v.get("ci"), table.get("interval_style", "pm"),
                               None if v.get("ci") else v.get("interval"))
                  for cell in row["cells"] for v in cell]
        lines.append(" & ".join([latex_escape(row["name"]), *values]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if table.get("best_rule"):
        lines.append(f"\\par\\smallskip{{\\footnotesize {latex_escape(table['best_rule'])}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
