"""The words of a change against its edit's geometry, Django-free: `check_edit` returns one message per
check that fails, each naming what disagrees; [] when the text and the edit tell the same story.

The checks: the object the edit changes is the one the text names (and the edit is of the change's type);
the destination the text names is where the box went (the nearest object for "to / next to / near", the
relation for left / right / in front of / behind in the world frame, for on / under / in by height and
footprint); each box the edit leaves stays in the room, rests on the floor or on a support (unless it
hung before the edit, as a window or a picture does) and overlaps no other box beyond OVERLAP_TOLERANCE;
a size change says bigger or smaller as its scale does. The word rules mirror annotation/checks.py's
(whole-word labels, singular or plural; the destination after the origin's "from ..." clause).
"""

import math
import re

from .change_geometry import (
    STRUCTURE,
    Box,
    Room,
    WorldAxes,
    apply_edit,
    contains_xy,
    direction,
    edited_boxes,
    footprint,
    gap,
    holds,
    overlap_fraction,
)

SUPPORT_TOLERANCE_M = 0.1   # a bottom this close to the floor or to a support's top rests on it
ROOM_TOLERANCE_M = 0.1      # a footprint may reach this far past the scanned room (walls are thin)
CONTACT_M = 0.05            # z overlap this deep is two boxes touching, not one inside the other
OVERLAP_TOLERANCE = 0.15    # of the smaller box's volume
NEAR_SLACK_M = 0.3          # the named object may be this much farther than the nearest one
WINDOW = 6                  # words after a relation in which the object it names must come

WORD = re.compile(r"[A-Za-z0-9']+")
AUXILIARIES = {"has", "have", "had", "is", "are", "was", "were", "got", "gets", "been"}
FROM_CLAUSE = re.compile(r"\bfrom\b.*?(?=\b(?:to|onto|into|towards?|next to|beside|between|in front of|behind|"
                         r"near|under|on top of|on|in)\b|$)")
USED_TO = re.compile(r"\bused to\b")
RELATIONS = (  # in the order tried at one place: longest phrase first
    ("left", r"(?:to|on|at) the left (?:side )?of|left of"),
    ("right", r"(?:to|on|at) the right (?:side )?of|right of"),
    ("front", r"in front of|(?:to|at) the front of"),
    ("behind", r"behind|in back of|(?:to|at) the back of"),
    ("on", r"on top of|onto|upon|atop|on"),
    ("under", r"underneath|under|beneath|below"),
    ("in", r"inside|into|in"),
    ("near", r"next to|close to|closer to|nearer to|near|nearby|beside|by|towards?|to|against|at|alongside"),
)
RELATION = re.compile(r"\b(?:" + "|".join(f"(?P<{name}>{pattern})" for name, pattern in RELATIONS) + r")\b")
SIDE_WORDS = {"left": "left of", "right": "right of", "front": "in front of", "behind": "behind"}
BIGGER = re.compile(r"\b(bigger|larger|taller|wider|longer|enlarged|grown|grew|increased|expanded|doubled|"
                    r"higher|greater|scaled up)\b")
SMALLER = re.compile(r"\b(smaller|shorter|narrower|tinier|shrunk|shrank|shrunken|reduced|decreased|halved|"
                     r"lower|scaled down|compact)\b")
HEIGHT_WORDS = re.compile(r"\b(taller|shorter|higher|lower)\b")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def singular(word: str) -> str:
    for suffix in ("ches", "shes", "sses", "xes"):
        if word.endswith(suffix):
            return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _label_key(label: str) -> list[str]:
    tokens = words(label)
    return [*tokens[:-1], singular(tokens[-1])] if tokens else []


def same_label(a: str, b: str) -> bool:
    """The same object class: equal words, the last one singular or plural ("chairs" is "chair")."""
    return bool(_label_key(a)) and _label_key(a) == _label_key(b)


def mentions(labels, text: str) -> list[tuple[int, int, str]]:
    """(start, end, label) for every whole-word mention of a label, singular or plural, in text order."""
    found = []
    for label in set(labels):
        pattern = r"\b" + re.escape(" ".join(words(label))) + r"(s|es)?\b"
        found += [(m.start(), m.end(), label) for m in re.finditer(pattern, text)]
    return sorted(found, key=lambda m: (m[0], -(m[1] - m[0])))


def destination(labels, text: str) -> tuple[str, str] | None:
    """(relation, label) of where the text says the object is now: the first relation, after the subject and
    outside the origin's "from ..." clause, followed within WINDOW words by a label; None when none is."""
    tokens = words(text)
    cut = next((i for i, t in enumerate(tokens[:12]) if t in AUXILIARIES and i > 0), 0)
    predicate = FROM_CLAUSE.sub(" ", USED_TO.sub(" ", " ".join(tokens[cut:])))
    for match in RELATION.finditer(predicate):
        window = " ".join(predicate[match.end():].split()[:WINDOW])
        named = mentions(labels, window)
        if named:
            return match.lastgroup, named[0][2]
    return None


