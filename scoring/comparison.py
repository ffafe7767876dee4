"""Two rows on their shared items: the difference with its interval and a p-value; Holm's correction
across a table; how many participants and items a study needs for an interval of a chosen width.

- `mcnemar`: a single accuracy (each row right or wrong per item): the exact binomial test on the
  discordant pairs, or the continuity-corrected chi-square, as `statsmodels` computes them.
- `paired_bootstrap`: any mean score (partial credit, a mean over repeats): the units (items, or a
  participant's rows for a human row) are resampled once for both rows, so what the two share
  cancels; the p-value is the share of resampled differences, centred on the observed one, at
  least as far from it as the observed difference is from zero.
- `clustered_pairs`: a model row against a human row, pairing each answer with the model's score on
  its item and resampling participants (the human row's clusters), not answers.
- `holm`: Holm's step-down adjustment of a table's p-values (family-wise error rate).
- `participants_needed`, `items_needed`: the normal approximation of a proportion's interval, with
  the design effect 1 + (m - 1) * ICC of m items per participant.
"""

import math
from collections.abc import Hashable, Sequence

import numpy as np
from scipy.stats import binomtest, chi2, norm

from .uncertainty import DEFAULT_RESAMPLES, DEFAULT_SEED, holding_interval


def mcnemar(a: Sequence[bool], b: Sequence[bool], exact: bool = True) -> dict:
    """Row a against row b, item by item (right/wrong): the accuracy difference a - b in points, the
    discordant counts (a right b wrong, a wrong b right) and McNemar's p-value."""
    if len(a) != len(b) or not a:
        raise ValueError("McNemar compares two rows on the same, non-empty list of items")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    discordant = only_a + only_b
    if discordant == 0:
        statistic, p_value = 0.0, 1.0
    elif exact:
        statistic = float(min(only_a, only_b))
        p_value = binomtest(min(only_a, only_b), discordant, 0.5).pvalue
    else:
        statistic = (abs(only_a - only_b) - 1) ** 2 / discordant
        p_value = float(chi2.sf(statistic, 1))
    return {
        "difference": round(100 * (only_a - only_b) / len(a), 2),
        "only_a": only_a,
        "only_b": only_b,
        "statistic": statistic,
        "p_value": min(1.0, float(p_value)),
        "test": "McNemar exact" if exact else "McNemar chi-square (continuity corrected)",
    }


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    units: Sequence[Hashable] | None = None,
    level: float = 0.95,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> dict:
    """Mean score of row a minus row b (scores 0..1 per shared row, in points), its percentile
    interval and a two-sided p-value. `units`: each row's unit (rows of one unit are resampled
    together; None: each row alone)."""
    a_values, b_values = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_values.shape != b_values.shape or a_values.size == 0:
        raise ValueError("a paired comparison needs two rows of scores on the same, non-empty items")
    labels = np.arange(a_values.size) if units is None else np.unique(np.asarray(units), return_inverse=True)[1]
    n_units = int(labels.max()) + 1
    sums = np.zeros((n_units, 3))
    np.add.at(sums, labels, np.column_stack([a_values, b_values, np.ones_like(a_values)]))
    return paired_tallies(sums[:, 0], sums[:, 2], sums[:, 1], sums[:, 2], level, seed, resamples)


def paired_tallies(
    a_sums: Sequence[float],
    a_counts: Sequence[float],
    b_sums: Sequence[float],
    b_counts: Sequence[float],
    level: float = 0.95,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> dict:
    """`paired_bootstrap` on units' tallies: row a's metric is sum(a_sums) / sum(a_counts) (a ratio of
    sums, as the scorer's), row b's likewise, both on the same units in the same order."""
    tallies = np.column_stack([a_sums, a_counts, b_sums, b_counts]).astype(float)
    if tallies.shape[0] == 0 or not tallies[:, 1].sum() or not tallies[:, 3].sum():
        raise ValueError("a paired comparison needs both rows scored on some shared unit")
    n_units = tallies.shape[0]
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n_units, np.full(n_units, 1 / n_units), size=resamples)
    drawn = weights @ tallies
    with np.errstate(divide="ignore", invalid="ignore"):
        differences = 100 * (drawn[:, 0] / drawn[:, 1] - drawn[:, 2] / drawn[:, 3])
    differences = differences[np.isfinite(differences)]
    total = tallies.sum(axis=0)
    observed = 100 * (total[0] / total[1] - total[2] / total[3])
    far = np.count_nonzero(np.abs(differences - observed) >= abs(observed) - 1e-9)
    return {
        "difference": round(float(observed), 2),
        "ci": holding_interval(differences, round(float(observed), 2), level),
        "p_value": float((far + 1) / (differences.size + 1)) if observed != 0 else 1.0,
        "n_units": n_units,
        "test": "paired bootstrap",
    }


