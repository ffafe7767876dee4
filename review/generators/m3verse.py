"""M3-Verse-style before/after questions from the objects of two states (pure Python, no Django).

Input (`states`): `{"scene_id", "states": [objects_0, objects_1]}` (or `"state_0"`/`"state_1"`), each
object `{"id", "type", "position": [x, y, z] | {"x", "y", "z"}, "parent": receptacle id | null,
"room": name, "attributes": {"color", "material", ...}}` (`parentReceptacles` and top-level
`color`/`material` are read too). An object id present in one state only was added or removed;
one whose position moved by more than MOVE_EPS or whose parent changed was moved; one whose
attributes differ was changed.

Output: M3-Verse's item JSONL rows (`scene_id, category, question_id, state_type, question, options,
answer, question_type, subcategory, generator_name, hallucination, capabilities`), questions from
the `object_changes` templates. Options are labelled "A. ..."; answers are sorted letter lists.
Hallucination items (about a quarter, as in the paper's 23.2%) drop every correct option and list
"No correct option is listed." as the only correct one; elsewhere that option may appear as a
wrong choice.
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "m3verse"
NONE_OPTION = "No correct option is listed."
MOVE_EPS = 0.05  # metres
LETTERS = "ABCDEFGH"
STATE_NAMES = ("state_0", "state_1")
HALLUCINATION_RATE = 0.25
NONE_AS_DISTRACTOR_RATE = 0.3

# subcategory -> (question_type, capabilities)
SUBCATEGORIES = {
    "new_visible_objects": ("multiple_choice", ["temporal understanding", "attribute recognition"]),
    "lost_visible_objects": ("multiple_choice", ["temporal understanding", "attribute recognition"]),
    "attribute_changed_objects": ("multiple_choice", ["temporal understanding", "attribute recognition"]),
    "room_position_changes": ("multiple_choice", ["spatial understanding", "temporal understanding"]),
    "objects_room_movement": ("multiple_choice", ["spatial understanding", "temporal understanding"]),
    "movement_between_receptacles": ("single_choice", ["spatial understanding", "temporal understanding"]),
    "old_receptacle": ("single_choice", ["spatial understanding", "temporal understanding"]),
    "new_receptacle": ("single_choice", ["spatial understanding", "temporal understanding"]),
    "movement_distance": ("single_choice", ["spatial understanding", "temporal understanding", "reasoning"]),
    "openness_state_comparison": ("single_choice", ["temporal understanding", "attribute recognition"]),
    "toggle_state_comparison": ("single_choice", ["temporal understanding", "attribute recognition"]),
}
# subcategory -> (AI2-THOR boolean attribute, word when true, word when false); asked where it changed
STATE_COMPARISONS = {
    "openness_state_comparison": ("isOpen", "open", "closed"),
    "toggle_state_comparison": ("isToggled", "on", "off"),
}


def load_json(path: Path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def readable(type_name: str) -> str:
    """`CoffeeTable` -> `coffee table`, `TVStand` -> `TV stand`."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", type_name.rstrip("*"))
    return " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words) or type_name


def _xyz(value) -> tuple[float, float, float]:
    if isinstance(value, dict):
        return float(value.get("x", 0)), float(value.get("y", 0)), float(value.get("z", 0))
    x, y, *rest = (float(v) for v in value)
    return x, y, (rest[0] if rest else 0.0)


# read from an object's top level too (AI2-THOR reports its states there)
ATTRIBUTE_KEYS = (
    "color",
    "material",
    "shape",
    "isOpen",
    "isToggled",
    "isDirty",
    "isCooked",
    "isFilledWithLiquid",
    "isBroken",
    "isSliced",
    "isUsedUp",
)


def normalise(obj: dict) -> dict:
    attributes = dict(obj.get("attributes") or {})
    for key in ATTRIBUTE_KEYS:
        if obj.get(key) is not None:
            attributes.setdefault(key, obj[key])
    parent = obj.get("parent")
    if parent is None and obj.get("parentReceptacles"):
        parent = obj["parentReceptacles"][0]
    return {
        "id": str(obj.get("id", obj.get("objectId"))),
        "type": str(obj.get("type", obj.get("objectType"))),
        "position": _xyz(obj.get("position") or [0, 0, 0]),
        "parent": parent,
        "room": obj.get("room"),
        "attributes": attributes,
    }


def read_states(data: dict) -> tuple[str, list[dict[str, dict]]]:
    if "states" in data:
        raw = data["states"]
    else:
        raw = [data.get("state_0"), data.get("state_1")]
    if not isinstance(raw, list) or len(raw) != 2 or any(r is None for r in raw):
        raise ValueError("expected two states: {'states': [objects_0, objects_1]}")
    states = []
    for number, objects in enumerate(raw):
        objects = objects.get("objects", []) if isinstance(objects, dict) else objects
        by_id: dict[str, dict] = {}
        for obj in map(normalise, objects):
            if obj["id"] in by_id:
                raise ValueError(f"state {number}: object id {obj['id']!r} twice")
            by_id[obj["id"]] = obj
        states.append(by_id)
    return str(data.get("scene_id") or "scene"), states


