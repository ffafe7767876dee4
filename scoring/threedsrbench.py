"""3DSRBench: multiple choice read MMBench-style, scored vanilla, circular, flip and flip+circular.

Follows VLMEvalKit (`can_infer_option`, `can_infer_text`, `_3DSRBench`) and the official
circular script. Ids encode the protocol: an 8-character base id, rotated-choice copies
`-1`..`-3`, the mirrored image `-flip` and its rotations `-flip-N`.
"""

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from .family import (
    FAILED,
    JUDGE,
    RULE,
    Extraction,
    Family,
    Groups,
    Outcome,
    Run,
    Table,
    Tallies,
    gold_letters,
)
from .records import LETTERS, GoldItem, Prediction

CATEGORY_SUBTYPES = {
    "height": ("height_higher",),
    "location": ("location_above", "location_closer_to_camera", "location_next_to"),
    "orientation": ("orientation_in_front_of", "orientation_on_the_left", "orientation_viewpoint"),
    "multi_object": (
        "multi_object_closer_to",
        "multi_object_facing",
        "multi_object_viewpoint_towards_object",
        "multi_object_parallel",
        "multi_object_same_direction",
    ),
}
SUBTYPE_CATEGORY = {
    subtype: category for category, subtypes in CATEGORY_SUBTYPES.items() for subtype in subtypes
}

# VLMEvalKit's answer for "the model chose no option"; never a correct letter.
NO_OPTION = "Z"
REFUSALS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
_REFUSAL = re.compile("|".join(map(re.escape, REFUSALS)))
API_FAILURE = "Failed to obtain answer via API"
_TOKEN_BREAKS = str.maketrans({char: " " for char in ".()[],:;!*#{}"})
_ANSWER_IS = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")
_ROTATION_SUFFIX = re.compile(r"-\d$")

Judge = Callable[[str, dict[str, str], str], str | None]


def infer_option(output: str, options: dict[str, str]) -> str | None:
    """can_infer_option: a refusal, a lone option letter near the end, a lone `Z`, or `answer is X`."""
    if API_FAILURE in output:
        return None
    if _REFUSAL.search(output):
        return NO_OPTION
    tokens = output.translate(_TOKEN_BREAKS).split()
    found = [letter for letter in options if letter in tokens]
    if len(found) == 1:
        # a letter early in a long answer is more likely a word ("A chair ...") than the choice
        if tokens.index(found[0]) > len(tokens) - 5:
            return found[0]
    elif not found and NO_OPTION in tokens:
        return NO_OPTION
    match = _ANSWER_IS.search(output)
    if match and match.group(1).upper() in options:
        return match.group(1).upper()
    return None


def infer_text(output: str, options: dict[str, str]) -> str | None:
    """can_infer_text: the one option whose text the output contains, unless the output is long."""
    lowered = output.lower()
    if len(lowered) > 2 * sum(len(text) for text in options.values()):
        return None
    found = [letter for letter, text in options.items() if text.lower() in lowered]
    return found[0] if len(found) == 1 else None


def read_letter(output: str, options: dict[str, str], question: str = "", judge: Judge | None = None):
    """(shown letter or NO_OPTION or None, method): the rules first, then the caller's judge."""
    letter = infer_option(output, options) or infer_text(output, options)
    if letter is not None:
        return letter, RULE
    if judge is not None:
        letter = judge(question, options, output)
        if letter == NO_OPTION or letter in options:
            return letter, JUDGE
    return None, FAILED


def extract_letter(output: str, options: dict[str, str], question: str = "", judge: Judge | None = None):
    """The shown letter chosen, NO_OPTION, or None when unresolved (wrong unless a judge resolves it)."""
    return read_letter(output, options, question, judge)[0]


def extract(item: GoldItem, pred: Prediction, profile, run: Run) -> Extraction:
    """The chosen option as its gold-order letter (NO_OPTION for a refusal), and how it was read."""
    to_canonical = gold_letters(item, pred, run)
    if to_canonical is None:
        return Extraction("", FAILED)
    shown = pred.choices if pred.choices is not None else item.choices
    options = dict(zip(LETTERS, shown, strict=False))  # more letters than options
    letter, method = read_letter(pred.output, options, item.question, run.judge)
    if letter is None:
        return Extraction("", FAILED)
    return Extraction(NO_OPTION if letter == NO_OPTION else to_canonical[letter], method)


def score_rows(
    items: list[GoldItem], preds: list[Prediction | None], extractions: list[Extraction | None], profile, run: Run
) -> list[Outcome]:
    return [
        {"hit": int(extraction is not None and extraction.answer == item.answer)}
        for item, extraction in zip(items, extractions, strict=True)
    ]


