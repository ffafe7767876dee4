"""Agreement between independent answerers, as pure functions (no Django).

Each item is a list of the labels its answerers gave (already normalised). Percent agreement is
the mean over items of the share of answerer pairs that agree; Fleiss' kappa corrects it for the
agreement expected by chance from the overall label frequencies (Fleiss 1971). Items may have
different numbers of answerers: P_i uses each item's own count, which is Fleiss' formula when the
counts are equal. Items with fewer than two answers say nothing about agreement and are skipped.
"""

import re
from collections import Counter
from collections.abc import Sequence

from scoring.hypo3d import normalize_answer

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


def agreement_summary(labels_per_item: Sequence[Sequence[str]]) -> dict:
    """Items counted, percent agreement and Fleiss' kappa (rounded) for one group of items."""
    _, rows = count_table(labels_per_item)
    measured = [r for r in rows if sum(r) >= 2]
    pa, kappa = percent_agreement(measured), fleiss_kappa(measured)
    return {
        "n_items": len(measured),
        "percent_agreement": None if pa is None else round(pa, 4),
        "fleiss_kappa": None if kappa is None else round(kappa, 4),
    }


def consensus_reached(labels: Sequence[str], min_share: float) -> bool:
    """The most common label is given by at least `min_share` of the answerers."""
    if not labels:
        return False
    top = Counter(labels).most_common(1)[0][1]
    return top / len(labels) >= min_share