# --- what changed ----------------------------------------------------------------------------------


def changes(states: list[dict[str, dict]]) -> dict:
    before, after = states
    both = [i for i in before if i in after]
    moved = [
        i
        for i in both
        if math.dist(before[i]["position"], after[i]["position"]) > MOVE_EPS
        or before[i]["parent"] != after[i]["parent"]
    ]
    return {
        "added": [i for i in after if i not in before],
        "removed": [i for i in before if i not in after],
        "moved": moved,
        "receptacle_moved": [
            i
            for i in both
            if before[i]["parent"] != after[i]["parent"] and before[i]["parent"] and after[i]["parent"]
        ],
        "attribute_changed": [i for i in both if before[i]["attributes"] != after[i]["attributes"]],
        "room_changed": [i for i in both if before[i]["room"] != after[i]["room"]],
    }


# --- names -----------------------------------------------------------------------------------------


def object_names(states: list[dict[str, dict]]) -> dict[str, str]:
    """A short unambiguous name for every object id of either state (type, then colour, then parent)."""
    latest: dict[str, dict] = {**states[0], **states[1]}
    by_type: dict[str, list[str]] = {}
    for oid, obj in latest.items():
        by_type.setdefault(obj["type"], []).append(oid)
    names: dict[str, str] = {}
    for type_name, ids in by_type.items():
        noun = readable(type_name)
        if len(ids) == 1:
            names[ids[0]] = noun
            continue
        colours = [latest[i]["attributes"].get("color") for i in ids]
        for number, oid in enumerate(sorted(ids)):
            colour = latest[oid]["attributes"].get("color")
            if colour and colours.count(colour) == 1:
                names[oid] = f"{colour} {noun}"
            else:
                names[oid] = f"{noun} {number + 1}"
    return names


def receptacle_name(receptacle_id: str | None, names: dict[str, str]) -> str:
    if not receptacle_id:
        return "the floor"
    return names.get(receptacle_id) or readable(receptacle_id.split("|")[0])


# --- options ---------------------------------------------------------------------------------------


def _options(
    correct: list[str], pool: list[str], rng: random.Random, *, hallucination: bool, size: int = 4
) -> tuple[list[str], list[str]] | None:
    """Labelled options and sorted answer letters, or None when the pool is too small."""
    pool = [p for p in dict.fromkeys(pool) if p not in correct and p != NONE_OPTION]
    rng.shuffle(pool)
    if hallucination:
        if len(pool) < size - 1:
            return None
        texts, right = [*pool[: size - 1], NONE_OPTION], [NONE_OPTION]
    else:
        shown = correct[: max(1, min(len(correct), size - 1))]
        if len(shown) < len(correct):  # every listed truth must be complete: no partial truths
            return None
        with_none = rng.random() < NONE_AS_DISTRACTOR_RATE
        wanted = size - len(shown) - (1 if with_none else 0)
        if len(pool) < wanted:
            if len(pool) < 1:
                return None
            wanted = len(pool)
        texts = [*shown, *pool[:wanted]] + ([NONE_OPTION] if with_none else [])
        right = list(shown)
    rng.shuffle(texts)
    options = [f"{LETTERS[k]}. {text[:1].upper()}{text[1:]}" for k, text in enumerate(texts)]
    answer = sorted(LETTERS[k] for k, text in enumerate(texts) if text in right)
    return options, answer


# --- generation ------------------------------------------------------------------------------------


def _templates(path: Path | None) -> dict[str, str]:
    data = load_json(Path(path or DATA / "object_changes_template.json"))
    return {key: value["question_template"] for key, value in data["object_changes"].items()}


def _fill(template: str, **values) -> str:
    text = template.format(state1=STATE_NAMES[0], state2=STATE_NAMES[1], **values)
    text = re.sub(r"\s*\(", " (", text)
    return " ".join(text.split())


