"""Intervals for every number the scorer reports: a seeded bootstrap over the metric's own unit.

A metric is a ratio of sums over rows (or, for 3DSRBench's CircularEval and FlipEval, over
groups of rows), averaged over repeats. The bootstrap resamples *units* with replacement and
recomputes that ratio exactly, so each family's own tally defines the metric in every resample:

- a unit is one item, with all its repeats (CausalSpatial's five runs of an item stay together);
- 3DSRBench's unit is one question with all its rotations and its mirrored twin
  (`Family.unit_key`), the rows its group metrics score as one;
- with a cluster tag (a human row's participant), every row of one cluster is one unit, so
  the interval reflects that participants, not answers, were sampled.

Each unit's tallies are taken once (`family.tally` on the unit alone); a resample is then a
weighted sum of them, one matrix product for all groups and metrics. Intervals are percentile
intervals, widened where needed to hold the reported estimate (a resample distribution that
does not straddle a rounded estimate, or is a single value), and rounded outwards to 2 decimals
(a bound within the estimate's own rounding is the estimate).
"""

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .family import Family, Groups, Outcome
from .records import GoldItem

DEFAULT_SEED = 20240531
DEFAULT_RESAMPLES = 2000
# the level of the intervals in the platform's tables (model runs, human rows, study pages)
TABLE_LEVEL = 0.95
# resamples drawn per matrix product: bounds memory at chunk x units weights
_CHUNK = 200
UNIT_NAMES = {"3dsrbench": "question (its rotations and flip together)"}
# a clustered interval (a human row's) needs this many clusters reached: with one participant there
# is no spread between participants to measure, and the interval is None, not the estimate twice
MIN_CLUSTERS = 2


@dataclass(frozen=True)
class Bootstrap:
    """What `score(..., ci=...)` asks for: the coverage, the seed, how many resamples, the cluster tag."""

    level: float
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    # a tag naming each row's cluster (a human row's participant); rows without it are their own units
    cluster: str | None = None

    def __post_init__(self):
        if not (isinstance(self.level, int | float) and 0 < self.level < 1):
            raise ValueError("the interval level must be a number between 0 and 1, such as 0.95")
        if type(self.seed) is not int:
            raise ValueError("the interval seed must be an integer")
        if type(self.resamples) is not int or self.resamples < 100:
            raise ValueError("at least 100 resamples are needed for an interval")


def resampling_units(family: Family, items: list[GoldItem], cluster: str | None = None) -> list[list[int]]:
    """Row indices of each unit: rows sharing the family's unit key or a cluster value are joined."""
    parent = list(range(len(items)))

    def root(row: int) -> int:
        while parent[row] != row:
            parent[row] = parent[parent[row]]
            row = parent[row]
        return row

    first_row: dict[tuple[str, str], int] = {}
    for row, item in enumerate(items):
        keys = [("unit", family.unit_key(item))]
        value = item.tags.get(cluster) if cluster else None
        if value is not None:
            keys.append(("cluster", repr(value)))
        for key in keys:
            if key in first_row:
                parent[root(row)] = root(first_row[key])
            else:
                first_row[key] = row
    units: dict[int, list[int]] = {}
    for row in range(len(items)):
        units.setdefault(root(row), []).append(row)
    return list(units.values())


def _unit_tallies(
    family: Family, items: list[GoldItem], runs: list[list[Outcome]], groups: Groups, units: list[list[int]]
) -> tuple[list[tuple[object, str]], np.ndarray]:
    """Columns (group key, metric) and an array [unit, column, run, (sum, n)] of each unit's tallies."""
    keys_of_row: list[list[object]] = [[] for _ in items]
    for key, rows in groups.items():
        for row in rows:
            keys_of_row[row].append(key)
    per_unit = []
    columns: dict[tuple[object, str], int] = {}
    for unit in units:
        local: Groups = {}
        for position, row in enumerate(unit):
            for key in keys_of_row[row]:
                local.setdefault(key, []).append(position)
        prepared = family.prepare([items[row] for row in unit])
        tallied = []
        for outcomes in runs:
            tallies = family.tally(prepared, [outcomes[row] for row in unit], local)
            for key, metrics in tallies.items():
                for metric in metrics:
                    columns.setdefault((key, metric), len(columns))
            tallied.append(tallies)
        per_unit.append(tallied)
    table = np.zeros((len(units), len(columns), len(runs), 2))
    for u, tallied in enumerate(per_unit):
        for r, tallies in enumerate(tallied):
            for key, metrics in tallies.items():
                for metric, (total, n) in metrics.items():
                    table[u, columns[(key, metric)], r] = (total, n)
    return list(columns), table


