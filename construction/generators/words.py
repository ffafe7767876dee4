"""English the generators share (pure Python)."""

import re

MASS_NOUNS = {"bread": "loaves of bread", "lettuce": "heads of lettuce", "toilet paper roll": "toilet paper rolls",
              "aluminum foil": "rolls of aluminum foil"}
IRREGULAR_PLURALS = {"knife": "knives", "shelf": "shelves", "loaf": "loaves", "potato": "potatoes",
                     "tomato": "tomatoes", "mouse": "mice", "leaf": "leaves", "bus": "buses"}


def plural(noun: str) -> str:
    """English plural of a (possibly multi-word) noun: `mug` -> `mugs`, `road bike` -> `road bikes`,
    `articulated bus` -> `articulated buses`."""
    if noun in MASS_NOUNS:
        return MASS_NOUNS[noun]
    head, _, last = noun.rpartition(" ")
    if last in IRREGULAR_PLURALS:
        word = IRREGULAR_PLURALS[last]
    elif last.isupper():
        word = f"{last}s"
    elif re.search(r"(s|x|z|ch|sh)$", last):
        word = f"{last}es"
    elif re.search(r"[^aeiou]y$", last):
        word = f"{last[:-1]}ies"
    else:
        word = f"{last}s"
    return f"{head} {word}" if head else word