def generate(
    states_data: dict,
    *,
    seed: int = 0,
    templates_path: Path | None = None,
    vocabulary: list[str] | None = None,
    hallucination_rate: float = HALLUCINATION_RATE,
) -> list[dict]:
    scene_id, states = read_states(states_data)
    templates = _templates(templates_path)
    if vocabulary is None:
        vocabulary = [t for t in load_json(DATA / "all_object_types.json") if not t.endswith("*")]
    rng = random.Random(f"{seed}-{scene_id}")
    names = object_names(states)
    delta = changes(states)
    before, after = states
    every = {**before, **after}
    scene_types = {obj["type"] for obj in every.values()}
    absent = [readable(t) for t in vocabulary if t not in scene_types]
    rows: list[dict] = []

    def emit(subcategory: str, question: str, correct: list[str], pool: list[str]):
        hallucination = rng.random() < hallucination_rate
        made = _options(correct, pool, rng, hallucination=hallucination)
        if made is None and hallucination:
            hallucination, made = False, _options(correct, pool, rng, hallucination=False)
        if made is None:
            return
        options, answer = made
        question_type, capabilities = SUBCATEGORIES[subcategory]
        rows.append(
            {
                "scene_id": scene_id,
                "category": "object_changes",
                "question_id": f"{scene_id}-{len(rows)}",
                "state_type": "inter-states",
                "question": question,
                "options": options,
                "answer": answer,
                "question_type": question_type,
                "subcategory": subcategory,
                "generator_name": "object_changes",
                "hallucination": hallucination,
                "capabilities": list(capabilities),
            }
        )

    def object_pool(excluded: set[str], ids) -> list[str]:
        names_excluded = {names[i] for i in excluded}
        scene_part = [names[i] for i in ids if i not in excluded and names[i] not in names_excluded]
        return scene_part + rng.sample(absent, min(len(absent), 4))

    set_questions = (
        ("new_visible_objects", delta["added"]),
        ("lost_visible_objects", delta["removed"]),
        ("attribute_changed_objects", delta["attribute_changed"]),
        ("objects_room_movement", delta["room_changed"]),
    )
    for subcategory, ids in set_questions:
        if not ids:
            continue
        correct = sorted({names[i] for i in ids})
        if subcategory == "new_visible_objects":
            others = [i for i in before if i in after]  # there all along: never "became visible"
        elif subcategory == "lost_visible_objects":
            others = [i for i in after if i in before]
        else:
            others = [i for i in before if i in after]
        emit(subcategory, _fill(templates[subcategory]), correct, object_pool(set(ids), others))

    rooms = sorted({obj["room"] for obj in before.values() if obj["room"]})
    for room in rooms:
        in_room = [i for i in before if before[i]["room"] == room and i in after]
        moved = [i for i in in_room if i in delta["moved"]]
        if moved:
            still = [i for i in in_room if i not in moved]
            emit(
                "room_position_changes",
                _fill(templates["room_position_changes"], room=room),
                sorted({names[i] for i in moved}),
                object_pool(set(moved), still),
            )

    receptacles = sorted(
        {receptacle_name(o["parent"], names) for s in states for o in s.values() if o["parent"]}
    )
    receptacle_types = sorted(
        {
            readable(t)
            for t in (
                "CounterTop",
                "DiningTable",
                "Shelf",
                "Sofa",
                "Bed",
                "Desk",
                "SideTable",
                "Drawer",
                "Cabinet",
                "Fridge",
            )
        }
    )
    for oid in delta["receptacle_moved"]:
        named = f"the {names[oid]}"
        old, new = receptacle_name(before[oid]["parent"], names), receptacle_name(after[oid]["parent"], names)
        pool = [r for r in [*receptacles, *receptacle_types] if r not in (old, new)]
        emit(
            "movement_between_receptacles",
            _fill(templates["movement_between_receptacles"], object=named),
            [new],
            [old, *pool],
        )
        # "Where was X at state_0 located at state_1?": where it is in state_1
        emit("old_receptacle", _fill(templates["old_receptacle"], object=named), [new], [old, *pool])
        # "Where is X at state_1 located at state_0?": where it was in state_0
        emit("new_receptacle", _fill(templates["new_receptacle"], object=named), [old], [new, *pool])

    for oid in delta["moved"]:
        distance = math.dist(before[oid]["position"], after[oid]["position"])
        if distance < 0.2:
            continue
        truth = f"{distance:.1f} m"
        pool = [f"{distance * k:.1f} m" for k in (0.4, 0.6, 1.6, 2.2, 3.0)]
        emit(
            "movement_distance", _fill(templates["movement_distance"], object_name=names[oid]), [truth], pool
        )

    for subcategory, (key, yes, no) in STATE_COMPARISONS.items():
        for oid in sorted(i for i in before if i in after):
            was, now = before[oid]["attributes"].get(key), after[oid]["attributes"].get(key)
            if not isinstance(was, bool) or not isinstance(now, bool) or was == now:
                continue
            combos = [
                f"{a} in {STATE_NAMES[0]}, {b} in {STATE_NAMES[1]}" for a in (yes, no) for b in (yes, no)
            ]
            truth = combos[(0 if was else 2) + (0 if now else 1)]
            emit(subcategory, _fill(templates[subcategory], object_name=names[oid]), [truth], combos)
    return rows


def write_jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)
