"""Spatial457's published shapes: the generator's JSON ({split, questions}) or rows, and VLMEvalKit's
Spatial457.tsv; the level comes from the row, the file, or the file's name."""

import json
from collections.abc import Iterator
from pathlib import PurePosixPath

from benchmarks.models import AnswerFormat

from .images import image_data, tsv_images
from .rows import (
    ImageData,
    ImportFileError,
    ItemRecord,
    Problem,
    as_rows,
    cell,
    each_record,
    generated_provenance,
    need,
    numbered,
    read_json_or_jsonl,
    read_tsv,
    text_id,
)

SPATIAL457_LEVELS = ("L1_single", "L2_objects", "L3_2d_spatial", "L4_occ", "L4_pose", "L5_6d_spatial",
                     "L5_collision")
SPATIAL457_DATA_FIELDS = ("program", "template_filename", "question_family_index", "question_index")


def spatial457_answer(value) -> str:
    """Answers are strings, integers or booleans in the generated JSON: "yes"/"no" for booleans."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return text_id(value)


def _level(candidates, name: str) -> str:
    for candidate in candidates:
        if candidate in SPATIAL457_LEVELS:
            return candidate
    named = [level for level in SPATIAL457_LEVELS if level.lower() in PurePosixPath(name).name.lower()]
    if len(named) == 1:
        return named[0]
    given = next((c for c in candidates if c not in (None, "")), None)
    if given is None:
        raise ValueError(f"no level (category, split or a file name like L2_objects.json); one of "
                         f"{', '.join(SPATIAL457_LEVELS)}")
    raise ValueError(f"level '{given}' is not one of {', '.join(SPATIAL457_LEVELS)}")


def spatial457_records(text: str, name: str = "") -> Iterator[ItemRecord | Problem]:
    if not text.lstrip().startswith(("{", "[")):
        return _spatial457_tsv(text, name)
    data = read_json_or_jsonl(text)
    if isinstance(data, dict) and "questions" in data:
        rows, file_level = data.get("questions") or [], data.get("split")
        generated = data.get("provenance")  # review/generators/spatial457 writes it beside `info`
    else:
        rows, file_level, generated = as_rows(data), None, None
    if not isinstance(rows, list):
        raise ImportFileError("'questions' must be a list")

    def build(where, row):
        try:
            level = _level([row.get("category"), row.get("split"), file_level], name)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        answer = row.get("answer")
        if answer is None or answer == "":
            raise ValueError(f"{where}: 'answer' is missing or empty")
        tags = {"level": level, "image": row.get("image_filename", "")}
        tags.update({key: row[key] for key in SPATIAL457_DATA_FIELDS if row.get(key) is not None})
        index = row.get("question_index", row.get("index"))
        external_id = f"{level}/{text_id(index)}" if index is not None else ""
        external_id = text_id(row.get("question_id")) or external_id  # a HypoLab release names its id
        image = image_data(row.get("image"))  # a Hugging Face export may carry the image itself
        return ItemRecord(
            where=where, question=str(need(row, "question", where)), answer_format=AnswerFormat.OPEN,
            answers=[spatial457_answer(answer)], external_id=external_id, id_label="question_index", tags=tags,
            scene_id=row.get("scene_id") or row.get("image_filename") or (external_id if image else None) or None,
            image=image, generated=generated_provenance(row, where, generated),
        )

    return each_record(numbered(rows, "question"), build)


def _spatial457_tsv(text: str, name: str) -> Iterator[ItemRecord | Problem]:
    """VLMEvalKit's Spatial457.tsv: `index, question, answer, category (the level), image`."""
    rows = read_tsv(text, {"index", "question", "answer", "category"})
    images = tsv_images(rows) if rows and "image" in rows[0][1] else {}

    def build(where, row):
        index = cell(row, "index")
        if not index:
            raise ValueError(f"{where}: 'index' is missing or empty")
        try:
            level = _level([cell(row, "category")], name)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        tags = {"level": level}
        if cell(row, "image_filename"):
            tags["image"] = cell(row, "image_filename")
        # a TSV HypoLab wrote carries the generator's fields as JSON cells (benchmarks/releases/published.py)
        tags.update({key: json.loads(cell(row, key)) for key in SPATIAL457_DATA_FIELDS if cell(row, key)})
        owner = images.get(index)
        scene_id = cell(row, "scene_id") or cell(row, "image_filename") or (owner[0] if owner else None)
        return ItemRecord(
            where=where, question=need(row, "question", where), answer_format=AnswerFormat.OPEN,
            answers=[need(row, "answer", where).strip()], external_id=cell(row, "question_id") or index,
            id_label="index", source_index=index, tags=tags, scene_id=scene_id,
            image=ImageData(owner[1]) if owner else None,
            generated=generated_provenance({"provenance": cell(row, "provenance")}, where),
        )

    return each_record(rows, build)
