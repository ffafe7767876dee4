"""Chance levels, computed analytically: the Random rows of the papers' tables.

- random: every row answered by an independent uniform guess.
- random++: the same guess (the same option text) on every circular variant of a
  question (3DSRBench's Random++). Where a family has no circular variants it equals random.

Each guesser's expected outcome per row is tallied like real outcomes, so a chance level
is the expected value of the metric, overall and per `by` group. Open-answer Hypo3D
has no option set to guess from, so it has no chance level.
"""

from . import spatial457
from .engine import Source, get_family, load_gold, summarize
from .family import Outcome
from .m3verse import correct_letters, partial_credit
from .records import LETTERS, GoldItem

GUESSERS = ("random", "random++")


def threedsrbench_row(item: GoldItem) -> Outcome:
    return {"hit": 1 / len(item.choices)}


def causalspatial_row(item: GoldItem) -> Outcome:
    guess = 1 / len(item.choices)
    return {"accuracy": guess, "not_sure_rate": guess if item.not_sure else 0.0}


def spatial457_row(item: GoldItem) -> Outcome:
    """The reference's random answer: uniform over the pool of the gold answer's kind."""
    pool = spatial457.random_answer_pool(item.answer[0])
    hits = sum(any(spatial457.is_correct(gold, guess) for gold in item.answer) for guess in pool)
    return {"accuracy": hits / len(pool) if pool else 0.0, "format_errors": 0}


def m3verse_row(item: GoldItem) -> Outcome:
    """One option picked uniformly: a correct one earns its share of the answer."""
    correct = correct_letters(item)
    options = LETTERS[: len(item.choices)]
    score = sum(partial_credit({letter}, correct) for letter in options) / len(options)
    split = "hallucination_score" if item.tags["hallucination"] else "factual_score"
    return {"score": score, split: score}


EXPECTED_ROW = {
    "3dsrbench": threedsrbench_row,
    "causalspatial": causalspatial_row,
    "spatial457": spatial457_row,
    "m3verse": m3verse_row,
}


def chance_levels(family: str, gold: list[dict], by: list[str] | tuple = ()) -> dict:
    """Expected metrics of the Random and Random++ guessers on these gold rows.

    Returns {"family", "n_items", "random": {"overall", "by"} or None, "random++": ..., "errors"}.
    """
    scorer = get_family(family)
    errors: list[str] = []
    items = load_gold(scorer, Source(enumerate(gold), "gold[{}]"), errors)
    expected_row = EXPECTED_ROW.get(scorer.name)
    if expected_row is None:
        return {
            "family": scorer.name,
            "n_items": len(items),
            "random": None,
            "random++": None,
            "errors": errors,
        }
    guessable = []
    for item in items:
        if item.choices or scorer.name == "spatial457":
            guessable.append(item)
        else:
            errors.append(f"id {item.id!r}: no choices, so no chance level; left out")
    outcomes = [expected_row(item) for item in guessable]
    levels = {}
    for guesser in GUESSERS:
        tally_args = {}
        if scorer.name == "3dsrbench" and guesser == "random++":
            # one guess for all rotations: the group succeeds with the probability of one row
            tally_args["circular_combine"] = min
        overall, groups = summarize(scorer, guessable, [outcomes], list(scorer.metrics), by, **tally_args)
        levels[guesser] = {"overall": overall, "by": groups}
    return {"family": scorer.name, "n_items": len(guessable), **levels, "errors": errors}
