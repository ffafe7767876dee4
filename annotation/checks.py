"""The rules a crowd description must pass, each raising a DomainError on `text` that names the rule.

Cheap and lexical on purpose: they run on every "add description" click and again on submit.
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from benchmarks.models import ChangeType, Scene
from core.errors import DomainError

# the words of a text as the geometry's checks read them too (Django-free there)
from .change_checks import WORD, singular, words

ARTICLES = {"the", "a", "an"}
AUXILIARIES = {"has", "have", "had", "is", "are", "was", "were", "got", "gets", "been"}
NEAR_DUPLICATE_RATIO = 0.8
# A description is one sentence: Hypo3D's longest are under 200 characters. The bound keeps a pasted page
# out of the review queue (and out of every check below, which reads the whole text).
MAX_DESCRIPTION_CHARS = 400
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
REPEATED_RUN = 4  # words: a run of this many that comes back a third time is text repeating itself

# Words that pick out one object among several with the same label.
LOCATORS = re.compile(
    r"\b(left|right|front|back|rear|middle|center|centre|corner|first|second|third|last|nearest|closest|"
    r"farthest|furthest|near|next|beside|by|on|under|above|below|between|behind|against|in|at|with|which|that|"
    r"big|bigger|biggest|small|smaller|smallest|large|larger|largest|tall|short|long|round|square|"
    r"red|orange|yellow|green|blue|purple|pink|brown|black|white|gr[ae]y|wooden|metal)\b"
)
ORIGIN = re.compile(r"\b(from|originally|previously|formerly|used to|which was|that was|which used|that used)\b")
SPATIAL = (r"to|onto|into|towards?|next to|beside|between|in front of|behind|near|under|underneath|"
           r"on top of|above|below|against|on|in|at|by|inside|outside")
DESTINATION = re.compile(rf"\b({SPATIAL})\b")
FROM_CLAUSE = re.compile(
    r"\bfrom\b.*?(?=\b(?:to|onto|into|towards?|next to|beside|between|in front of|behind|near|under|on top of)\b|$)"
)
SUBJECT_LOCATOR = re.compile(r"\b(on|near|next to|beside|by|under|in|at|between|behind|in front of|against)\b")
# Where a subject's noun phrase ends and its qualifiers begin ("the backpack | that was on the desk").
SUBJECT_END = re.compile(r"\b(?:that|which|who|originally|previously|on|near|next|beside|by|under|in|at|between|"
                         r"behind|from|with)\b")
# "used to stand": the "to" of a habit, not of a destination
USED_TO = re.compile(r"\bused to\b")
PLACE_WINDOW = 6  # words after a preposition in which the place it names must come
# Parts of a room that say where something is now without being one of the scene's objects ("the room"
# and "the scene" alone say nothing: everything is in the room).
PLACES = {"corner", "corners", "wall", "walls", "floor", "middle", "center", "centre", "side", "end", "edge",
          "window", "door", "doorway", "entrance", "ceiling", "left", "right", "front", "back", "rear", "top",
          "bottom", "space", "gap", "area", "opposite", "hallway", "hall", "kitchen", "bathroom", "bedroom",
          "balcony", "stairs", "staircase", "shelf", "counter"}
# Words that name no object: "something", "another one".
VAGUE = {"something", "anything", "everything", "thing", "things", "object", "objects", "item", "items", "stuff",
         "one", "another", "else", "it", "that", "this", "new", "other", "some", "different"}
REPLACING = re.compile(r"\b(replac\w*|swap\w*|substitut\w*|exchang\w*)\b")
REPLACEMENT = re.compile(r"\b(with|by|for)\s+(\w+(?:\s+\w+){0,5})")


@dataclass
class DescriptionCheck:
    objects: list[str]
    changed_object: str
    warnings: list[str] = field(default_factory=list)


def mentions(labels, text: str) -> list[tuple[int, int, str]]:
    """(start, end, label) for every whole-word mention of a label (singular or plural), in text order."""
    lowered = " ".join(words(text))
    found = []
    for label in set(labels):
        pattern = r"\b" + re.escape(" ".join(words(label))) + r"(s|es)?\b"
        found += [(m.start(), m.end(), label) for m in re.finditer(pattern, lowered)]
    return sorted(found, key=lambda m: (m[0], -(m[1] - m[0])))


def named_objects(labels, text: str) -> list[str]:
    """Labels of the scene's objects that the text names, in order of first mention."""
    return list(dict.fromkeys(label for _, _, label in mentions(labels, text)))