# --- the checks ------------------------------------------------------------------------------------


def _named_check(change_type: str, text: str, named: str, pairs) -> list[str]:
    """The edit changes what the text names, and changes it the way the change's type says."""
    moved = [b for b, a in pairs if b is not None and a is not None and b.center != a.center]
    kept = [b for b, a in pairs if b is not None and a is not None]
    removed = [b for b, a in pairs if b is not None and a is None]
    added = [a for b, a in pairs if b is None]
    lowered = " ".join(words(text))
    wanted = {"movement": (moved, "moves", "give the moved object a translation"),
              "removal": (removed, "removes", "mark the removed object removed"),
              "attribute": (kept, "changes", "scale or turn the object"),
              "addition": (added, "adds", "give the added object its box"),
              "replacement": (removed, "removes", "mark the replaced object removed")}
    touched, verb, how = wanted.get(change_type, (kept + removed + added, "changes", ""))
    messages = []
    if not touched:
        messages.append(f"A {change_type} edit must {verb.rstrip('s')} an object, but this one {verb} none: {how}.")
    elif named and not any(same_label(b.label, named) for b in touched):
        messages.append(f"The text {verb} the {named}, but the edit {verb} the "
                        f"{' and the '.join(sorted({b.label for b in touched}))}.")
    if change_type == "replacement":
        if not added:
            messages.append("A replacement edit must add the new object's box, but this one adds none.")
        for box in added:
            if not mentions([box.label], lowered):
                messages.append(f"The edit adds a {box.label}, but the text does not name it.")
    return messages


def _destination_check(box: Box, relation: str, label: str, after: list[Box], axes: WorldAxes | None,
                       name: str) -> str | None:
    others = [b for b in after if b.key != box.key]
    candidates = [b for b in others if same_label(b.label, label)]
    if not candidates:
        return f"The text puts the {name} by the {label}, but after the change the scene has no {label}."
    x, y = box.center[0], box.center[1]
    if relation == "near":
        competitors = [b for b in others if singular(b.label) not in STRUCTURE] or others
        nearest = min(competitors, key=lambda b: gap((x, y), b))
        named = min(gap((x, y), b) for b in candidates)
        if named > gap((x, y), nearest) + NEAR_SLACK_M:
            return (f"The text moves the {name} to the {label}, but the nearest object to its new place is the "
                    f"{nearest.label} ({gap((x, y), nearest):.1f} m; the {label} is {named:.1f} m away).")
        return None
    if relation in ("on", "under", "in"):
        below = [c for c in candidates if contains_xy(c, x, y, margin=0.05)]
        if not below:
            return (f"The text puts the {name} {relation} the {label}, but the move leaves it beside it "
                    f"(its centre is off the {label}'s footprint).")
        if relation == "on" and not any(abs(box.bottom - c.top) <= SUPPORT_TOLERANCE_M for c in below):
            c = min(below, key=lambda c: abs(box.bottom - c.top))
            where = "above" if box.bottom > c.top else "below"
            return (f"The text puts the {name} on the {label}, but its bottom is {abs(box.bottom - c.top):.2f} m "
                    f"{where} the {label}'s top.")
        if relation == "under" and not any(box.top <= c.top + SUPPORT_TOLERANCE_M for c in below):
            return f"The text puts the {name} under the {label}, but its top is above the {label}'s top."
        if relation == "in" and not any(c.bottom - SUPPORT_TOLERANCE_M <= box.center[2] <= c.top for c in below):
            return f"The text puts the {name} in the {label}, but the move leaves it above or below it."
        return None
    if axes is None:
        return None  # left and right mean nothing without the scene's approved world frame
    side = "back" if relation == "behind" else relation
    if any(holds(axes, box, c, side) for c in candidates):
        return None
    nearest = min(candidates, key=lambda c: math.hypot(x - c.center[0], y - c.center[1]))
    found = direction(axes, box, nearest) or "centre"
    return (f"The text puts the {name} {SIDE_WORDS[relation]} the {label}, but the move puts it to the "
            f"{label}'s {found} (world frame).")


def _room_check(box: Box, room: Room) -> str | None:
    xs, ys = zip(*footprint(box), strict=True)
    out = max(room.low[0] - min(xs), max(xs) - room.high[0], room.low[1] - min(ys), max(ys) - room.high[1],
              box.top - room.high[2], 0.0)
    if out > ROOM_TOLERANCE_M:
        return f"The edit takes the {box.label} {out:.2f} m outside the room (past its walls or ceiling)."
    return None


