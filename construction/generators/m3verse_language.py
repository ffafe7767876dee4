"""M3-Verse's linguistic-enhancement stage (paper Fig. 17) as versioned rules, pure Python.

The paper has an LLM rewrite each template question and its options "to sound more like natural
language without changing their semantic meaning", keeping the options' order and rewriting
"state_0"/"state_1". Here the rewrite is data (data/m3verse/linguistic_enhancement.json): a natural
wording per sub-task filled from the same slots as the template, and phrase rules for any text left
over. The options keep their order, so the answer letters checked against the states still hold; a
rewrite that leaves a state id behind is refused."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "m3verse"
STATE_ID = re.compile(r"state_?[01]\b|\bstate[12]\b", re.IGNORECASE)
# an object named by a number ("Mug 1", "mug_2"): what grounding replaces
INDEXED_NAME = re.compile(r"\b[A-Za-z]+(?: [a-z]+)?[ _]\d+\b(?! ?(?:m|cm|%|times)\b)")


class EnhancementError(ValueError):
    """A rewrite that would leave a state id or change the options."""


@cache
def rules(version: str | None = None) -> tuple[str, dict]:
    data = json.loads((DATA / "linguistic_enhancement.json").read_text(encoding="utf-8"))
    version = version or list(data)[-1]
    if version not in data:
        raise ValueError(f"linguistic enhancement has versions {', '.join(data)}")
    return f"linguistic_enhancement/{version}", data[version]


def rewrite_phrases(text: str, version: str | None = None) -> str:
    for pattern, replacement in rules(version)[1]["phrases"]:
        text = re.sub(pattern, replacement, text)
    return text


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:]


def enhance(subtask: str, template_question: str, slots: dict, options: list[str],
            version: str | None = None) -> tuple[str, list[str]]:
    """(natural question, options) for a template question: the sub-task's natural wording filled from
    `slots` (or the phrase rules over the template), the options rewritten in place, in order."""
    natural = rules(version)[1]["questions"].get(subtask)
    question = natural.format(**slots) if natural else rewrite_phrases(template_question, version)
    question = _sentence(question)
    rewritten = [rewrite_phrases(option, version) for option in options]
    if len(rewritten) != len(options):
        raise EnhancementError("the options changed in number")
    left = [text for text in (question, *rewritten) if STATE_ID.search(text)]
    if left:
        raise EnhancementError(f"a state id is left in {left[0]!r}")
    return question, rewritten


def unnatural(text: str) -> list[str]:
    """What a generated text must never carry: a state id or an object named by its index."""
    return [m.group(0) for m in (*STATE_ID.finditer(text), *INDEXED_NAME.finditer(text))]
