"""The best model of each cell of a paper table, marked only where the data separate it from the next.

Per column and ranked metric, the model row with the highest value is compared with the next one:
- both rows carry their units' tallies (`score(..., units=True)`): a paired bootstrap on the units
  they share (`comparison.paired_tallies`), its p-values Holm-corrected across the table; the best
  is marked where the corrected p-value is under 5 %;
- else both carry intervals (`score(..., ci=...)`): marked where the intervals do not overlap;
- else nothing can be tested: marked as the papers do, and the table says so.
A tie at the top is never marked once the rows can be tested.

`human_comparisons`: every model row against every human row carrying its participants' tallies, per
column and ranked metric, by `comparison.clustered_pairs` (participants resampled), Holm-corrected
across the table's model-vs-human comparisons.
"""

from .comparison import clustered_pairs, holm, paired_tallies

SIGNIFICANCE = 0.05
TABLE_RESAMPLES = 1000
PAIRED, INTERVALS, UNTESTED = "paired bootstrap", "intervals", "untested"


def _paired(first: dict, second: dict, key: str | None, metric: str) -> dict | None:
    """The paired bootstrap of two results on their shared units, or None without their tallies."""
    column = f"{'' if key is None else key}|{metric}"
    first_units, second_units = first.get("units") or {}, second.get("units") or {}
    if column not in first_units.get("tallies", {}) or column not in second_units.get("tallies", {}):
        return None
    a, b = (
        {found["ids"][u]: (s, n) for u, s, n in zip(*(found["tallies"][column][part] for part in ("unit", "sum", "n")),
                                                      strict=True)}
        for found in (first_units, second_units)
    )
    shared = sorted(set(a) & set(b))
    if not shared:
        return None
    return paired_tallies([a[u][0] for u in shared], [a[u][1] for u in shared], [b[u][0] for u in shared],
                          [b[u][1] for u in shared], resamples=TABLE_RESAMPLES)


def best_cells(metrics, not_ranked, keys, rows: list[dict], grid, ranked: list[int]) -> tuple[dict, list[dict]]:
    """({(row, column, metric index): separated or None when untested} for each best cell, the comparisons).

    grid[row][column][metric] is (value, std, ci)."""
    candidates: dict[tuple[int, int, int], bool | None] = {}
    comparisons: list[dict] = []
    if len(ranked) < 2:
        return candidates, comparisons
    for c, key in enumerate(keys):
        for m, metric in enumerate(metrics):
            scored = sorted((r for r in ranked if grid[r][c][m][0] is not None), key=lambda r: -grid[r][c][m][0])
            if metric in not_ranked or not scored:
                continue
            top = grid[scored[0]][c][m][0]
            leaders = [r for r in scored if grid[r][c][m][0] == top]
            following = scored[len(leaders)] if len(scored) > len(leaders) else None
            results = [rows[r]["result"] or {} for r in scored]
            test = None if following is None else _paired(results[0], rows[following]["result"] or {}, key, metric)
            if len(leaders) > 1:
                tested = all(rows[r]["result"] and (rows[r]["result"].get("units") or grid[r][c][m][2])
                             for r in leaders)
                for r in leaders:
                    candidates[(r, c, m)] = False if tested else None
                continue
            best = leaders[0]
            comparison = {"column": c, "metric": metric, "best": rows[best]["name"], "next": None
                          if following is None else rows[following]["name"], "method": UNTESTED}
            if test is not None:
                comparison.update(method=PAIRED, difference=test["difference"], ci=test["ci"],
                                  p_value=test["p_value"])
            elif following is not None and grid[best][c][m][2] and grid[following][c][m][2]:
                comparison.update(method=INTERVALS,
                                  separated=grid[best][c][m][2][0] > grid[following][c][m][2][1])
            comparison["cell"] = (best, c, m)
            comparisons.append(comparison)
    tested = [entry for entry in comparisons if entry["method"] == PAIRED]
    for entry, adjusted in zip(tested, holm([entry["p_value"] for entry in tested]), strict=True):
        entry["p_holm"] = round(adjusted, 4)
        entry["separated"] = adjusted < SIGNIFICANCE
    for entry in comparisons:
        candidates[entry.pop("cell")] = entry.get("separated")
    return candidates, comparisons


def best_rule(comparisons: list[dict]) -> str:
    """One sentence under the table: how its bold was decided."""
    methods = {entry["method"] for entry in comparisons}
    if not comparisons or methods == {UNTESTED}:
        return "Bold: the highest model value; no interval or paired data to test it against the next."
    parts = []
    if PAIRED in methods:
        n = sum(entry["method"] == PAIRED for entry in comparisons)
        parts.append(f"a paired bootstrap on shared items separates it from the next model (Holm-corrected "
                     f"over {n} comparisons, {SIGNIFICANCE:.0%})")
    if INTERVALS in methods:
        parts.append("its interval does not overlap the next model's")
    unseparated = sum(entry.get("separated") is False for entry in comparisons)
    tail = f"; {unseparated} best value(s) not distinguishable from the next are not bold" if unseparated else ""
    return "Bold: the best model only where " + " or ".join(parts) + tail + "."


def human_comparisons(metrics, not_ranked, keys, titles, rows: list[dict]) -> list[dict]:
    """[{"model", "human", "column", "metric", "difference" (model - human, points), "ci", "p_value",
    "p_holm", "separated", "n_participants"}]; with one participant `ci`, `p_value` and `separated`
    are None. Rows without tallies (`score(..., units=True)`) are left out."""
    humans = [row for row in rows if row["kind"] == "human" and ((row["result"] or {}).get("units") or {}).get(
        "clusters") is not None]
    models = [row for row in rows if row["kind"] == "model" and (row["result"] or {}).get("units")]
    found = []
    for human in humans:
        for model in models:
            for key, title in zip(keys, titles, strict=True):
                for metric in metrics:
                    if metric in not_ranked:
                        continue
                    column = f"{'' if key is None else key}|{metric}"
                    test = clustered_pairs(human["result"]["units"], model["result"]["units"], column,
                                           resamples=TABLE_RESAMPLES)
                    if test is None:
                        continue
                    found.append({"model": model["name"], "human": human["name"], "column": title, "metric": metric,
                                  "difference": test["difference"], "ci": test["ci"], "p_value": test["p_value"],
                                  "n_participants": test["n_clusters"]})
    tested = [entry for entry in found if entry["p_value"] is not None]
    for entry, adjusted in zip(tested, holm([entry["p_value"] for entry in tested]), strict=True):
        entry["p_holm"] = round(adjusted, 4)
        entry["separated"] = adjusted < SIGNIFICANCE
    for entry in found:
        entry.setdefault("p_holm", None)
        entry.setdefault("separated", None)
    return found
