"""Answers the geometry after a change decides, Django-free. `derived_answer` reads a question of a
supported shape and answers it from the boxes after the change; None for any other question, for a label
that names several objects (unless the change touched one of them), a tie, or a direction without a
world frame. `draft_questions` writes such questions about the objects a change touched.

The templates (answers in scoring/hypo3d.py's normalised words):
- direction: "What is the direction of the A relative to the B?" (also "Where is the A relative to /
  from the B?", "In which direction is the A from the B?") -> "left", "front left", ... in the world frame;
  "Is the A to the left or right of the B?" -> "left" / "right"; "... in front of or behind ..." -> "front" / "back".
- nearer / farther: "Is the A closer (nearer, farther) to the B or the C?" -> "B" or "C" (centre distances).
- closest: "Which object is closest (nearest, farthest) to the X?" -> a label.
- larger / smaller: "Which is larger (bigger, smaller), the A or the B?" -> a label (volume);
  "Is the A larger (bigger, smaller) than the B?" -> "yes" / "no".
- count: "How many As are there (left) in the room?" -> the number of boxes labelled A after the change.
"""

import re

from .change_checks import mentions, same_label, singular, words
from .change_geometry import STRUCTURE, Box, WorldAxes, centre_distance, direction

TIE_M = 0.05        # distances this close are a tie: no derived answer
TIE_VOLUME = 0.01   # volumes within 1 % of each other are a tie

COUNT = re.compile(r"\bhow many\b")
NEARER = re.compile(r"\b(closer|nearer|farther|further)\b.*\bor\b")
CLOSEST = re.compile(r"\b(which|what)\b.*\b(closest|nearest|farthest|furthest)\b")
BIGGER_OF = re.compile(r"\b(which|what)\b.*\b(larger|bigger|smaller)\b.*\bor\b|"
                       r"\b(larger|bigger|smaller)\b.*\b(which|what)\b.*\bor\b")
BIGGER_THAN = re.compile(r"^(is|are)\b.*\b(larger|bigger|smaller)\s+than\b")
LEFT_OR_RIGHT = re.compile(r"\b(left|right)\b.*\bor\b.*\b(left|right)\b")
FRONT_OR_BACK = re.compile(r"\b(front|behind|back)\b.*\bor\b.*\b(front|behind|back)\b")
DIRECTION = re.compile(r"\b(direction|where|relative to|with respect to)\b")


def _resolve(label: str, boxes: list[Box], touched) -> Box | None:
    """The one box a label means: the only one so labelled, or the one the change touched."""
    matching = [b for b in boxes if same_label(b.label, label)]
    if len(matching) == 1:
        return matching[0]
    chosen = [b for b in matching if b.key in touched]
    return chosen[0] if len(chosen) == 1 else None


def _named(question: str, boxes: list[Box], touched) -> tuple[list[str], list[Box | None]]:
    labels = {b.label for b in boxes}
    found = [label for _, _, label in mentions(labels, question)]
    return found, [_resolve(label, boxes, touched) for label in found]


def _count(lowered: str, boxes: list[Box]) -> str | None:
    rest = lowered[COUNT.search(lowered).end():]
    labels = {b.label for b in boxes} | {singular(w) for w in rest.split()[:3]}
    found = mentions(labels, " ".join(rest.split()[:4]))
    if not found:
        return None
    label = found[0][2]
    return str(sum(same_label(b.label, label) for b in boxes))


def _nearer(lowered: str, boxes, touched) -> str | None:
    labels, named = _named(lowered, boxes, touched)
    if len(named) != 3 or None in named:
        return None
    a, b, c = named
    db, dc = centre_distance(a, b), centre_distance(a, c)
    if abs(db - dc) < TIE_M:
        return None
    farther = NEARER.search(lowered).group(1) in ("farther", "further")
    return labels[1] if (db > dc) == farther else labels[2]


