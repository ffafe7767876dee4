"""Item files of the five families onto Item / ContextChange, driven by one mapping per family.

A family's mapping turns a parsed file into plain records (`ItemRecord`); one loop validates and
writes them for every family. A file either imports whole or writes nothing, and every problem is
reported with where it is (`scene0001_00[2].questions_answers[0]`, `line 7`, `row 3`) and why.
Formats: ../shared/FORMATS.md; layouts and examples: docs/IMPORT.md."""

import csv
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.db import transaction

from .models import AnswerFormat, Benchmark, ChangeType, ContextChange, Item, Scene

LETTERS = "ABCDEFGH"


class ImportFileError(Exception):
    """The file as a whole is unusable (wrong columns, not JSON)."""


@dataclass
class ItemRecord:
    where: str
    question: str
    answer_format: str
    answers: list
    external_id: str = ""
    choices: list = field(default_factory=list)
    tags: dict = field(default_factory=dict)
    scene_id: str | None = None
    change_text: str | None = None
    change_type: str | None = None


@dataclass
class ImportReport:
    file: str
    items: int = 0
    changes: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


# --- reading files ---------------------------------------------------------------------------

def read_json_or_jsonl(text: str):
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            if stripped.startswith("["):
                raise ImportFileError(f"not valid JSON: {exc.msg} at line {exc.lineno}") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ImportFileError(f"line {number}: not valid JSON ({exc.msg})") from None
    return rows


def as_rows(data) -> list:
    """A JSONL file of one line parses as a single object: still one row."""
    if isinstance(data, dict):
        return [data]
    if not isinstance(data, list):
        raise ImportFileError("expected a list of records")
    return data


def read_tsv(text: str, required: set[str]) -> list[dict]:
    reader = csv.DictReader(io.StringIO(text), delimiter="\t")
    missing = required - set(reader.fieldnames or [])
    if missing:
        raise ImportFileError(f"missing columns: {', '.join(sorted(missing))}")
    return list(reader)


def _need(row: dict, key: str, where: str) -> str:
    value = row.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"{where}: '{key}' is missing or empty")
    return value


# --- one mapping per family ------------------------------------------------------------------

def hypo3d_records(text: str) -> Iterator[ItemRecord]:
    data = read_json_or_jsonl(text)
    if not isinstance(data, dict):
        raise ImportFileError("expected an object {scene_id: [changes]}")
    for scene_id, changes in data.items():
        if not isinstance(changes, list):
            raise ImportFileError(f"{scene_id}: expected a list of changes")
        for c, change in enumerate(changes):
            where = f"{scene_id}[{c}]"
            change_text = _need(change, "context_change", where)
            change_type = _hypo3d_change_type(change.get("change_type", ""))
            if change_type not in ChangeType.values:
                raise ValueError(f"{where}: change_type '{change.get('change_type')}' names none of "
                                 f"{', '.join(ChangeType.values)}")
            for q, qa in enumerate(change.get("questions_answers") or []):
                qwhere = f"{where}.questions_answers[{q}]"
                yield ItemRecord(
                    where=qwhere, question=_need(qa, "question", qwhere), answer_format=AnswerFormat.OPEN,
                    answers=[str(_need(qa, "answer", qwhere))], external_id=str(qa.get("question_id", "")),
                    tags={"change_type": change_type, "question_type": str(qa.get("question_type", "")).split()},
                    scene_id=scene_id, change_text=change_text, change_type=change_type,
                )


def _hypo3d_change_type(value: str) -> str:
    """The release's exact strings are unknown; the type name is its second word ('Object Movement')."""
    words = str(value).lower().replace("_", " ").split()
    for word in words:
        if word in ChangeType.values:
            return word
    return words[1] if len(words) > 1 else (words[0] if words else "")


SRBENCH_SUBTYPES = {
    "height_higher": "height",
    "location_above": "location", "location_closer_to_camera": "location", "location_next_to": "location",
    "orientation_in_front_of": "orientation", "orientation_on_the_left": "orientation",
    "orientation_viewpoint": "orientation",
    "multi_object_closer_to": "multi_object", "multi_object_facing": "multi_object",
    "multi_object_viewpoint_towards_object": "multi_object", "multi_object_parallel": "multi_object",
    "multi_object_same_direction": "multi_object",
}


def srbench_records(text: str) -> Iterator[ItemRecord]:
    for r, row in enumerate(read_tsv(text, {"qid", "question", "A", "B", "answer", "category"}), start=2):
        where = f"row {r}"
        choices = [row[k] for k in "ABCD" if row.get(k)]
        answer = _need(row, "answer", where).strip().upper()
        if answer not in LETTERS[: len(choices)]:
            raise ValueError(f"{where}: answer '{answer}' is not one of the {len(choices)} options")
        subtype = row["category"]
        if subtype not in SRBENCH_SUBTYPES:
            raise ValueError(f"{where}: unknown category '{subtype}'")
        yield ItemRecord(
            where=where, question=_need(row, "question", where), answer_format=AnswerFormat.SINGLE,
            answers=[answer], choices=choices, external_id=_need(row, "qid", where),
            tags={"category": SRBENCH_SUBTYPES[subtype], "subtype": subtype}, scene_id=row.get("scene_id") or None,
        )


CAUSAL_ID = re.compile(r"^(?P<task>[A-Za-z]+)_Level_(?P<level>\d+)_\d+$")
OPTION = re.compile(r"\(([A-J])\)\s*([^()]+?)(?=\s*\([A-J]\)|$)", re.DOTALL)