def split_subject(text: str) -> tuple[str, str]:
    """The words before the first auxiliary verb (what changed) and the rest (what happened to it)."""
    tokens = words(text)
    for i, token in enumerate(tokens[:12]):
        if token in AUXILIARIES and i > 0:
            return " ".join(tokens[:i]), " ".join(tokens[i:])
    return "", " ".join(tokens)


def changed_object(labels, text: str) -> str:
    """What a description changes: the first scene object its subject names, else the subject's head
    noun (an added object is new to the scene), else the first scene object named at all."""
    subject, _ = split_subject(text)
    named = named_objects(labels, subject)
    if named:
        return named[0]
    if subject:
        head = SUBJECT_END.split(subject)[0].split() or subject.split()
        return singular(head[-1])
    named = named_objects(labels, text)
    return named[0] if named else ""


def similarity(a: str, b: str) -> float:
    a_words = [w for w in words(a) if w not in ARTICLES]
    b_words = [w for w in words(b) if w not in ARTICLES]
    matcher = SequenceMatcher(None, a_words, b_words, autojunk=False)
    if matcher.real_quick_ratio() < NEAR_DUPLICATE_RATIO or matcher.quick_ratio() < NEAR_DUPLICATE_RATIO:
        return 0.0
    return matcher.ratio()


def check_max_length(text: str, limit: int, what: str = "A description", field: str = "text") -> None:
    if len(text) > limit:
        raise DomainError(f"{what} has at most {limit} characters; this one has {len(text):,}. Shorten it.",
                          field=field)


def check_not_repeating(text: str, field: str = "text") -> None:
    """Refuse text that says the same thing again: a sentence twice, or one run of words three times."""
    sentences = [" ".join(words(s)) for s in SENTENCE_END.split(text) if words(s)]
    again = next((s for s, n in Counter(sentences).items() if n > 1), None)
    tokens = words(text)
    runs = Counter(tuple(tokens[i:i + REPEATED_RUN]) for i in range(len(tokens) - REPEATED_RUN + 1))
    run, count = runs.most_common(1)[0] if runs else ((), 0)
    if again or count >= 3:
        shown = again or " ".join(run)
        raise DomainError(f"The text repeats itself (\"{shown[:60]}\" comes back); say each thing once.",
                          field=field)


def check_min_words(text: str, min_words: int) -> None:
    count = len(WORD.findall(text))
    if count < min_words:
        raise DomainError(f"A description needs at least {min_words} words; this one has {count}.", field="text")


def check_names_scene_objects(labels, text: str) -> list[str]:
    objects = named_objects(labels, text)
    if not objects:
        raise DomainError(
            "The description names no object of this scene; use a label from the object list "
            "(hover the top-view map to see them).",
            field="text",
        )
    return objects


def _places_named(labels, text: str) -> bool:
    """The words say a place: an object of the scene, or a part of the room (its corner, a wall)."""
    return bool(named_objects(labels, text)) or any(w in PLACES for w in words(text))


def has_destination(labels, predicate: str) -> bool:
    """Where the object is now: a preposition of place, outside the origin's "from ..." clause, followed
    within a few words by a place. "Away", "somewhere else" and "(used) to stand in the room" are none."""
    rest = FROM_CLAUSE.sub(" ", USED_TO.sub(" ", predicate))
    for match in DESTINATION.finditer(rest):
        if _places_named(labels, " ".join(rest[match.end():].split()[:PLACE_WINDOW])):
            return True
    return False


