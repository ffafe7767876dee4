"""`--gold` as a release: a folder HypoLab exported (its `items.jsonl`, else the family's published-shape file
in it) or a published-shape file itself, read into the scorer's gold lines (docs/METRICS.md). Pure Python,
like the rest of the scorer; the shapes are those benchmarks/releases/published.py writes
(../shared/FORMATS.md): hypo3d.json, 3dsrbench.tsv, causalspatial.json, spatial457.tsv, m3verse.jsonl."""

import csv
import io
import json
import re
import sys
from pathlib import Path

ITEMS_FILE = "items.jsonl"
PUBLISHED_FILES = {"hypo3d": "hypo3d.json", "3dsrbench": "3dsrbench.tsv", "causalspatial": "causalspatial.json",
                   "spatial457": "spatial457.tsv", "m3verse": "m3verse.jsonl"}
LETTERS = "ABCDEFGHIJ"
# CausalSpatial's task columns (Table 2, scoring.causalspatial's order); a published id's prefix names one
# by its first word (`Trajectory_Prediction`), or otherwise: `Physics_*` ids are trajectory items.
CAUSAL_TASKS = ("collision", "compatibility", "occlusion", "trajectory")
CAUSAL_TASK_ALIASES = {"physics": "trajectory"}
CAUSAL_ID = re.compile(r"^(?P<task>.+?)_Level_(?P<level>\d+)_(?P<index>\d+)$", re.IGNORECASE)
_LETTER = re.compile(r"^\(?\s*([A-Ja-j])\s*\)?[.:]?$")
_OPTION_PREFIX = re.compile(r"^\s*\(?([A-J])[.):]\s*")


def is_release(path: str, family: str) -> bool:
    """A folder, or a file named as the family's published shape (`...-3dsrbench.tsv` too)."""
    target = Path(path)
    return target.is_dir() or target.name.endswith(PUBLISHED_FILES[family])


def release_gold(path: str, family: str) -> list[dict]:
    """The gold lines of a release folder or published-shape file; ValueError naming what is missing."""
    target = Path(path)
    if target.is_dir():
        if (target / ITEMS_FILE).is_file():
            return items_gold(target / ITEMS_FILE)
        found = sorted(target.glob(f"*{PUBLISHED_FILES[family]}"))
        if not found:
            raise ValueError(f"{path}: neither {ITEMS_FILE} nor a {PUBLISHED_FILES[family]} in the folder")
        target = found[0]
    return PUBLISHED_READERS[family](target.read_text(encoding="utf-8-sig"))


def causal_task(value) -> str:
    """A CausalSpatial task as the paper's column names it: `Collision` -> collision, `Trajectory_Prediction`
    -> trajectory, `Physics` -> trajectory; any other name lower-cased as it is (the importer's rule too)."""
    task = str(value).strip().lower()
    first = re.split(r"[\s_\-]+", task)[0]
    first = CAUSAL_TASK_ALIASES.get(first, first)
    return first if first in CAUSAL_TASKS else task


def _not_sure(tags: dict, choices: list[str]) -> str | None:
    letter = (tags or {}).get("not_sure")
    if isinstance(letter, str) and len(letter) == 1 and letter.isalpha():
        return letter.upper()
    lowered = [str(c).strip().rstrip(".").lower() for c in choices or []]
    return LETTERS[lowered.index("not sure")] if "not sure" in lowered else None


def _gold(item_id, answer_format, question, choices, answers, tags, not_sure=None) -> dict:
    return {"id": str(item_id), "answer_format": answer_format, "question": question, "choices": list(choices),
            "answer": answers[0] if answer_format == "single" and answers else list(answers),
            "not_sure": not_sure if not_sure is not None else _not_sure(tags, choices), "tags": tags}


def items_gold(path: Path) -> list[dict]:
    """A release's items.jsonl: each line keyed by its scoring id (the benchmark's own id, else the release
    id), as the platform scores it."""
    gold = []
    for raw in path.read_bytes().split(b"\n"):
        if raw.strip():
            line = json.loads(raw)
            gold.append(_gold(line.get("external_id") or line["id"], line["answer_format"], line["question"],
                              line.get("choices") or [], line.get("answers") or [], line.get("tags") or {}))
    return gold