def causalspatial_records(text: str) -> Iterator[ItemRecord]:
    for r, row in enumerate(as_rows(read_json_or_jsonl(text)), start=1):
        where = f"record {r}"
        item_id = _need(row, "id", where)
        match = CAUSAL_ID.match(item_id)
        if not match:
            raise ValueError(f"{where}: id '{item_id}' is not like Collision_Level_1_0")
        question = _need(row, "question", where)
        choices = [text.strip() for _, text in OPTION.findall(question)]
        answer = re.sub(r"[()\s]", "", _need(row, "answer", where)).upper()[:1]
        not_sure = re.sub(r"[()\s]", "", str(row.get("not_sure") or "")).upper()[:1] or None
        tags = {"task": match["task"].lower(), "level": f"L{match['level']}"}
        if not_sure:
            tags["not_sure"] = not_sure
        yield ItemRecord(where=where, question=question, answer_format=AnswerFormat.SINGLE, answers=[answer],
                         choices=choices, external_id=item_id, tags=tags, scene_id=row.get("scene_id"))


SPATIAL457_LEVELS = ("L1_single", "L2_objects", "L3_2d_spatial", "L4_occ", "L4_pose", "L5_6d_spatial",
                     "L5_collision")


def spatial457_records(text: str) -> Iterator[ItemRecord]:
    data = read_json_or_jsonl(text)
    rows = data.get("questions", []) if isinstance(data, dict) else data
    level = data.get("split") if isinstance(data, dict) else None
    for r, row in enumerate(rows, start=1):
        where = f"question {r}"
        row_level = row.get("category") or row.get("split") or level
        if row_level not in SPATIAL457_LEVELS:
            raise ValueError(f"{where}: level '{row_level}' is not one of {', '.join(SPATIAL457_LEVELS)}")
        yield ItemRecord(
            where=where, question=_need(row, "question", where), answer_format=AnswerFormat.OPEN,
            answers=[str(_need(row, "answer", where))],
            external_id=str(row.get("question_index", row.get("index", ""))),
            tags={"level": row_level, "image": row.get("image_filename", "")}, scene_id=row.get("scene_id"),
        )


M3_OPTION_PREFIX = re.compile(r"^\s*([A-H])[.)]\s*")


def m3verse_records(text: str) -> Iterator[ItemRecord]:
    for r, row in enumerate(as_rows(read_json_or_jsonl(text)), start=1):
        where = f"record {r}"
        options = row.get("options") or []
        if not 2 <= len(options) <= 8:
            raise ValueError(f"{where}: expected 2 to 8 options, got {len(options)}")
        choices = [M3_OPTION_PREFIX.sub("", option) for option in options]
        answers = sorted(str(a).strip().upper() for a in (row.get("answer") or []))
        if not answers or any(a not in LETTERS[: len(choices)] for a in answers):
            raise ValueError(f"{where}: answer {row.get('answer')} must be letters of the options")
        yield ItemRecord(
            where=where, question=_need(row, "question", where),
            answer_format=AnswerFormat.SINGLE if len(answers) == 1 else AnswerFormat.MULTI,
            answers=answers, choices=choices, external_id=_need(row, "question_id", where),
            scene_id=row.get("scene_id"),
            tags={"state_type": row.get("state_type", ""), "category": row.get("category", ""),
                  "subcategory": row.get("subcategory", ""), "capabilities": row.get("capabilities") or [],
                  "hallucination": bool(row.get("hallucination"))},
        )


FAMILY_MAPPINGS: dict[str, Callable[[str], Iterator[ItemRecord]]] = {
    "hypo3d": hypo3d_records,
    "3dsrbench": srbench_records,
    "causalspatial": causalspatial_records,
    "spatial457": spatial457_records,
    "m3verse": m3verse_records,
}


# --- the one loop ------------------------------------------------------------------------------

def import_item_file(benchmark: Benchmark, name: str, text: str, author=None,
                     scene_required: bool | None = None) -> ImportReport:
    """Import one file into the benchmark as approved items; all of it, or nothing."""
    report = ImportReport(file=name)
    mapping = FAMILY_MAPPINGS[benchmark.family]
    try:
        records = list(mapping(text))
    except ImportFileError as exc:
        report.errors.append(f"{name}: {exc}")
        return report
    except (ValueError, AttributeError, TypeError) as exc:
        report.errors.append(f"{name}: {exc}")
        return report
    if not records:
        report.errors.append(f"{name}: no items found")
        return report
    scenes = {s.external_id: s for s in Scene.objects.filter(benchmark=benchmark)}
    # Hypo3D items rest on a scene; other families may arrive before their images or videos.
    scene_required = benchmark.family == "hypo3d" if scene_required is None else scene_required
    for record in records:
        if record.scene_id and record.scene_id not in scenes and scene_required:
            report.errors.append(f"{name}: {record.where}: unknown scene id '{record.scene_id}'")
    if report.errors:
        return report
    with transaction.atomic():
        changes: dict[tuple, ContextChange] = {}
        for record in records:
            scene = scenes.get(record.scene_id) if record.scene_id else None
            change = None
            if record.change_text:
                key = (record.scene_id, record.change_text)
                if key not in changes:
                    changes[key] = ContextChange.objects.create(
                        scene=scene, change_type=record.change_type or "", raw_text=record.change_text,
                        status=ContextChange.Status.APPROVED, author=author,
                        provenance={"source": "import", "file": name},
                    )
                change = changes[key]
            Item.objects.create(
                benchmark=benchmark, scene=scene, change=change, external_id=record.external_id,
                question=record.question, answer_format=record.answer_format, choices=record.choices,
                answers=record.answers, tags=record.tags, status=Item.Status.APPROVED, author=author,
                provenance={"source": "import", "file": name, "where": record.where},
            )
        report.items, report.changes = len(records), len(changes)
    return report
