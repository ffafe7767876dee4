"""M3-Verse: single and multiple choice with partial credit, split by hallucination items.

The paper publishes no scoring code; the credit rule is the paper's, the letter
extraction is ours (docs/METRICS.md).
"""

import re
import string
from collections.abc import Collection

from .family import FAILED, RULE, Extraction, Family, Outcome, Run, Table, gold_letters
from .records import LETTERS, GoldItem, Prediction

NONE_OPTION = "No correct option is listed."
_NONE_CHOICE = re.compile(r"(?:[A-Z]\.\s*)?" + re.escape(NONE_OPTION))
_SEPARATOR = r"[\s.,;:/&+|()\[\]{}*'\"-]"
_LETTERS_ONLY = re.compile(rf"(?:{_SEPARATOR}*[A-Z])+{_SEPARATOR}*")
_PUNCTUATION_TO_SPACE = str.maketrans({char: " " for char in string.punctuation})


def extract_letters(output: str, shown_letters: Collection[str]) -> set[str]:
    """`A`, `A, C`, `AC`, `(B)`, `B.`: every letter; otherwise the option letters standing as tokens."""
    if _LETTERS_ONLY.fullmatch(output):
        return set(re.findall("[A-Z]", output))
    return {token for token in output.translate(_PUNCTUATION_TO_SPACE).split() if token in shown_letters}


def partial_credit(chosen: set[str], correct: set[str]) -> float:
    """Any wrong letter scores 0; otherwise the share of the correct letters chosen (nothing chosen: 0)."""
    if not chosen or not chosen <= correct:
        return 0.0
    return len(chosen) / len(correct)


def correct_letters(item: GoldItem) -> set[str]:
    return {item.answer} if item.answer_format == "single" else set(item.answer)


def extract(item: GoldItem, pred: Prediction, profile, run: Run) -> Extraction:
    """The chosen letters in gold order, joined by ", "; a letter outside the options stays as read."""
    to_canonical = gold_letters(item, pred, run)
    if to_canonical is None:
        return Extraction("", FAILED)
    shown = extract_letters(pred.output, to_canonical.keys())
    if not shown:
        return Extraction("", FAILED)
    return Extraction(", ".join(sorted(to_canonical.get(letter, letter) for letter in shown)), RULE)


def score_rows(
    items: list[GoldItem], preds: list[Prediction | None], extractions: list[Extraction | None], profile, run: Run
) -> list[Outcome]:
    outcomes = []
    for item, extraction in zip(items, extractions, strict=True):
        chosen = set(extraction.answer.split(", ")) if extraction is not None and extraction.answer else set()
        # a letter outside the item's options is never correct, so it makes the answer score 0
        score = partial_credit(chosen, correct_letters(item))
        split = "hallucination_score" if item.tags["hallucination"] else "factual_score"
        outcomes.append({"score": score, split: score})
    return outcomes


def is_hallucination_item(item: GoldItem) -> bool:
    """A hallucination item's only correct option is the none option."""
    correct = correct_letters(item)
    return len(correct) == 1 and bool(_NONE_CHOICE.fullmatch(item.choices[LETTERS.index(correct.pop())]))


def check(item: GoldItem) -> str | None:
    if not correct_letters(item) <= set(LETTERS[: len(item.choices)]):
        return "'answer' must be letters of the choices"
    return None


def derive_tags(item: GoldItem) -> dict:
    """`hallucination` as given, else whether the none option is the only correct answer."""
    if isinstance(item.tags.get("hallucination"), bool):
        return item.tags
    return {**item.tags, "hallucination": is_hallucination_item(item)}


FAMILY = Family(
    name="m3verse",
    # no official script exists: the default is the paper's rule with our documented extraction
    profiles={"paper": None},
    answer_formats=("single", "multi"),
    metrics=("score", "hallucination_score", "factual_score"),
    extract=extract,
    score_rows=score_rows,
    check=check,
    derive_tags=derive_tags,
    primary_metric="score",
    tables=(
        Table("states", "Intra-state and inter-state averages by capability (M3-Verse Table 2)", ("score",),
              by="capabilities",
              order=("spatial understanding", "temporal understanding", "attribute recognition", "reasoning"),
              within="state_type", within_order=("intra-state", "intra-states", "inter-state", "inter-states"),
              group_average="first"),
        Table("hallucination", "Hallucination and factual items (M3-Verse Table 3)",
              ("hallucination_score", "factual_score", "factual_minus_hallucination"),
              differences=(("factual_minus_hallucination", "factual_score", "hallucination_score"),),
              not_ranked=("factual_minus_hallucination",)),
    ),
    radar_axis="capabilities",
    question_types=("spatial understanding", "temporal understanding", "attribute recognition", "reasoning"),
    chance_rows=("random",),
)