def _tsv_rows(text: str) -> list[dict]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # base64 images in a cell
    return list(csv.DictReader(io.StringIO(text), delimiter="\t"))


def _json(text: str):
    stripped = text.strip()
    if stripped.startswith(("[", "{")):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            pass
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _hypo3d(text: str) -> list[dict]:
    gold = []
    for changes in json.loads(text).values():
        for change in changes:
            words = str(change.get("change_type") or "").split()
            change_type = (words[1] if len(words) > 1 else words[0] if words else "").lower()  # metric_compute.py
            for qa in change.get("questions_answers") or []:
                answers = [qa["answer"], *[a for a in qa.get("answers") or [] if a != qa["answer"]]]
                types = str(qa.get("question_type") or "").split()
                gold.append(_gold(qa["question_id"], "open", qa["question"], [], answers,
                                  {"change_type": change_type, "question_type": types}))
    return gold


def _srbench(text: str) -> list[dict]:
    gold = []
    for row in _tsv_rows(text):
        choices = [row[letter] for letter in "ABCD" if row.get(letter)]
        tags = {"category": row["category"]}
        for key in ("viewpoint", "flip"):
            if row.get(key):
                tags[key] = row[key]
        gold.append(_gold(row["qid"], "single", row["question"], choices, [row["answer"].strip("() .")], tags))
    return gold


def _causal_letter(value: str, choices: list[str]) -> str:
    match = _LETTER.match(str(value).strip())
    if match:
        return match.group(1).upper()
    normalised = [" ".join(str(c).split()).rstrip(".").lower() for c in choices]
    return LETTERS[normalised.index(" ".join(str(value).split()).rstrip(".").lower())]


def _causalspatial(text: str) -> list[dict]:
    gold = []
    for row in _json(text):
        tags = {key: row[key] for key in ("task", "level", "type", "difficulty") if row.get(key) not in (None, "")}
        named = CAUSAL_ID.match(str(row.get("id", "")))
        if named:  # the task and level an id names, as the paper's columns name them
            tags = {"task": causal_task(named["task"]), "level": f"L{int(named['level'])}", **tags}
        if "task" in tags:
            tags["task"] = causal_task(tags["task"])
        if isinstance(row.get("options"), list):
            choices = [_OPTION_PREFIX.sub("", str(o).strip()) for o in row["options"]]
            answer = _causal_letter(row["answer"], choices)
            not_sure = _causal_letter(row["not_sure"], choices) if row.get("not_sure") else None
        else:  # the synthetic shape: the options are inside the question; task and level are in the id
            choices, answer = [], _causal_letter(row["answer"], [])
            not_sure = _causal_letter(row["not_sure"], []) if row.get("not_sure") else None
        gold.append(_gold(row["id"], "single", row["question"], choices, [answer], tags, not_sure))
    return gold


def _spatial457(text: str) -> list[dict]:
    return [_gold(row.get("question_id") or row["index"], "open", row["question"], [], [row["answer"]],
                  {"level": row["category"]}) for row in _tsv_rows(text)]


def _m3verse(text: str) -> list[dict]:
    gold = []
    for row in _json(text):
        choices = [_OPTION_PREFIX.sub("", str(o)) for o in row["options"]]
        answers = row["answer"] if isinstance(row["answer"], list) else [row["answer"]]
        single = row.get("question_type") == "single_choice"
        tags = {key: row[key] for key in ("state_type", "category", "subcategory", "capabilities", "hallucination")
                if key in row}
        gold.append(_gold(row["question_id"], "single" if single else "multi", row["question"], choices,
                          sorted(answers), tags))
    return gold


PUBLISHED_READERS = {"hypo3d": _hypo3d, "3dsrbench": _srbench, "causalspatial": _causalspatial,
                     "spatial457": _spatial457, "m3verse": _m3verse}
