"""How an item's options are written for whoever answers it, model or human, in the order shown.

An item's options are stored once (`Item.choices`, canonical order); some questions also spell them
(CausalSpatial's "Answer by (A) Yes, (B) No or (C) Not sure.", its "- (A) ...;" lists, "A. x; B. y").
The order shown is a protocol variant's rotation (benchmarks.protocols) or a study's shuffle, and
every text that reads letters follows it:

- a question that spells the stored options is written again with them in the order shown, each
  letter in place (`question_as_shown`); one that spells other options than the stored ones cannot
  be reordered (`reorderable`): runs refuse to rotate it and studies neither rotate nor shuffle it;
- a family's prompt that has a slot for the options (3DSRBench's VLMEvalKit block "Options:\\nA. x",
  M3-Verse's lettered statements "options: A. x\\nB. y") gets them there, `lettered`; a prompt without
  one (CausalSpatial's eval.py reads only the question) gets them after the question in the family's
  own wording when the question does not spell them (`with_options`), so an item written with a list
  of choices reaches the model with every option.

Pure functions on plain data."""

import re
from string import ascii_uppercase as LETTERS

from .importers.causalspatial import spelled_options

# A prompt template's slot for the options (modeleval.prompting.prompts; chains' `options_text`).
OPTION_SLOTS = ("{choices}", "{options_text}")
# CausalSpatial writes short options in a sentence ("Answer by (A) Yes, (B) No or (C) Not sure.",
# PROTOCOLS.md 3.3 (c)) and longer ones as a list ("- (A) Remove the vase;", collision L2).
_SHORT_WORDS = 3
_SENTENCE_UNSAFE = re.compile(r"[,;()]|\b(?:or|and)\b", re.IGNORECASE)


def _same(text) -> str:
    return " ".join(str(text).split()).strip().rstrip(".").casefold()


def lettered(choices) -> str:
    """`A. x` lines, VLMEvalKit's way (3DSRBench, M3-Verse and every family without its own)."""
    return "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(choices))


def spells(question: str) -> bool:
    """The question writes options of its own (two or more lettered in order)."""
    return bool(spelled_options(question or ""))


def _spelled_as_stored(question: str, choices) -> list[tuple[str, int, int]] | None:
    spelled = spelled_options(question or "")
    if spelled and [_same(text) for text, _, _ in spelled] == [_same(c) for c in choices]:
        return spelled
    return None


def reorderable(question: str, choices) -> bool:
    """The options can be shown in another order with every text saying the same letters: the
    question spells none, or spells exactly the stored ones (rewritten in place)."""
    return not choices or not spells(question) or _spelled_as_stored(question, choices) is not None


def question_as_shown(question: str, choices, shown) -> str:
    """The question with the options it spells written in the order `shown` (the stored texts in the
    order shown), each letter where it stood; the question as written otherwise."""
    if not choices or list(shown) == list(choices):
        return question
    spelled = _spelled_as_stored(question, choices)
    if spelled is None:
        return question
    out, cursor = [], 0
    for (_, start, end), text in zip(spelled, shown, strict=True):
        out += [question[cursor:start], str(text)]
        cursor = end
    return "".join(out) + question[cursor:]


def family_options(family: str, shown) -> str:
    """The options in the family's own wording, lettered in the order shown."""
    if family == "causalspatial":
        short = all(len(str(c).split()) <= _SHORT_WORDS and not _SENTENCE_UNSAFE.search(str(c)) for c in shown)
        marks = [f"({LETTERS[i]}) {c}" for i, c in enumerate(shown)]
        if short:
            listed = marks[0] if len(marks) == 1 else f"{', '.join(marks[:-1])} or {marks[-1]}"
            return f"Answer by {listed}."
        return "\n".join(f"- {mark};" for mark in marks[:-1]) + f"\n- {marks[-1]}."
    return lettered(shown)


def with_options(family: str, question: str, choices, shown, has_slot: bool) -> str:
    """The question as a prompt without an options slot should read it: the spelled options in the
    order shown, or, when it spells none, the options after it in the family's wording. A prompt
    with a slot gets the question as shown (its options go in the slot, `lettered`)."""
    asked = question_as_shown(question, choices, shown)
    if has_slot or not shown or spells(question):
        return asked
    separator = "\n\n" if family == "causalspatial" else "\n"
    return f"{asked.rstrip()}{separator}{family_options(family, shown)}"


def has_option_slot(text: str) -> bool:
    return any(slot in (text or "") for slot in OPTION_SLOTS)
