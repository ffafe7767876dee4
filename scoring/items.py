"""Item analysis for benchmark builders: per item, how hard it is for humans and for models, how well
it discriminates, and flags for the items a reviewer should look at again.

Input: graded answers `(respondent, kind, item id, score)`, a respondent being a participant or a
model run, `kind` "human", "model" or "baseline" (a chance guesser: a seeded random answer), `score` in
0..1 (the family's primary metric of one answer). Baselines are shown apart: they are not models, so
they count in no difficulty but their own, in no discrimination and in no flag (a random guesser's
misses would make every item "humans over models").
- difficulty: the mean score of the item among humans, among models, and among baselines (None without
  answers);
- discrimination: the corrected item-total correlation, the Pearson correlation over respondents
  between their score on the item and their mean score on the other items they answered (None when
  either side does not vary, or under three respondents);
- flags: `all_right` / `none_right` (every answer right / wrong, at least two answers), and
  `humans_over_models` / `models_over_humans` where one side's difficulty exceeds the other's by
  at least `gap` (both sides answered).
"""

from collections import defaultdict
from collections.abc import Iterable

import numpy as np
from scipy.stats import pearsonr

HUMAN, MODEL, BASELINE = "human", "model", "baseline"
KINDS = (HUMAN, MODEL, BASELINE)
FLAGS = ("all_right", "none_right", "humans_over_models", "models_over_humans")


def _mean(values: list[float]) -> float | None:
    return round(float(np.mean(values)), 4) if values else None


def discrimination(item: str, answers: dict[str, dict[str, float]]) -> float | None:
    """Corrected item-total correlation of one item over the respondents who answered it and another."""
    on_item, rest = [], []
    for scores in answers.values():
        others = [score for other, score in scores.items() if other != item]
        if item in scores and others:
            on_item.append(scores[item])
            rest.append(float(np.mean(others)))
    if len(on_item) < 3 or len(set(on_item)) < 2 or len(set(rest)) < 2:
        return None
    return round(float(pearsonr(on_item, rest).statistic), 4)


def item_analysis(graded: Iterable[tuple[str, str, str, float]], gap: float = 0.5) -> list[dict]:
    """One entry per item, in the order items first appear: {"id", "human_difficulty",
    "model_difficulty", "baseline_difficulty", "n_human", "n_model", "n_baseline", "discrimination",
    "flags"}."""
    by_respondent: dict[str, dict[str, float]] = defaultdict(dict)
    by_item: dict[str, dict[str, list[float]]] = {}
    for respondent, kind, item, score in graded:
        if kind not in KINDS:
            raise ValueError(f"a respondent is one of {KINDS}, not {kind!r}")
        if kind != BASELINE:
            by_respondent[respondent][item] = score
        by_item.setdefault(item, {side: [] for side in KINDS})[kind].append(score)
    analysis = []
    for item, sides in by_item.items():
        human, model = _mean(sides[HUMAN]), _mean(sides[MODEL])
        every = sides[HUMAN] + sides[MODEL]
        flags = []
        if len(every) >= 2 and all(score == 1 for score in every):
            flags.append("all_right")
        if len(every) >= 2 and all(score == 0 for score in every):
            flags.append("none_right")
        if human is not None and model is not None:
            if human - model >= gap:
                flags.append("humans_over_models")
            if model - human >= gap:
                flags.append("models_over_humans")
        analysis.append({
            "id": item,
            "human_difficulty": human,
            "model_difficulty": model,
            "baseline_difficulty": _mean(sides[BASELINE]),
            "n_human": len(sides[HUMAN]),
            "n_model": len(sides[MODEL]),
            "n_baseline": len(sides[BASELINE]),
            "discrimination": discrimination(item, by_respondent),
            "flags": flags,
        })
    return analysis
