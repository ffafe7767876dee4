"""What each family's crowd campaigns are: the kinds of work its items are authored by, the
question types its authors pick from, and whether a campaign takes a change type (only context changes
do). Hypo3D is authored as its paper did (changes, world frames, questions on changes); the image and
video families by choice items, whose family tags (annotation/family_tags.py) place them in the tables."""

from benchmarks.models import ChangeType
from core.errors import DomainError
from core.labels import words

from .models import Campaign, default_question_types

Kind = Campaign.Kind
FAMILY_KINDS = {
    "hypo3d": (Kind.CONTEXT_CHANGE, Kind.WORLD_FRAME, Kind.QUESTION_ANSWER, Kind.ANSWER_ONLY),
    "3dsrbench": (Kind.CHOICE_IMAGE, Kind.ANSWER_ONLY),
    "causalspatial": (Kind.CHOICE_IMAGE, Kind.ANSWER_ONLY),
    "spatial457": (Kind.CHOICE_IMAGE, Kind.ANSWER_ONLY),
    "m3verse": (Kind.CHOICE_VIDEO, Kind.ANSWER_ONLY),
}
# The family tag that stands for an item's question type where the family's authors pick no fine type
# (its radar axis: scoring's family records).
QUESTION_TYPE_TAG = {"3dsrbench": "category", "causalspatial": "task", "m3verse": "capabilities",
                     "spatial457": "level"}


def campaign_kinds(family: str) -> tuple[str, ...]:
    """The kinds a campaign on the family's benchmark may be, the family's main one first."""
    return FAMILY_KINDS.get(family, tuple(Kind.values))


def kind_choices(family: str) -> list[tuple[str, str]]:
    """The kinds in people's words (core.labels), not the choice labels ("Context change (N descriptions …)")."""
    return [(kind, words(kind)) for kind in campaign_kinds(family)]


def family_question_types(family: str) -> dict[str, list[str]]:
    """A new campaign's question-type taxonomy: Hypo3D's fine types; none for the choice families (their
    family tags say where an item counts)."""
    return default_question_types() if family == "hypo3d" else {}


def takes_change_type(kind: str) -> bool:
    return kind == Kind.CONTEXT_CHANGE


def default_kind(family: str, change_type) -> str:
    """The kind of a campaign made without one: a context change when a change type is named (the
    services' callers always did so), else the family's own kind."""
    return Kind.CONTEXT_CHANGE if change_type not in (None, "") else campaign_kinds(family)[0]


def checked_kind(family: str, kind: str, change_type, offered_only: bool = False) -> str:
    """The change type to store for a campaign of `kind` on the family's benchmark ("" where the kind
    takes none); a DomainError names the kind or change type that is wrong. `offered_only` (the admin's
    form) holds the kind to the family's own."""
    if kind not in Kind.values:
        raise DomainError(f"Kind must be one of {', '.join(Kind.values)}.", field="kind")
    allowed = campaign_kinds(family)
    if offered_only and kind not in allowed:
        labels = dict(Kind.choices)
        raise DomainError(f"A {family} campaign is one of: {'; '.join(labels[k] for k in allowed)}.", field="kind")
    if takes_change_type(kind) or change_type not in (None, ""):
        if change_type not in ChangeType.values:
            raise DomainError(f"Change type must be one of {', '.join(ChangeType.values)}.", field="change_type")
    return change_type if takes_change_type(kind) else ""


def derived_question_type(family: str, tags: dict) -> list[str]:
    """The coarse question type of an item of a campaign without a taxonomy: its family tag's value(s)."""
    value = tags.get(QUESTION_TYPE_TAG.get(family, ""))
    if not value:
        return []
    return list(value) if isinstance(value, list) else [value]