def circular_key(item: GoldItem) -> str:
    """The rotations of one question: the id without its one-digit `-N` suffix (`X-flip` stays apart)."""
    return item.group if item.group is not None else _ROTATION_SUFFIX.sub("", item.id)


def flip_key(item: GoldItem) -> str:
    """A row and its mirrored twin: the id without `-flip`."""
    return item.id.replace("-flip", "", 1)


def flip_circular_key(item: GoldItem) -> str:
    """Every rotation and flip of one question; on 3DSRBench ids, their first 8 characters."""
    return circular_key(item).replace("-flip", "", 1)


@dataclass(frozen=True)
class QuestionGroups:
    """Row indices of each circular group and flip pair; circular-group indices of each question."""

    circular: list[list[int]]
    flip: list[list[int]]
    flip_circular: list[list[int]]


def _rows_by(items: list[GoldItem], key: Callable[[GoldItem], str]) -> list[list[int]]:
    rows: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        rows.setdefault(key(item), []).append(index)
    return list(rows.values())


def question_groups(items: list[GoldItem]) -> QuestionGroups:
    circular = _rows_by(items, circular_key)
    questions: dict[str, list[int]] = {}
    for index, rows in enumerate(circular):
        questions.setdefault(flip_circular_key(items[rows[0]]), []).append(index)
    return QuestionGroups(circular, _rows_by(items, flip_key), list(questions.values()))


def tally(
    groups: QuestionGroups,
    outcomes: list[Outcome],
    rows_by_key: Groups,
    circular_combine: Callable[[list[float]], float] = math.prod,
) -> Tallies:
    """Means over rows (vanilla) and over groups; a group counts under the keys of its first row.

    A group's value is the product of its rows' hits (all correct); chance levels pass
    another `circular_combine` for a guesser that answers every rotation alike.
    """
    hits = [outcome["hit"] for outcome in outcomes]
    circular_values = [circular_combine([hits[row] for row in rows]) for rows in groups.circular]
    by_first_row = {
        "circular": [(rows[0], value) for rows, value in zip(groups.circular, circular_values, strict=True)],
        "flip": [(rows[0], math.prod(hits[row] for row in rows)) for rows in groups.flip],
        "flip_circular": [
            (groups.circular[members[0]][0], math.prod(circular_values[member] for member in members))
            for members in groups.flip_circular
        ],
    }
    tallies: Tallies = {}
    for key, rows in rows_by_key.items():
        tallies[key] = {}
        if not rows:
            continue
        in_group = set(rows)
        tallies[key]["vanilla"] = [sum(hits[row] for row in rows), len(rows)]
        for metric, values in by_first_row.items():
            chosen = [value for first, value in values if first in in_group]
            if chosen:
                tallies[key][metric] = [sum(chosen), len(chosen)]
    return tallies


def check(item: GoldItem) -> str | None:
    if item.answer not in tuple(LETTERS[: len(item.choices)]):
        return "'answer' must be the letter of one of the choices"
    return None


def derive_tags(item: GoldItem) -> dict:
    """`subtype` (12) and `category` (4): a VLMEvalKit `category` naming a subtype becomes both."""
    subtype = item.tags.get("subtype", item.tags.get("category"))
    if isinstance(subtype, str) and subtype in SUBTYPE_CATEGORY:
        return {**item.tags, "subtype": subtype, "category": SUBTYPE_CATEGORY[subtype]}
    return item.tags


FAMILY = Family(
    name="3dsrbench",
    profiles={"official": None},
    answer_formats=("single",),
    metrics=("vanilla", "circular", "flip", "flip_circular"),
    extract=extract,
    score_rows=score_rows,
    prepare=question_groups,
    tally=tally,
    check=check,
    derive_tags=derive_tags,
    unit_key=flip_circular_key,
    primary_metric="vanilla",
    tables=(
        Table("categories", "CircularEval by category (3DSRBench Table 2)", ("circular", "vanilla"),
              by="category", order=tuple(CATEGORY_SUBTYPES)),
        Table("viewpoints", "Common and uncommon viewpoints (3DSRBench Table 4)", ("circular", "vanilla"),
              by="category", order=tuple(CATEGORY_SUBTYPES), within="viewpoint",
              within_order=("common", "uncommon"), group_average="first", optional=True),
    ),
    radar_axis="category",
    question_types=tuple(CATEGORY_SUBTYPES),
    chance_rows=("random", "random++"),
)
