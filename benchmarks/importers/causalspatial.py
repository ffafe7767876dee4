"""CausalSpatial's published shapes: the synthetic set (ids like Collision_Level_1_0, options written
inside the question) and the real-world subset (options as a list, the answer as an option's text)."""

import re
from collections.abc import Iterator

from benchmarks.models import AnswerFormat

# `<Task>_Level_<n>_<i>`, and the task as the paper's four columns name it (Physics_* -> trajectory)
from scoring.release_gold import CAUSAL_ID, causal_task

from .images import image_field
from .rows import (
    LETTERS,
    OPTION_PREFIX,
    ItemRecord,
    Problem,
    each_json_record,
    generated_provenance,
    need,
    text_id,
)

LEVEL_FIELD = re.compile(r"^(?:L|Level[_ ]?)?(\d+)$", re.IGNORECASE)


def causal_level(value, where: str) -> str:
    """`L1` from `L1`, `1`, `Level_1` or 1."""
    match = LEVEL_FIELD.match(str(value).strip())
    if match is None:
        raise ValueError(f"{where}: level '{value}' is not like L1")
    return f"L{int(match.group(1))}"
PAREN_MARK = re.compile(r"\(([A-J])\)")
DOT_MARK = re.compile(r"(?<![^\s;,:])([A-J])[.):](?=\s|$)")
LETTER_ONLY = re.compile(r"^\(?\s*([A-Ja-j])\s*\)?[.:]?$")
LETTER_FIRST = re.compile(r"^\(?([A-J])[).:]\s")