def check_movement(labels, text: str) -> None:
    """A movement says where the object was and where it is now (Hypo3D: "moved from A to B")."""
    subject, predicate = split_subject(text)
    has_origin = bool(ORIGIN.search(" ".join(words(text)))) or (
        bool(SUBJECT_LOCATOR.search(subject)) and len(named_objects(labels, subject)) >= 2
    )
    destination = has_destination(labels, predicate)
    if not (has_origin and destination):
        missing = " and ".join(
            part for part, present in (("where the object was", has_origin), ("where it is now", destination))
            if not present
        )
        raise DomainError(
            f"A movement must name an origin and a destination; this one does not say {missing} "
            "(e.g. 'The chair has been moved from the desk to the window').",
            field="text",
        )


def check_removal(labels, text: str) -> None:
    """A removal names what is gone: an object of this scene, not "something near the bed"."""
    subject, _ = split_subject(text)
    head = SUBJECT_END.split(subject)[0] if subject else ""
    if head and not named_objects(labels, head) and set(words(head)) & VAGUE:
        raise DomainError(
            "A removal must name what is removed (an object of this scene), not only where it was "
            "(e.g. 'The lamp on the desk has been removed').",
            field="text",
        )


def check_replacement(labels, text: str) -> None:
    """A replacement names what is removed (an object of this scene) and what is added."""
    lowered = " ".join(words(text))
    verb = REPLACING.search(lowered)
    added = REPLACEMENT.search(lowered, verb.end()) if verb else None
    removed_part = lowered[:verb.start()] + " " + lowered[verb.end():added.start()] if added else ""
    vague = added is not None and not set(words(added.group(2))) - VAGUE - ARTICLES
    if not (verb and added and named_objects(labels, removed_part)) or vague:
        raise DomainError(
            "A replacement must name what is removed (an object of this scene) and what is added "
            "(e.g. 'The desk has been replaced with a sofa').",
            field="text",
        )


TYPE_CHECKS = {ChangeType.MOVEMENT: check_movement, ChangeType.REMOVAL: check_removal,
               ChangeType.REPLACEMENT: check_replacement}


def check_changes_another_object(labels, text: str, others: list[str]) -> str:
    target = changed_object(labels, text)
    for number, other in enumerate(others, start=1):
        if target and singular(changed_object(labels, other)) == singular(target):
            raise DomainError(
                f"Description {number} already changes the {target}; each description in an assignment "
                "changes a different object.",
                field="text",
            )
    return target


def check_not_near_duplicate(text: str, earlier: list[str]) -> None:
    for previous in earlier:
        if similarity(text, previous) >= NEAR_DUPLICATE_RATIO:
            raise DomainError(
                f"This nearly repeats a description you wrote before (\"{previous[:80]}\"); write a different "
                "change.",
                field="text",
            )


def ambiguity_warnings(label_counts: Counter, text: str) -> list[str]:
    """A label that occurs several times in the scene needs words that say which one is meant."""
    lowered = " ".join(words(text))
    warnings = []
    for start, end, label in mentions(label_counts.keys(), text):
        if label_counts[label] < 2 or any(label in w for w in warnings):
            continue
        before = " ".join(lowered[:start].split()[-2:])
        after = " ".join(lowered[end:].split()[:3])
        if not LOCATORS.search(before) and not LOCATORS.search(after):
            warnings.append(
                f"There are {label_counts[label]} objects labelled '{label}' in this scene; say which {label} "
                "you mean (e.g. by colour or by what it is next to)."
            )
    return warnings


def check_description(scene: Scene, text: str, change_type: str, min_words: int, others=(), earlier=()):
    """Every rule, in the order a worker would fix them; `others` are this assignment's other
    descriptions, `earlier` the worker's own earlier texts."""
    label_counts = Counter(scene.scene_objects.values_list("label", flat=True))
    labels = list(label_counts)
    check_max_length(text, MAX_DESCRIPTION_CHARS)
    check_not_repeating(text)
    check_min_words(text, min_words)
    objects = check_names_scene_objects(labels, text)
    type_check = TYPE_CHECKS.get(change_type)
    if type_check:
        type_check(labels, text)
    target = check_changes_another_object(labels, text, list(others))
    check_not_near_duplicate(text, [*others, *earlier])
    return DescriptionCheck(objects=objects, changed_object=target, warnings=ambiguity_warnings(label_counts, text))
