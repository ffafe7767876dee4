"""Spatial457: the answer read from a JSON-like reply, judged by the reference correctness rules.

Follows VLMEvalKit's `spatial457.py` (extraction, format errors, ROBUST mode) and
`utils/spatial457.py` (`is_correct`, `category_correct`). Nothing is stripped: the rules
compare the strings as extracted.
"""

import re

from .family import FAILED, RULE, Extraction, Family, Outcome, Run, Table
from .records import GoldItem, Prediction

# First match wins; the third reads one digit only, so `'Answer': 12` gives `1`.
_ANSWER_PATTERNS = (
    re.compile(r"Answer': '(.*?)'"),
    re.compile(r'Answer": "(.*?)"'),
    re.compile(r"Answer': (\d)"),
)
NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
}
YES_DIGITS = ("1", "2", "3", "4", "5", "6", "7", "8", "9")
VEHICLE_CLASSES = {
    "car": ("suv", "wagon", "minivan", "sedan", "truck", "addi", "car"),
    "bus": ("articulated", "regular", "double", "school", "bus"),
    "motorbike": ("chopper", "dirtbike", "scooter", "cruiser", "motorbike"),
    "aeroplane": ("jet", "fighter", "biplane", "airliner", "aeroplane"),
    "bicycle": ("road", "utility", "mountain", "tandem", "bicycle"),
}
_VEHICLE_CLASS = {word: vehicle for vehicle, words in VEHICLE_CLASSES.items() for word in words}
# What the reference's get_random_answer draws from, by the kind of gold answer.
RANDOM_ANSWER_POOLS = (
    ("yes", "no"),
    ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
    ("small", "large"),
    (
        "airliner",
        "dirtbike",
        "road bike",
        "tandem bike",
        "suv",
        "wagon",
        "scooter",
        "mountain bike",
        "minivan",
        "sedan",
        "school bus",
        "fighter",
        "chopper",
        "double bus",
        "truck",
        "articulated bus",
        "cruiser",
        "jet",
        "utility bike",
        "regular bus",
        "biplane",
    ),
    ("gray", "blue", "purple", "brown", "green", "cyan", "red", "yellow"),
    ("left", "right", "front", "back"),
)


def extract_answer(output: str) -> tuple[str, bool]:
    """(answer, format error): without an `Answer` field the whole output is the answer (ROBUST mode)."""
    for pattern in _ANSWER_PATTERNS:
        match = pattern.search(output)
        if match:
            return match.group(1), False
    return output, True


def none_means_no(pred: str) -> str:
    return "no" if pred.lower() == "none" else pred


def same_ignoring_case(pred: str, gold: str) -> bool:
    return pred.lower() == gold.lower()


def zero_means_no(pred: str, gold: str) -> bool:
    return pred == "0" and gold == "No"


def number_word_matches(pred: str, gold: str) -> bool:
    return NUMBER_WORDS.get(pred.lower()) == gold


def digit_means_yes(pred: str, gold: str) -> bool:
    return gold.lower() == "yes" and pred in YES_DIGITS


def same_vehicle_class(pred: str, gold: str) -> bool:
    """The first words (split on one space) name vehicles of one super-class: `suv` matches `sedan`."""
    pred_class = _VEHICLE_CLASS.get(pred.lower().split(" ")[0])
    return pred_class is not None and pred_class == _VEHICLE_CLASS.get(gold.lower().split(" ")[0])


def is_correct(gold: str, pred: str) -> bool:
    pred = none_means_no(pred)
    return (
        same_ignoring_case(pred, gold)
        or zero_means_no(pred, gold)
        or number_word_matches(pred, gold)
        or digit_means_yes(pred, gold)
        or same_vehicle_class(pred, gold)
    )


def random_answer_pool(gold: str) -> tuple[str, ...]:
    """The answers a random guess picks from uniformly; none for an answer of no known kind."""
    gold = gold.lower()
    return next((pool for pool in RANDOM_ANSWER_POOLS if gold in pool), ())


def extract(item: GoldItem, pred: Prediction, profile, run: Run) -> Extraction:
    """A format error is a failed extraction; the whole output is still what the reference scores."""
    answer, format_error = extract_answer(pred.output)
    return Extraction(answer, FAILED if format_error else RULE)


def score_rows(
    items: list[GoldItem], preds: list[Prediction | None], extractions: list[Extraction | None], profile, run: Run
) -> list[Outcome]:
    return [
        {"accuracy": 0, "format_errors": 0}
        if extraction is None
        else {
            "accuracy": int(any(is_correct(gold, extraction.answer) for gold in item.answer)),
            "format_errors": int(extraction.method == FAILED),
        }
        for item, extraction in zip(items, extractions, strict=True)
    ]


FAMILY = Family(
    name="spatial457",
    profiles={"official": None},
    answer_formats=("open",),
    metrics=("accuracy", "format_errors"),
    counts=("format_errors",),
    extract=extract,
    score_rows=score_rows,
    primary_metric="accuracy",
    tables=(
        Table("levels", "Accuracy per level (Spatial457)", ("accuracy",), by="level",
              order=("L1_single", "L2_objects", "L3_2d_spatial", "L4_occ", "L4_pose", "L5_6d_spatial",
                     "L5_collision")),
    ),
    radar_axis="level",
    question_types=("L1_single", "L2_objects", "L3_2d_spatial", "L4_occ", "L4_pose", "L5_6d_spatial",
                    "L5_collision"),
    chance_rows=("random",),
)
