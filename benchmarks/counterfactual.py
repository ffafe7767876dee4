"""Counterfactual items (Hypo3D Tables 3-4): beside the answer on the changed scene, an item may carry
the answer on the unchanged scene (`Item.unchanged_answers`) and say whether the change affects the
answer or is irrelevant to it (the tag `change_effect`: "affects" or "irrelevant").

A run whose prompt shows no context change (Fig. 13, the "w/o change" condition) is scored against the
unchanged-scene answer; an item whose change is irrelevant has the same answer either way. One rule
for the importer, authoring and review: `checked_counterfactual`."""

from core.errors import DomainError

EFFECT_TAG = "change_effect"
AFFECTS, IRRELEVANT = "affects", "irrelevant"
# the keys a published-shape Hypo3D file may carry on a question (or, for the flag, on its change)
UNCHANGED_KEYS = ("unchanged_answer", "answer_without_change")
IRRELEVANT_KEY = "irrelevant_change"


def _answers(value, field: str) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise DomainError(f"'{field}' is the answer on the unchanged scene: a non-empty text or list of texts.",
                          field=field)
    return [v.strip() for v in values]


def checked_counterfactual(answers: list[str], unchanged=None, irrelevant=None,
                           unchanged_field: str = "unchanged_answer",
                           irrelevant_field: str = IRRELEVANT_KEY) -> tuple[list[str], str | None]:
    """(unchanged answers, change_effect tag or None) of an item with these changed-scene `answers`.
    An irrelevant change keeps the answer: the unchanged answer defaults to the item's and may not
    differ from it. Raises DomainError naming the field at fault."""
    if irrelevant is not None and not isinstance(irrelevant, bool):
        raise DomainError(f"'{irrelevant_field}' is true or false.", field=irrelevant_field)
    given = None if unchanged in (None, "", []) else _answers(unchanged, unchanged_field)
    if irrelevant:
        if given is not None and {a.lower() for a in given} != {a.lower() for a in answers}:
            raise DomainError(f"An irrelevant change keeps the answer: '{unchanged_field}' must equal the answer.",
                              field=unchanged_field)
        return list(answers), IRRELEVANT
    if given is None:
        return [], None
    return given, AFFECTS


def with_effect(tags: dict, effect: str | None) -> dict:
    """The item's tags with its change_effect set (or removed when None)."""
    tags = {key: value for key, value in (tags or {}).items() if key != EFFECT_TAG}
    return {**tags, EFFECT_TAG: effect} if effect else tags


def unchanged_reference(item) -> list[str]:
    """What a "w/o change" run is scored against: the unchanged-scene answers, else (an item that is
    not counterfactual) the item's own."""
    return list(item.unchanged_answers or item.answers)
