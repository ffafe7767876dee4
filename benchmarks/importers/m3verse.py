"""M3-Verse's published shape: JSON records with options, single or multiple answer letters and the
hallucination flag."""

import re
from collections.abc import Iterator

from benchmarks.models import AnswerFormat

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


def _m3_letters(value) -> list[str]:
    if isinstance(value, str):
        value = re.findall(r"[A-Za-z]+", value)
    return sorted({str(a).strip().strip("().").upper() for a in (value or [])})


def m3verse_records(text: str, name: str = "") -> Iterator[ItemRecord | Problem]:
    def build(where, row):
        options = row.get("options") or []
        if not isinstance(options, list) or not 2 <= len(options) <= 8:
            raise ValueError(f"{where}: expected 2 to 8 options, got {len(options)}")
        choices = [OPTION_PREFIX.sub("", str(option)) for option in options]
        answers = _m3_letters(row.get("answer"))
        if not answers or any(a not in LETTERS[: len(choices)] for a in answers):
            raise ValueError(f"{where}: answer {row.get('answer')} must be letters of the options")
        single = row.get("question_type") == "single_choice" or len(answers) == 1
        if single and len(answers) != 1:
            raise ValueError(f"{where}: a single_choice question with answers {answers}")
        return ItemRecord(
            where=where, question=str(need(row, "question", where)),
            answer_format=AnswerFormat.SINGLE if single else AnswerFormat.MULTI,
            answers=answers, choices=choices, external_id=text_id(need(row, "question_id", where)),
            id_label="question_id", scene_id=text_id(row.get("scene_id")) or None,
            tags={"state_type": row.get("state_type", ""), "category": row.get("category", ""),
                  "subcategory": row.get("subcategory", ""), "capabilities": row.get("capabilities") or [],
                  "hallucination": bool(row.get("hallucination"))},
            generated=generated_provenance(row, where),
        )

    return each_json_record(text, build)