def clustered_pairs(
    clustered: dict, plain: dict, column: str, level: float = 0.95, seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> dict | None:
    """A row scored per item (a model) minus a clustered row (a human row, `unit_tallies(..., cluster=)`)
    on their shared items, in points: each answer of a participant is paired with the row's score on
    that item (so the row's side is its mean over the answers the participants gave), and the
    participants are resampled, each with all its answers. `clustered["items"]` (else its ids) names
    the item of each of its units as `plain["ids"]` do. None where either row lacks the column or they
    share no item; with one participant, no interval or p-value (`n_clusters` says why)."""
    mine, theirs = clustered.get("tallies", {}).get(column), plain.get("tallies", {}).get(column)
    if mine is None or theirs is None:
        return None
    names = clustered.get("items") or clustered["ids"]
    by_item = {plain["ids"][u]: (total, n) for u, total, n in zip(theirs["unit"], theirs["sum"], theirs["n"],
                                                                  strict=True)}
    clusters: dict[str, list[float]] = {}
    for u, total, n in zip(mine["unit"], mine["sum"], mine["n"], strict=True):
        other = by_item.get(names[u])
        if other is None or not other[1]:
            continue
        cluster = clustered.get("clusters", [None] * len(names))[u]
        tally = clusters.setdefault(f"unit {u}" if cluster is None else cluster, [0.0, 0.0, 0.0, 0.0])
        # the other row's mean on the item, counted once per answer of this participant
        tally[0] += other[0] / other[1] * n
        tally[1] += n
        tally[2] += total
        tally[3] += n
    if not clusters:
        return None
    tallies = np.array(list(clusters.values()))
    if len(clusters) < 2:
        observed = 100 * (tallies[:, 0].sum() / tallies[:, 1].sum() - tallies[:, 2].sum() / tallies[:, 3].sum())
        return {"difference": round(float(observed), 2), "ci": None, "p_value": None, "n_units": 1,
                "n_clusters": 1, "test": "paired cluster bootstrap"}
    found = paired_tallies(tallies[:, 0], tallies[:, 1], tallies[:, 2], tallies[:, 3], level, seed, resamples)
    return {**found, "n_clusters": len(clusters), "test": "paired cluster bootstrap"}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: the k-th smallest times (m - k + 1), made
    non-decreasing, at most 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def _z(level: float) -> float:
    return float(norm.ppf(0.5 + level / 2))


def normal_half_width(proportion: float, n: int, level: float = 0.95, design_effect: float = 1.0) -> float:
    """Half-width, in points, of a proportion's normal-approximation interval on n answers."""
    return 100 * _z(level) * math.sqrt(design_effect * proportion * (1 - proportion) / n)


def answers_needed(proportion: float, half_width: float, level: float = 0.95, design_effect: float = 1.0) -> int:
    """Answers for an interval of +- half_width points around `proportion` (normal approximation)."""
    if not 0 < half_width < 100 or not 0 <= proportion <= 1:
        raise ValueError("the half-width is in points (0-100) and the proportion in 0-1")
    spread = max(proportion * (1 - proportion), 1e-12)
    return math.ceil(design_effect * spread * (100 * _z(level) / half_width) ** 2)


def participants_needed(
    proportion: float, half_width: float, items_per_participant: int, icc: float = 0.0, level: float = 0.95
) -> dict:
    """Participants, each answering `items_per_participant` items of the cell, for the human row's
    interval to be +- half_width points: answers inflated by the design effect 1 + (m - 1) * ICC."""
    if items_per_participant < 1 or not 0 <= icc <= 1:
        raise ValueError("each participant answers at least one item, and the ICC is in 0-1")
    design_effect = 1 + (items_per_participant - 1) * icc
    answers = answers_needed(proportion, half_width, level, design_effect)
    return {
        "answers": answers,
        "participants": math.ceil(answers / items_per_participant),
        "design_effect": round(design_effect, 4),
    }


def icc_from_pilot(scores_by_participant: Sequence[Sequence[float]]) -> float:
    """The one-way ANOVA intraclass correlation of right/wrong answers grouped by participant (0 when
    participants differ no more than chance says), the ICC a pilot gives `participants_needed`."""
    groups = [np.asarray(scores, dtype=float) for scores in scores_by_participant if len(scores)]
    if len(groups) < 2:
        return 0.0
    sizes = np.array([len(g) for g in groups])
    total = sizes.sum()
    grand = np.concatenate(groups).mean()
    between = sum(len(g) * (g.mean() - grand) ** 2 for g in groups) / (len(groups) - 1)
    within_df = total - len(groups)
    within = sum(((g - g.mean()) ** 2).sum() for g in groups) / within_df if within_df else 0.0
    m0 = (total - (sizes ** 2).sum() / total) / (len(groups) - 1)
    denominator = between + (m0 - 1) * within
    return 0.0 if denominator <= 0 else max(0.0, float((between - within) / denominator))


def plan_cells(
    accuracies: dict[str, float], half_width: float, items_per_participant: int, icc: float = 0.0,
    level: float = 0.95,
) -> dict[str, dict]:
    """`participants_needed` for each cell of a paper table, from a pilot's or the paper's accuracy in
    points ({cell: accuracy}); the study needs the largest."""
    return {
        cell: participants_needed(accuracy / 100, half_width, items_per_participant, icc, level)
        for cell, accuracy in accuracies.items()
    }
