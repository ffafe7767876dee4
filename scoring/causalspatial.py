"""CausalSpatial: the answer letter read from `{'Reasoning': ..., 'Answer': ...}`; accuracy and Not-Sure rate.

Follows `score.py` of CausalSpatial/CausalSpatial. The paper reports each metric as the
mean over 5 runs with a standard deviation; give each run its `repeat` number.
"""

import ast
import re
import warnings

from .family import FAILED, RULE, Extraction, Family, Outcome, Run, Table, gold_letters
from .records import GoldItem, Prediction

_ANSWER_VALUE = re.compile(r"[\"']?[Aa]nswer[\"']?\s*:\s*[\"']?([^\"']+)[\"']?")
_LETTER_IN_VALUE = tuple(
    re.compile(pattern) for pattern in (r"\(([a-j])\)", r"^([a-j])$", r"([a-j])\.", r"^([a-j])\)")
)
_GOLD_LETTER = re.compile(r"\(([A-Ja-j])\)")
# the script reads the not-sure field with A-F only, unlike the gold letter's A-J
_NOT_SURE_LETTER = re.compile(r"\(([A-Fa-f])\)")
_ID_TASK_LEVEL = re.compile(r"^(?P<task>.+)_Level_(?P<level>\d+)_\d+$")


def answer_value(output: str) -> str | None:
    """The last `Answer: value` in the output, else `Answer` of the `{...}` span read as a Python literal."""
    values = _ANSWER_VALUE.findall(output)
    if values:
        return values[-1]
    start, end = output.find("{"), output.rfind("}")
    try:
        # literal_eval warns on odd escapes in model text; the script never showed such warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            literal = ast.literal_eval(output[start : end + 1])
        return str(literal["Answer"])
    except Exception:
        # the script's own fallback: any failure to read the span means no answer
        return None


def parse_answer(output: str) -> str | None:
    """The chosen letter: `(x)`, a lone `x`, `x.`, `x)` in the value, else its first character if a letter."""
    value = answer_value(output)
    if value is None:
        return None
    value = value.strip().lower()
    for pattern in _LETTER_IN_VALUE:
        match = pattern.search(value)
        if match:
            return match.group(1).upper()
    if value and value[0].isalpha():
        return value[0].upper()
    return None


def gold_letter(answer: str) -> str:
    answer = answer.strip()
    match = _GOLD_LETTER.search(answer)
    return match.group(1).upper() if match else answer[0].upper()


def not_sure_letter(field: str | None) -> str:
    if not field:
        return ""
    match = _NOT_SURE_LETTER.search(field)
    return match.group(1).upper() if match else field[0].upper()


def extract(item: GoldItem, pred: Prediction, profile, run: Run) -> Extraction:
    """The parsed letter, as the gold option it shows when the options were shown in another order."""
    letter = parse_answer(pred.output)
    if pred.choices is not None:
        to_canonical = gold_letters(item, pred, run)
        letter = None if to_canonical is None else to_canonical.get(letter)
    return Extraction("", FAILED) if letter is None else Extraction(letter, RULE)


def score_rows(
    items: list[GoldItem], preds: list[Prediction | None], extractions: list[Extraction | None], profile, run: Run
) -> list[Outcome]:
    outcomes = []
    for item, extraction in zip(items, extractions, strict=True):
        letter = extraction.answer if extraction is not None else ""
        not_sure = not_sure_letter(item.not_sure)
        outcomes.append({
            "accuracy": int(bool(letter) and letter == gold_letter(item.answer)),
            "not_sure_rate": int(bool(not_sure) and letter == not_sure),
        })
    return outcomes


def check(item: GoldItem) -> str | None:
    if not item.answer.strip():
        return "'answer' must name a letter"
    return None


def derive_tags(item: GoldItem) -> dict:
    """`task` and `level` from an id such as `Collision_Level_1_0` when the tags lack them."""
    match = _ID_TASK_LEVEL.match(item.id)
    if match is None or ("task" in item.tags and "level" in item.tags):
        return item.tags
    derived = {"task": match["task"].lower(), "level": f"L{match['level']}"}
    return {**derived, **item.tags}


FAMILY = Family(
    name="causalspatial",
    profiles={"official": None},
    answer_formats=("single",),
    metrics=("accuracy", "not_sure_rate"),
    extract=extract,
    score_rows=score_rows,
    check=check,
    derive_tags=derive_tags,
    primary_metric="accuracy",
    tables=(
        Table("levels", "Accuracy (Not-Sure rate) by level and task, mean ± std over repeats (CausalSpatial "
              "Tables 2 and 4)", ("accuracy", "not_sure_rate"),
              by="task", order=("collision", "compatibility", "occlusion", "trajectory"),
              within="level", within_order=("L1", "L2"), group_average="last", not_ranked=("not_sure_rate",),
              interval_style="brackets"),
    ),
    radar_axis="task",
    question_types=("collision", "compatibility", "occlusion", "trajectory"),
    chance_rows=("random",),
)
