"""The tags an item written on the platform carries so that its family's paper tables can place it:
3DSRBench's category and subtype, CausalSpatial's level and task, M3-Verse's state type and
capabilities, Spatial457's level. Each family's values are the ones its scorer groups by."""

from benchmarks.importers.spatial457 import SPATIAL457_LEVELS
from core.errors import DomainError
from scoring.threedsrbench import CATEGORY_SUBTYPES, SUBTYPE_CATEGORY

CAUSAL_TASKS = ("collision", "compatibility", "occlusion", "trajectory")
CAUSAL_LEVELS = ("L1", "L2")
M3_STATE_TYPES = ("intra-state", "inter-states")
M3_CAPABILITIES = ("spatial understanding", "temporal understanding", "attribute recognition", "reasoning")


def _one_of(tags: dict, key: str, allowed) -> str:
    value = tags.get(key)
    if value not in allowed:
        raise DomainError(f"The {key.replace('_', ' ')} is one of {', '.join(allowed)}.", field="tags")
    return value


def _threedsrbench(tags: dict) -> dict:
    subtype = _one_of(tags, "subtype", tuple(SUBTYPE_CATEGORY))
    if tags.get("category") not in (None, "", SUBTYPE_CATEGORY[subtype]):
        raise DomainError(f"The subtype {subtype} is of the category {SUBTYPE_CATEGORY[subtype]}.", field="tags")
    return {"category": SUBTYPE_CATEGORY[subtype], "subtype": subtype}


def _causalspatial(tags: dict) -> dict:
    return {"level": _one_of(tags, "level", CAUSAL_LEVELS), "task": _one_of(tags, "task", CAUSAL_TASKS)}


def _m3verse(tags: dict) -> dict:
    capabilities = tags.get("capabilities") or []
    if not isinstance(capabilities, list) or not capabilities or any(c not in M3_CAPABILITIES for c in capabilities):
        raise DomainError(f"The capabilities are some of {', '.join(M3_CAPABILITIES)}.", field="tags")
    return {"state_type": _one_of(tags, "state_type", M3_STATE_TYPES), "capabilities": sorted(set(capabilities))}


def _spatial457(tags: dict) -> dict:
    return {"level": _one_of(tags, "level", SPATIAL457_LEVELS)}


FAMILY_TAGS = {"3dsrbench": _threedsrbench, "causalspatial": _causalspatial, "m3verse": _m3verse,
               "spatial457": _spatial457}


def family_tags(family: str, tags) -> dict:
    """The family's tags from what the author sent (`tags`), checked; {} for a family without any."""
    if family not in FAMILY_TAGS:
        return {}
    if not isinstance(tags, dict):
        raise DomainError("Give the item's family tags.", field="tags")
    return FAMILY_TAGS[family](tags)


def _field(key: str, label: str, options, multiple: bool = False, groups: dict | None = None) -> dict:
    return {"key": key, "label": label, "multiple": multiple,
            "options": [{"value": o, "group": (groups or {}).get(o, "")} for o in options]}


# The authoring page's tag picker: one list per tag, in the order the page shows them; a subtype's
# `group` is its category, so picking one narrows the other.
TAG_FIELDS = {
    "3dsrbench": (_field("category", "Category", tuple(CATEGORY_SUBTYPES)),
                  _field("subtype", "Subtype", tuple(SUBTYPE_CATEGORY), groups=SUBTYPE_CATEGORY)),
    "causalspatial": (_field("level", "Level", CAUSAL_LEVELS), _field("task", "Task", CAUSAL_TASKS)),
    "m3verse": (_field("state_type", "State type", M3_STATE_TYPES),
                _field("capabilities", "Capabilities", M3_CAPABILITIES, multiple=True)),
    "spatial457": (_field("level", "Level", SPATIAL457_LEVELS),),
}


def tag_fields(family: str) -> list[dict]:
    """The family's tags as lists to pick from ([] for a family without any)."""
    return list(TAG_FIELDS.get(family, ()))