def _closest(lowered: str, boxes, touched) -> str | None:
    labels, named = _named(lowered, boxes, touched)
    if len(named) != 1 or named[0] is None:
        return None
    target = named[0]
    farthest = CLOSEST.search(lowered).group(2) in ("farthest", "furthest")
    others = sorted(((centre_distance(target, b), b.label) for b in boxes
                     if b.key != target.key and singular(b.label) not in STRUCTURE), reverse=farthest)
    if not others:
        return None
    best = others[0]
    rivals = [label for d, label in others[1:] if abs(d - best[0]) < TIE_M and label != best[1]]
    return None if rivals else best[1]


def _larger(lowered: str, boxes, touched, yes_no: bool) -> str | None:
    labels, named = _named(lowered, boxes, touched)
    if len(named) != 2 or None in named:
        return None
    a, b = named
    if abs(a.volume - b.volume) <= TIE_VOLUME * max(a.volume, b.volume):
        return None
    smaller = "smaller" in lowered.split()
    first_wins = (a.volume < b.volume) == smaller
    if yes_no:
        return "yes" if first_wins else "no"
    return labels[0] if first_wins else labels[1]


def _direction(lowered: str, boxes, touched, axes: WorldAxes | None) -> str | None:
    labels, named = _named(lowered, boxes, touched)
    if axes is None or len(named) != 2 or None in named:
        return None
    a, b = named
    found = direction(axes, a, b)
    if found is None:
        return None
    r, f = axes.vector(a.center[0] - b.center[0], a.center[1] - b.center[1])
    if LEFT_OR_RIGHT.search(lowered):
        return None if abs(r) < TIE_M else ("right" if r > 0 else "left")
    if FRONT_OR_BACK.search(lowered):
        return None if abs(f) < TIE_M else ("front" if f > 0 else "back")
    return found


def derived_answer(question: str, boxes: list[Box], axes: WorldAxes | None = None, touched=()) -> str | None:
    """The answer the boxes (after the change) give a question of a supported shape; None otherwise."""
    lowered = " ".join(words(question))
    touched = set(touched)
    if COUNT.search(lowered):
        return _count(lowered, boxes)
    if NEARER.search(lowered):
        return _nearer(lowered, boxes, touched)
    if CLOSEST.search(lowered):
        return _closest(lowered, boxes, touched)
    if BIGGER_OF.search(lowered):
        return _larger(lowered, boxes, touched, yes_no=False)
    if BIGGER_THAN.search(lowered):
        return _larger(lowered, boxes, touched, yes_no=True)
    if DIRECTION.search(lowered) or LEFT_OR_RIGHT.search(lowered) or FRONT_OR_BACK.search(lowered):
        return _direction(lowered, boxes, touched, axes)
    return None


def _plural(label: str) -> str:
    return label + ("es" if label.endswith(("ch", "sh", "s", "x")) else "s")


def draft_questions(boxes: list[Box], axes: WorldAxes | None, touched, gone_labels=(), limit: int = 8) -> list[dict]:
    """Questions about the touched boxes (and the classes the change removed from), each with the answer the
    geometry derives and its Hypo3D question type; only those that derive an answer."""
    touched = list(touched)
    drafts = []

    def offer(question: str, question_type: str):
        answer = derived_answer(question, boxes, axes, touched)
        if answer is not None and all(d["question"] != question for d in drafts):
            drafts.append({"question": question, "answer": answer, "question_type": [question_type]})

    for box in (b for b in boxes if b.key in set(touched)):
        others = sorted((b for b in boxes if b.key != box.key and singular(b.label) not in STRUCTURE
                         and _resolve(b.label, boxes, touched) is b), key=lambda b: centre_distance(box, b))
        if axes is not None and others:
            offer(f"What is the direction of the {box.label} relative to the {others[0].label}?", "Direction")
        offer(f"Which object is closest to the {box.label}?", "Scale")
        if len(others) >= 2:
            offer(f"Is the {box.label} closer to the {others[0].label} or the {others[-1].label}?", "Scale")
            offer(f"Which is larger, the {box.label} or the {others[1].label}?", "Scale")
        offer(f"How many {_plural(box.label)} are there in the room?", "Semantic")
    for label in gone_labels:
        offer(f"How many {_plural(label)} are left in the room?", "Semantic")
    return drafts[:limit]
