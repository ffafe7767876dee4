"""Agreement between independent answerers, as pure functions (no Django).

Each item is a list of the labels its answerers gave (already normalised). Percent agreement is
the mean over items of the share of answerer pairs that agree; Fleiss' kappa corrects it for the
agreement expected by chance from the overall label frequencies (Fleiss 1971). Items may have
different numbers of answerers: P_i uses each item's own count, which is Fleiss' formula when the
counts are equal. Items with fewer than two answers say nothing about agreement and are skipped.

Krippendorff's alpha (through the `krippendorff` package) is the standard estimator when items have
unequal numbers of answerers: nominal always, ordinal too where every answer is a number. Its
interval is a seeded bootstrap over items.
"""

import re
import warnings
from collections import Counter
from collections.abc import Sequence

import krippendorff
import numpy as np

from scoring.hypo3d import normalize_answer
from scoring.uncertainty import DEFAULT_SEED, holding_interval

ALPHA_RESAMPLES = 1000

_LETTER = re.compile(r"\b[A-Z]\b")


def answer_label(answer: str | Sequence[str], choice_item: bool) -> str:
    """What "the same answer" means, as the scorers read answers: a choice item's letters (sorted,
    'A,C'; written 'a, c' or given as a list), or an open answer under Hypo3D's exact-match
    normalisation ('The Window.' and 'window' agree; 'two' and '2' too)."""
    if choice_item:
        letters = answer if isinstance(answer, list) else _LETTER.findall(str(answer).upper())
        return ",".join(sorted({str(letter).strip().upper() for letter in letters}))
    return normalize_answer(answer if isinstance(answer, str) else " ".join(answer))


def count_table(labels_per_item: Sequence[Sequence[str]]) -> tuple[list[str], list[list[int]]]:
    """Rows of counts per category (the layout of Fleiss' paper), categories sorted."""
    categories = sorted({label for labels in labels_per_item for label in labels})
    index = {c: i for i, c in enumerate(categories)}
    rows = []
    for labels in labels_per_item:
        row = [0] * len(categories)
        for label in labels:
            row[index[label]] += 1
        rows.append(row)
    return categories, rows


def item_agreement(row: Sequence[int]) -> float | None:
    """P_i: the share of ordered answerer pairs on this item that agree; None under two answers."""
    n = sum(row)
    if n < 2:
        return None
    return (sum(c * c for c in row) - n) / (n * (n - 1))


def percent_agreement(rows: Sequence[Sequence[int]]) -> float | None:
    """P-bar: mean of P_i over the items that have at least two answers."""
    values = [p for p in (item_agreement(r) for r in rows) if p is not None]
    return sum(values) / len(values) if values else None


def fleiss_kappa(rows: Sequence[Sequence[int]]) -> float | None:
    """(P-bar - P_e) / (1 - P_e); 1.0 when everyone agrees on a single category; None without data."""
    rows = [r for r in rows if sum(r) >= 2]
    if not rows:
        return None
    observed = percent_agreement(rows)
    total = sum(sum(r) for r in rows)
    shares = [sum(r[j] for r in rows) / total for j in range(len(rows[0]))]
    expected = sum(p * p for p in shares)
    if expected == 1.0:
        return 1.0
    return (observed - expected) / (1 - expected)


def _alpha(counts: np.ndarray, level: str) -> float:
    """The package's alpha on a count table; nan where it is undefined (one value only)."""
    if counts.shape[1] < 2 or (counts.sum(axis=1) < 2).all():
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(krippendorff.alpha(value_counts=counts, level_of_measurement=level))


def krippendorff_alpha(rows: Sequence[Sequence[int]], level: str = "nominal") -> float | None:
    """Krippendorff's alpha of a count table (columns in the categories' order, which `ordinal`
    uses); 1.0 when every answer is one category; None without an item of two answers."""
    measured = np.array([r for r in rows if sum(r) >= 2], dtype=float)
    if measured.size == 0:
        return None
    if np.count_nonzero(measured.sum(axis=0)) == 1:
        return 1.0
    return _alpha(measured, level)


def alpha_interval(
    rows: Sequence[Sequence[int]], level: str = "nominal", ci: float = 0.95, seed: int = DEFAULT_SEED,
    resamples: int = ALPHA_RESAMPLES,
) -> list[float] | None:
    """A percentile bootstrap interval of alpha over items, holding the estimate (rounded to 4)."""
    estimate = krippendorff_alpha(rows, level)
    if estimate is None:
        return None
    measured = np.array([r for r in rows if sum(r) >= 2], dtype=float)
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        samples = np.array([
            _alpha(measured[rng.integers(0, len(measured), len(measured))], level) for _ in range(resamples)
        ])
    # a resample of one category only agrees perfectly, as `krippendorff_alpha` says
    samples[np.isnan(samples)] = 1.0
    low, high = holding_interval(100 * samples, 100 * round(estimate, 4), ci)
    return [round(low / 100, 4), round(high / 100, 4)]


def numeric_order(categories: Sequence[str]) -> list[int] | None:
    """Column positions ordering the categories as numbers, or None when some answer is not a number."""
    try:
        values = [float(category) for category in categories]
    except ValueError:
        return None
    return sorted(range(len(categories)), key=values.__getitem__)


def agreement_summary(labels_per_item: Sequence[Sequence[str]]) -> dict:
    """Items counted, percent agreement, Fleiss' kappa and Krippendorff's alpha with its 95 % interval
    (rounded) for one group of items; ordinal alpha too where every answer is a number."""
    categories, rows = count_table(labels_per_item)
    measured = [r for r in rows if sum(r) >= 2]
    pa, kappa = percent_agreement(measured), fleiss_kappa(measured)
    alpha = krippendorff_alpha(measured)
    order = numeric_order(categories) if measured else None
    ordered = [[row[j] for j in order] for row in measured] if order else None
    ordinal = krippendorff_alpha(ordered, "ordinal") if ordered else None
    return {
        "n_items": len(measured),
        "percent_agreement": None if pa is None else round(pa, 4),
        "fleiss_kappa": None if kappa is None else round(kappa, 4),
        "krippendorff_alpha": None if alpha is None else round(alpha, 4),
        "krippendorff_alpha_ci": alpha_interval(measured),
        "krippendorff_alpha_ordinal": None if ordinal is None else round(ordinal, 4),
        "krippendorff_alpha_ordinal_ci": alpha_interval(ordered, "ordinal") if ordered else None,
    }


def consensus_agreement(labels_by_answerer: Sequence[dict]) -> dict:
    """Per answerer (any key): on the items where others answered too, the share of their answers that equal the
    others' most common answer (their own left out; a tie counts as agreeing with any tied answer)."""
    agreed: dict[str, list[int]] = {}
    for answers in labels_by_answerer:
        for answerer, label in answers.items():
            others = Counter(other for who, other in answers.items() if who != answerer)
            if not others:
                continue
            top = max(others.values())
            tally = agreed.setdefault(answerer, [0, 0])
            tally[0] += others[label] == top
            tally[1] += 1
    return {
        answerer: {"n_items": n, "agreement_with_consensus": round(hits / n, 4)}
        for answerer, (hits, n) in sorted(agreed.items())
    }


def consensus_reached(labels: Sequence[str], min_share: float) -> bool:
    """The most common label is given by at least `min_share` of the answerers."""
    if not labels:
        return False
    top = Counter(labels).most_common(1)[0][1]
    return top / len(labels) >= min_share