def _option_chain(marks: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """The longest run A, B, C... of option marks in order; the latest A wins a tie (options come last)."""
    best: list = []
    for i, mark in enumerate(marks):
        if mark[0] != "A":
            continue
        chain = [mark]
        for other in marks[i + 1:]:
            if other[0] == LETTERS[len(chain)]:
                chain.append(other)
        if len(chain) >= len(best):
            best = chain
    return best if len(best) >= 2 else []


def parse_options(question: str) -> list[str]:
    """Options written inside a question: `(A) yes (B) no`, `A. yes; B. no;` or one per line."""
    return [text for text, _, _ in spelled_options(question)]


def spelled_options(question: str) -> list[tuple[str, int, int]]:
    """Each option written inside the question, in letter order: its own words and where they stand
    in the question (start, end), so the options can be written again in another order."""
    for pattern in (PAREN_MARK, DOT_MARK):
        chain = _option_chain([(m.group(1), m.start(), m.end()) for m in pattern.finditer(question)])
        if chain:
            break
    else:
        return []
    options = []
    for k, (_, _, end) in enumerate(chain):
        stop = chain[k + 1][1] if k + 1 < len(chain) else len(question)
        text = question[end:stop]
        if k + 1 == len(chain):
            text = text.strip().split("\n", 1)[0]
        text = _option_text(text)
        start = end + len(question[end:stop]) - len(question[end:stop].lstrip())
        options.append((text, start, start + len(text)))
    return options


# what joins options in a sentence or a list: "(A) Yes, (B) No or (C) Not sure.", "- (A) ...;"
_OPTION_TAIL = re.compile(r"(?:[\s;,]+(?:or|and)|[\s;,\-*\u2022]+)$")


def _option_tail_removed(text: str) -> str:
    while True:
        cut = _OPTION_TAIL.sub("", text)
        if cut == text:
            return text
        text = cut


def _option_text(text: str) -> str:
    """One option's own words: `No or` -> `No`, `Not sure.` -> `Not sure` (the papers' wordings)."""
    text = _option_tail_removed(text.strip())
    if text.endswith(".") and not text.endswith("..") and not re.search(r"\d\.$", text):
        text = _option_tail_removed(text[:-1])
    return text


def _norm(text) -> str:
    return " ".join(str(text).split()).strip().rstrip(".").lower()


def letter_of(value, choices: list[str], where: str, what: str) -> str:
    """A letter (`A`, `(A)`, `A.`), an option's text, or `A. text`; refused when it names no option."""
    text = str(value).strip()
    match = LETTER_ONLY.match(text)
    letter = match.group(1).upper() if match else None
    if letter is None:
        normalised = [_norm(c) for c in choices]
        if _norm(text) in normalised:
            letter = LETTERS[normalised.index(_norm(text))]
        elif LETTER_FIRST.match(text):
            letter = LETTER_FIRST.match(text).group(1)
    if letter is None or letter not in LETTERS[: len(choices)]:
        raise ValueError(f"{where}: {what} '{text}' is not one of the {len(choices)} options")
    return letter


def causalspatial_records(text: str, name: str = "") -> Iterator[ItemRecord | Problem]:
    def build(where, row):
        if isinstance(row.get("options"), list):
            return _causal_real_world(where, row)
        item_id = text_id(row.get("id") or row.get("question_id"))
        if not item_id:
            raise ValueError(f"{where}: 'id' is missing or empty")
        match = CAUSAL_ID.match(item_id)
        if not match:
            raise ValueError(f"{where}: id '{item_id}' is not like Collision_Level_1_0")
        question = str(need(row, "question", where))
        choices = parse_options(question)
        if len(choices) < 2:
            raise ValueError(f"{where}: no options found in the question (write them as (A) ... (B) ... "
                             "or A. ...; B. ...)")
        answer = row.get("answer") if row.get("answer") not in (None, "") else row.get("gt_answer")
        if answer in (None, ""):
            raise ValueError(f"{where}: 'answer' is missing or empty")
        tags = {"task": causal_task(match["task"]), "level": f"L{match['level']}"}
        if row.get("not_sure") not in (None, ""):
            tags["not_sure"] = letter_of(row["not_sure"], choices, where, "not_sure")
        if row.get("difficulty") not in (None, ""):
            tags["difficulty"] = row["difficulty"]
        image = image_field(row, tags)
        return ItemRecord(
            where=where, question=question, answer_format=AnswerFormat.SINGLE,
            answers=[letter_of(answer, choices, where, "answer")], choices=choices, external_id=item_id,
            tags=tags, scene_id=row.get("scene_id") or (item_id if image else None), image=image,
            generated=generated_provenance(row, where),
        )

    return each_json_record(text, build)


def _causal_real_world(where: str, row: dict) -> ItemRecord:
    """The real-world subset: `{id, type, question, options: [texts], answer: option text}`."""
    item_id = text_id(row.get("id"))
    options = [str(o).strip() for o in row["options"]]
    prefixed = [OPTION_PREFIX.match(o) for o in options]
    if options and all(m and m.group(1) == LETTERS[k] for k, m in enumerate(prefixed)):
        options = [OPTION_PREFIX.sub("", o) for o in options]
    if not 2 <= len(options) <= len(LETTERS):
        raise ValueError(f"{where}: expected 2 to {len(LETTERS)} options, got {len(options)}")
    answer = need(row, "answer", where)
    normalised = [_norm(o) for o in options]
    if _norm(answer) in normalised:
        letter = LETTERS[normalised.index(_norm(answer))]
    else:
        letter = letter_of(answer, options, where, "answer")
    tags = {}
    if row.get("type") not in (None, ""):
        tags["type"] = row["type"]
    tags.update(_task_and_level(row, item_id, where))
    if row.get("not_sure") not in (None, ""):
        tags["not_sure"] = letter_of(row["not_sure"], options, where, "not_sure")
    if row.get("difficulty") not in (None, ""):
        tags["difficulty"] = row["difficulty"]
    image = image_field(row, tags)
    return ItemRecord(
        where=where, question=str(need(row, "question", where)), answer_format=AnswerFormat.SINGLE,
        answers=[letter], choices=options, external_id=item_id, tags=tags,
        scene_id=row.get("scene_id") or (item_id if image and item_id else None), image=image,
        generated=generated_provenance(row, where),
    )


def _task_and_level(row: dict, item_id: str, where: str) -> dict:
    """An options-list row's task and level: its `task` / `level` fields (a HypoLab release writes them),
    else what a `<Task>_Level_<n>_<i>` id says; neither for the real-world subset."""
    found = {}
    match = CAUSAL_ID.match(item_id)
    if match:
        found = {"task": causal_task(match["task"]), "level": f"L{match['level']}"}
    if row.get("task") not in (None, ""):
        found["task"] = causal_task(row["task"])
    if row.get("level") not in (None, ""):
        found["level"] = causal_level(row["level"], where)
    return found
