"""Hypo3D's published shape: {scene_id: [{context_change, change_type, questions_answers: [...]}]}."""

import re
from collections.abc import Iterator

from benchmarks.counterfactual import IRRELEVANT_KEY, UNCHANGED_KEYS, checked_counterfactual, with_effect
from benchmarks.models import AnswerFormat, ChangeType
from core.errors import DomainError

from .rows import (
    ImportFileError,
    ItemRecord,
    Problem,
    each_record,
    generated_provenance,
    need,
    read_json_or_jsonl,
    text_id,
)

CHANGE_WORDS = {
    "move": "movement", "moved": "movement", "moving": "movement", "motion": "movement",
    "remove": "removal", "removed": "removal", "deletion": "removal", "delete": "removal",
    "attributes": "attribute", "attr": "attribute",
    "add": "addition", "added": "addition", "insertion": "addition", "insert": "addition",
    "replace": "replacement", "replaced": "replacement", "substitution": "replacement",
}


def _hypo3d_change_type(value) -> str:
    """The release's exact strings are unknown ('Movement Change', 'Object Movement', 'movement'):
    the first word naming a type wins; otherwise the second word, as the tool wrote them."""
    words = re.split(r"[\s_\-/]+", str(value or "").lower().strip())
    words = [w for w in words if w]
    for word in words:
        if word in ChangeType.values:
            return word
        if word in CHANGE_WORDS:
            return CHANGE_WORDS[word]
    return words[1] if len(words) > 1 else (words[0] if words else "")


def hypo3d_records(text: str, name: str = "") -> Iterator[ItemRecord | Problem]:
    data = read_json_or_jsonl(text)
    if not isinstance(data, dict):
        raise ImportFileError("expected an object {scene_id: [changes]}")
    for scene_id, changes in data.items():
        if not isinstance(changes, list):
            raise ImportFileError(f"{scene_id}: expected a list of changes")
        for c, change in enumerate(changes):
            where = f"{scene_id}[{c}]"
            if not isinstance(change, dict):
                yield Problem(f"{where}: expected an object")
                continue
            try:
                change_text = str(need(change, "context_change", where)).strip()
                change_type = _hypo3d_change_type(change.get("change_type", ""))
                if change_type not in ChangeType.values:
                    raise ValueError(f"{where}: change_type '{change.get('change_type')}' names none of "
                                     f"{', '.join(ChangeType.values)}")
                qas = change.get("questions_answers") or []
                if not isinstance(qas, list):
                    raise ValueError(f"{where}: 'questions_answers' must be a list")
            except ValueError as exc:
                yield Problem(str(exc))
                continue

            def build(qwhere, qa, change_text=change_text, change_type=change_type, scene_id=scene_id,
                      change=change):
                question_type = qa.get("question_type") or []
                if isinstance(question_type, str):
                    question_type = question_type.replace(",", " ").split()
                answers = _accepted_answers(qwhere, qa)
                unchanged, effect = _counterfactual(qwhere, qa, change, answers)
                return ItemRecord(
                    where=qwhere, question=str(need(qa, "question", qwhere)), answer_format=AnswerFormat.OPEN,
                    answers=answers, external_id=text_id(qa.get("question_id")), id_label="question_id",
                    tags=with_effect({"change_type": change_type, "question_type": [str(t) for t in question_type]},
                                     effect),
                    unchanged_answers=unchanged, scene_id=str(scene_id), change_text=change_text,
                    change_type=change_type, generated=generated_provenance(qa, qwhere),
                )

            yield from each_record(((f"{where}.questions_answers[{q}]", qa) for q, qa in enumerate(qas)), build)


def _accepted_answers(where: str, qa: dict) -> list[str]:
    """`answer`, then every other accepted answer of `answers` (a HypoLab release writes them all)."""
    first = str(need(qa, "answer", where)).strip()
    more = qa.get("answers") or []
    if not isinstance(more, list) or not all(isinstance(a, str) for a in more):
        raise ValueError(f"{where}: 'answers' must be a list of texts")
    answers = [first]
    for answer in (a.strip() for a in more):
        if answer and answer not in answers:
            answers.append(answer)
    return answers


def _counterfactual(where: str, qa: dict, change: dict, answers: list[str]) -> tuple[list[str], str | None]:
    """Tables 3-4: the question's answer on the unchanged scene (`unchanged_answer` or
    `answer_without_change`) and `irrelevant_change` (on the question, or on its change for all of them)."""
    key = next((k for k in UNCHANGED_KEYS if qa.get(k) not in (None, "", [])), UNCHANGED_KEYS[0])
    irrelevant = qa.get(IRRELEVANT_KEY, change.get(IRRELEVANT_KEY))
    try:
        return checked_counterfactual(answers, qa.get(key), irrelevant, unchanged_field=key)
    except DomainError as error:
        raise ValueError(f"{where}: {error.message}") from None