def _rests(box: Box, others: list[Box], room: Room) -> bool:
    # on the floor: between the lowest box's bottom and the floor's top (a scanned floor is a slab, not a plane)
    if room.low[2] - SUPPORT_TOLERANCE_M <= box.bottom <= room.floor_z + SUPPORT_TOLERANCE_M:
        return True
    return any(abs(box.bottom - o.top) <= SUPPORT_TOLERANCE_M and contains_xy(o, box.center[0], box.center[1], 0.05)
               for o in others)


def _support_check(before: Box | None, box: Box, before_boxes: list[Box], after: list[Box],
                   room: Room) -> str | None:
    if before is not None and not _rests(before, [b for b in before_boxes if b.key != before.key], room):
        return None  # it hung before the edit (a window, a picture, a ceiling lamp): it may hang after
    if _rests(box, [b for b in after if b.key != box.key], room):
        return None
    if box.bottom < room.floor_z:
        return f"The {box.label} sinks {room.floor_z - box.bottom:.2f} m into the floor."
    return (f"The {box.label} floats: its bottom is {box.bottom - room.floor_z:.2f} m above the floor and it rests "
            "on no object.")


def _overlap_check(before: Box | None, box: Box, before_boxes: list[Box], after: list[Box],
                   allowed: set) -> list[str]:
    earlier = {b.key: b for b in before_boxes}
    messages = []
    for other in after:
        if other.key == box.key or singular(other.label) in STRUCTURE or other.key in allowed:
            continue
        share = overlap_fraction(box, other, CONTACT_M)
        was = overlap_fraction(before, earlier[other.key], CONTACT_M) if (
            before is not None and other.key in earlier) else 0.0
        if share > OVERLAP_TOLERANCE and share > was + 0.05:
            messages.append(f"The {box.label}'s new box overlaps the {other.label} ({share:.0%} of the smaller "
                            "box): two objects cannot stand in one place.")
    return messages


def _size_check(change_type: str, text: str, pairs) -> list[str]:
    lowered = " ".join(words(text))
    says = "bigger" if BIGGER.search(lowered) else "smaller" if SMALLER.search(lowered) else None
    messages = []
    for before, after in pairs:
        if before is None or after is None:
            continue
        by_height = HEIGHT_WORDS.search(lowered) is not None
        factor = after.size[2] / before.size[2] if by_height else after.volume / before.volume
        grows, shrinks = factor > 1 + 1e-6, factor < 1 - 1e-6
        what = "height" if by_height else "volume"
        if says == "bigger" and not grows:
            messages.append(f"The text says the {before.label} got bigger, but the edit "
                            f"{'shrinks' if shrinks else 'keeps'} its {what} (x{factor:.2f}).")
        elif says == "smaller" and not shrinks:
            messages.append(f"The text says the {before.label} got smaller, but the edit "
                            f"{'enlarges' if grows else 'keeps'} its {what} (x{factor:.2f}).")
        elif says is None and change_type == "attribute" and (grows or shrinks):
            messages.append(f"The edit makes the {before.label} {'larger' if grows else 'smaller'} ({what} "
                            f"x{factor:.2f}), but the text does not say it got bigger or smaller.")
    return messages


def check_edit(text: str, change_type: str, boxes: list[Box], edit: dict, room: Room,
               axes: WorldAxes | None = None, named: str | None = None) -> list[str]:
    """Every check of the text against the (stored-shape, aligned) edit on the scene's `boxes`; `named` is
    the object the text changes (annotation.checks.changed_object), else its first object named."""
    after = apply_edit(boxes, edit)
    pairs = edited_boxes(boxes, edit)
    labels = {b.label for b in boxes} | {a["label"] for a in edit.get("added", [])}
    lowered = " ".join(words(text))
    if named is None:
        found = mentions(labels, lowered)
        named = found[0][2] if found else ""
    messages = _named_check(change_type, text, named, pairs)
    messages += _size_check(change_type, text, pairs)
    where = destination(labels, text) if change_type in ("movement", "addition", "replacement") else None
    allowed = set()
    for before, box in pairs:
        if box is None:
            continue
        placed = (change_type == "movement" and before is not None and before.center != box.center) or (
            before is None)
        if where and placed:
            relation, label = where
            message = _destination_check(box, relation, label, after, axes, box.label)
            messages += [message] if message else []
            if relation in ("in", "under"):
                allowed |= {b.key for b in after if same_label(b.label, label)}
        for check in (_room_check(box, room), _support_check(before, box, boxes, after, room)):
            messages += [check] if check else []
        messages += _overlap_check(before, box, boxes, after, allowed)
    return messages
