"""Gold rows and predictions: the two line formats, validated into small records.

A record that does not fit is refused with a `RecordError` whose message says
what is wrong; the caller adds where it came from (line number or list index).
"""

import itertools
import json
import string
from collections.abc import Iterator
from dataclasses import dataclass

ANSWER_FORMATS = ("open", "single", "multi")
LETTERS = string.ascii_uppercase
_LETTER_SET = frozenset(LETTERS)


class RecordError(ValueError):
    """A gold row or a prediction that does not follow its line format."""


# Records are not frozen: a frozen dataclass is three times slower to build, and loading adds a
# family's derived tags to each item. Nothing changes a record after loading.
@dataclass(slots=True)
class GoldItem:
    id: str
    answer_format: str
    question: str
    choices: tuple[str, ...]
    # open: the acceptable answers; single: one string; multi: the correct letters
    answer: str | tuple[str, ...]
    not_sure: str | None
    group: str | None
    tags: dict


@dataclass(slots=True)
class Prediction:
    id: str
    output: str
    repeat: int
    choices: tuple[str, ...] | None
    judge: float | None


def _record_id(record: dict) -> str:
    value = record.get("id")
    if type(value) is str:
        return value
    # bool is an int subclass; an id of `true` is a mistake, not an id
    if type(value) is not int:
        raise RecordError("'id' must be a string or an integer")
    return str(value)


def _all_strings(values: list) -> bool:
    return all(map(isinstance, values, itertools.repeat(str)))  # map: no Python frame per element


def _string_list(value, field: str) -> tuple[str, ...]:
    if type(value) is not list or not _all_strings(value):
        raise RecordError(f"'{field}' must be a list of strings")
    return tuple(value)


def _gold_answer(answer_format: str, answer):
    if answer_format == "open":
        if isinstance(answer, str):
            return (answer,)
        if isinstance(answer, list) and answer and _all_strings(answer):
            return tuple(answer)
        raise RecordError("'answer' of an open item must be a string or a non-empty list of strings")
    if answer_format == "single":
        if isinstance(answer, str) and answer:
            return answer
        # M3-Verse publishes every answer as a list of letters, single-choice ones too
        if isinstance(answer, list) and len(answer) == 1 and isinstance(answer[0], str) and answer[0]:
            return answer[0]
        raise RecordError("'answer' of a single-choice item must be a letter (or a list of one letter)")
    if isinstance(answer, list) and answer and all(isinstance(a, str) and a in _LETTER_SET for a in answer):
        return tuple(answer)
    raise RecordError("'answer' of a multi-choice item must be a non-empty list of letters")


def parse_gold(record) -> GoldItem:
    if not isinstance(record, dict):
        raise RecordError("not a JSON object")
    answer_format = record.get("answer_format")
    if answer_format not in ANSWER_FORMATS:
        raise RecordError(f"'answer_format' must be one of {', '.join(ANSWER_FORMATS)}")
    if "answer" not in record:
        raise RecordError("missing 'answer'")
    question = record.get("question", "")
    if not isinstance(question, str):
        raise RecordError("'question' must be a string")
    not_sure = record.get("not_sure")
    if not_sure is not None and not isinstance(not_sure, str):
        raise RecordError("'not_sure' must be a letter or null")
    group = record.get("group")
    if group is not None and not isinstance(group, str):
        raise RecordError("'group' must be a string")
    tags = record.get("tags", {})
    if not isinstance(tags, dict):
        raise RecordError("'tags' must be an object")
    choices = record.get("choices")
    choices = () if choices is None else _string_list(choices, "choices")
    if len(choices) > len(LETTERS):
        raise RecordError(f"at most {len(LETTERS)} choices, one per letter")
    return GoldItem(
        id=_record_id(record),
        answer_format=answer_format,
        question=question,
        choices=choices,
        answer=_gold_answer(answer_format, record["answer"]),
        not_sure=not_sure,
        group=group,
        tags=tags,
    )


def parse_prediction(record) -> Prediction:
    if not isinstance(record, dict):
        raise RecordError("not a JSON object")
    output = record.get("output")
    if output is None:
        output = ""
    elif type(output) in (int, float):
        # VLMEvalKit reads predictions with str(x); a bare number is an answer
        output = str(output)
    elif type(output) is not str:
        raise RecordError("'output' must be a string")
    repeat = record.get("repeat", 0)
    if type(repeat) is not int or repeat < 0:
        raise RecordError("'repeat' must be a non-negative integer")
    choices = record.get("choices")
    if choices is not None:
        choices = _string_list(choices, "choices")
    judge = record.get("judge")
    if judge is not None and (type(judge) not in (int, float) or not 1 <= judge <= 5):
        raise RecordError("'judge' must be a rating from 1 to 5")
    return Prediction(id=_record_id(record), output=output, repeat=repeat, choices=choices, judge=judge)


# identity letter maps by option count, shared: callers only read them
_SAME_LETTERS = [{letter: letter for letter in LETTERS[:count]} for count in range(len(LETTERS) + 1)]


def letter_map(shown: tuple[str, ...] | None, canonical: tuple[str, ...]) -> dict[str, str]:
    """Shown letter -> canonical letter, pairing option texts; identity when the gold order was shown.

    Raises RecordError when the shown options are not a reordering of the gold options.
    """
    if shown is None:
        return _SAME_LETTERS[len(canonical)]
    if sorted(shown) != sorted(canonical):
        raise RecordError("'choices' shown are not a reordering of the gold choices")
    positions: dict[str, list[int]] = {}
    for index, text in enumerate(canonical):
        positions.setdefault(text, []).append(index)
    # equal option texts are paired in order, so a repeated text maps one-to-one
    return {LETTERS[i]: LETTERS[positions[text].pop(0)] for i, text in enumerate(shown)}


def read_jsonl(lines: list[bytes], name: str, errors: list[str]) -> Iterator[tuple[int, object]]:
    """(line number, record) for each JSON line; blank lines are skipped, bad ones reported."""
    for number, raw in enumerate(lines, start=1):
        where = f"{name} line {number}"
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8").strip()
        except UnicodeDecodeError:
            errors.append(f"{where}: not UTF-8 text")
            continue
        if not text:
            continue
        try:
            yield number, json.loads(text)
        except (ValueError, RecursionError) as error:
            # RecursionError: JSON nested deeper than the parser goes
            errors.append(f"{where}: invalid JSON ({getattr(error, 'msg', type(error).__name__)})")