def _resampled_values(
    family: Family, columns, table: np.ndarray, settings: Bootstrap
) -> tuple[np.ndarray, np.ndarray]:
    """[resample, column] twice: each column's metric (mean over repeats) and its population standard
    deviation over repeats (`<metric>_std`), on each resample of the units."""
    n_units = table.shape[0]
    flat = table.reshape(n_units, -1)
    rng = np.random.default_rng(settings.seed)
    counted = np.array([metric in family.counts for _, metric in columns])[None, :, None]
    values, spreads = [], []
    for start in range(0, settings.resamples, _CHUNK):
        size = min(_CHUNK, settings.resamples - start)
        drawn = rng.integers(0, n_units, size=(size, n_units)) + (np.arange(size) * n_units)[:, None]
        weights = np.bincount(drawn.ravel(), minlength=size * n_units).reshape(size, n_units)
        sums = (weights @ flat).reshape(size, *table.shape[1:])
        total, n = sums[..., 0], sums[..., 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            per_run = np.where(n > 0, np.where(counted, total, 100 * total / n), np.nan)
        with warnings.catch_warnings():
            # a repeat no resampled unit reaches does not count, as in `combine_runs`; none: no value
            warnings.simplefilter("ignore", RuntimeWarning)
            values.append(np.nanmean(per_run, axis=2))
            spreads.append(np.nanstd(per_run, axis=2))
    return np.concatenate(values), np.concatenate(spreads)


_HALF_CENT = 0.005 + 1e-9


def _round_out(low: float, high: float) -> tuple[float, float]:
    # round(x, 6) first: 33.330000000001 * 100 must not floor to 3332.99...
    return math.floor(round(low * 100, 6)) / 100, math.ceil(round(high * 100, 6)) / 100


def holding_interval(samples: np.ndarray, estimate: float, level: float) -> list[float]:
    """The percentile interval of the resampled values, widened to hold the estimate."""
    alpha = (1 - level) / 2
    finite = samples[~np.isnan(samples)]
    if finite.size == 0:
        return [estimate, estimate]
    low, high = np.percentile(finite, [100 * alpha, 100 * (1 - alpha)])
    low, high = min(float(low), estimate), max(float(high), estimate)
    # the estimate is reported to 2 decimals: a bound within its rounding (a resample distribution of one
    # value, as one participant gives, at 66.666...) is the estimate, not rounded out past it (66.67 ± 0.01)
    low, high = (estimate if abs(bound - estimate) <= _HALF_CENT else bound for bound in (low, high))
    low, high = _round_out(low, high)
    return [low, high]


def intervals(
    family: Family,
    items: list[GoldItem],
    runs: list[list[Outcome]],
    groups: Groups,
    estimates: dict[object, dict],
    settings: Bootstrap,
) -> tuple[dict[object, dict[str, list[float] | None]], dict]:
    """({group key: {metric: [low, high]}}, what they were computed over) for every metric reported
    in `estimates`, `<metric>_std` (the spread over repeats) included (None where the estimate is None,
    and, clustered, where the group reaches fewer than `MIN_CLUSTERS` clusters: `unavailable_text`).
    `groups` and `estimates` share their keys (None: every row)."""
    units = resampling_units(family, items, settings.cluster)
    info = {
        "level": settings.level,
        "method": "percentile bootstrap",
        "seed": settings.seed,
        "resamples": settings.resamples,
        "unit": f"cluster of rows by {settings.cluster!r}" if settings.cluster else UNIT_NAMES.get(
            family.name, "item (its repeats together)"),
        "n_units": len(units),
    }
    columns, table = _unit_tallies(family, items, runs, groups, units) if items else ([], None)
    samples, spreads = _resampled_values(family, columns, table, settings) if columns else (None, None)
    where = {column: index for index, column in enumerate(columns)}
    if settings.cluster:
        info["cluster"] = settings.cluster
        # clusters (participants) each column reaches: one cannot measure spread between participants
        reached = (table[:, :, :, 1].sum(axis=2) > 0).sum(axis=0) if columns else np.zeros(0)
        single = {column for column, index in where.items() if reached[index] < MIN_CLUSTERS}
    else:
        single = set()
    result: dict[object, dict[str, list[float] | None]] = {}
    for key, values in estimates.items():
        result[key] = {}
        for metric, estimate in values.items():
            if metric == "ci":
                continue
            spread = metric.endswith("_std")
            column = where.get((key, metric[: -len("_std")] if spread else metric))
            if estimate is None or column is None:
                result[key][metric] = None if estimate is None else [estimate, estimate]
            elif columns[column] in single:
                result[key][metric] = None
            else:
                resampled = spreads if spread else samples
                result[key][metric] = holding_interval(resampled[:, column], estimate, settings.level)
    return result, info


def unavailable_text(cluster: str) -> str:
    """What a cell says in place of a clustered interval that one cluster cannot give."""
    return f"not available (n=1 {cluster})"


def unit_id(family: Family, items: list[GoldItem], unit: list[int], cluster: str | None) -> str:
    """What names a unit across rows scored on the same items: the cluster value, else the family's key."""
    value = items[unit[0]].tags.get(cluster) if cluster else None
    return f"{cluster}={value}" if value is not None else family.unit_key(items[unit[0]])


def _compact(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(float(value), 6)


def unit_tallies(
    family: Family, items: list[GoldItem], runs: list[list[Outcome]], groups: Groups, cluster: str | None = None
) -> dict:
    """Each unit's tallies summed over repeats, for paired comparisons of two rows on their shared
    units: {"ids": [unit id], "tallies": {"KEY|METRIC": {"unit": [index], "sum": [...], "n": [...]}}}
    (KEY "" for every row; only the units the group reaches).

    With a cluster tag (a human row), the units are the family's own (one participant's answer to
    one item) and "clusters" names each one's cluster ([value or None]): a comparison with a model
    pairs each answer with the model's on that item and resamples the clusters
    (`comparison.clustered_pairs`)."""
    units = resampling_units(family, items)
    columns, table = _unit_tallies(family, items, runs, groups, units) if items else ([], None)
    tallies = {}
    for index, (key, metric) in enumerate(columns):
        summed = table[:, index].sum(axis=1)
        present = np.nonzero(summed[:, 1])[0]
        tallies[f"{'' if key is None else key}|{metric}"] = {
            "unit": present.tolist(),
            "sum": [_compact(value) for value in summed[present, 0]],
            "n": [_compact(value) for value in summed[present, 1]],
        }
    found = {"ids": [unit_id(family, items, unit, None) for unit in units], "tallies": tallies}
    if cluster:
        found["clusters"] = [
            None if items[unit[0]].tags.get(cluster) is None else str(items[unit[0]].tags[cluster]) for unit in units
        ]
    return found
