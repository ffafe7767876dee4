"""What a reviewer judges an item by, per family: the criteria a rejection names and the
question types a reviewer may tick. Hypo3D's come from its paper (scoring's family record); the choice
families' from their papers' annotation guidelines (../shared/seeds/): an item is answerable from what
it shows, its marked answer is right, its options are distinct, and what each paper adds."""

from scoring.engine import get_family

HYPO3D = get_family("hypo3d")

_CHOICE = {
    "answerable": "Answerable from what the item shows (the image or videos, and the marks drawn on them)",
    "unambiguous": "Exactly one unambiguous answer: the marked one, and no other choice",
    "options_distinct": "The choices are distinct and each is plausible",
    "clear": "The question is clear and grammatical",
}
CRITERIA = {
    "hypo3d": dict(HYPO3D.question_criteria),
    "causalspatial": {**_CHOICE, "causal": "Needs reasoning about what the motion causes (collision, compatibility, "
                                           "occlusion, trajectory), not the image alone",
                      "marks_match": "The arrow and boxes drawn match the objects the question names"},
    "3dsrbench": {**_CHOICE, "needs_3d": "Needs 3D spatial reasoning (height, location, orientation, "
                                         "several objects), not a 2D shortcut",
                  "flip_right": "Its flip decision (swap or same on the mirrored image) is right"},
    "m3verse": {**_CHOICE, "needs_both_videos": "Needs the videos as the question says (one state, or both "
                                                "states compared)",
                "hallucination_right": "A hallucination item truly has no correct option listed"},
    "spatial457": {**_CHOICE, "level_right": "Its level matches the reasoning it needs (Spatial457's L1-L5)"},
}


def question_criteria(family: str) -> dict[str, str]:
    """{key: text} of what a question of the family must meet (Hypo3D's for a family not listed)."""
    return CRITERIA.get(family, CRITERIA["hypo3d"])


def question_types(family: str) -> tuple[str, ...]:
    """The coarse question types a reviewer ticks: Hypo3D's; the choice families have none to tick (their
    family tags place an item)."""
    return tuple(HYPO3D.question_types) if family == "hypo3d" else ()


def all_criteria() -> dict[str, str]:
    """Every family's criteria, for reading a decision whose family is not at hand."""
    merged: dict[str, str] = {}
    for criteria in CRITERIA.values():
        merged.update(criteria)
    return merged
