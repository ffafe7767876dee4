"""M3-Verse's entity grounding (paper, A.4 "Robust Entity Grounding Framework"), pure Python.

Objects are read from either state shape the generator takes (ours or AI2-THOR's metadata) and named
the way the paper names them: the most concise description that picks exactly one object, tried in
order: the type alone, an intrinsic attribute (colour, shape, material), containment ("the mug in the
fridge"), the room, then relative position ("the lowest mug"). Never an index: an object no such
description singles out has no name, and no question is asked about it."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "m3verse"

# AI2-THOR reports these object states at an object's top level
STATE_KEYS = ("isOpen", "isToggled", "isDirty", "isCooked", "isFilledWithLiquid", "isBroken", "isSliced", "isUsedUp")
ATTRIBUTE_KEYS = ("color", "material", "shape", *STATE_KEYS)
ABILITY_KEYS = ("sliceable", "canBeUsedUp")  # what AI2-THOR says an object can undergo
INTRINSIC = ("color", "shape", "material")  # asset-level attributes a name may use, in this order
# receptacles one puts things *in* (the rest hold things *on* them)
CONTAINERS = {"Fridge", "Cabinet", "Drawer", "Microwave", "Box", "Bowl", "Sink", "SinkBasin", "GarbageCan",
              "Safe", "Pot", "Pan", "Cup", "Mug", "Bathtub", "BathtubBasin", "Dresser", "LaundryHamper",
              "Toaster", "Kettle", "Vase"}
# AI2-THOR types whose plain split reads badly
TYPE_WORDS = {"CounterTop": "countertop", "TVStand": "TV stand", "GarbageCan": "trash can", "SinkBasin": "sink",
              "BathtubBasin": "bathtub", "EggCracked": "cracked egg", "CellPhone": "cell phone",
              "RemoteControl": "remote control", "SprayBottle": "spray bottle", "SoapBottle": "soap bottle",
              "ToiletPaper": "toilet paper roll", "DishSponge": "dish sponge", "HousePlant": "house plant"}
LANDMARK_MARGIN = 0.2  # metres


def readable(type_name: str) -> str:
    """`CoffeeTable` -> `coffee table`, `TVStand` -> `TV stand`, `BreadSliced` -> `bread slice`."""
    type_name = type_name.rstrip("*")
    if type_name in TYPE_WORDS:
        return TYPE_WORDS[type_name]
    if type_name.endswith("Sliced") and len(type_name) > 6:
        return f"{readable(type_name[:-6])} slice"
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", type_name)
    return " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words) or type_name


def type_of_id(object_id: str) -> str:
    """AI2-THOR's `Mug|+01.10|+00.95|-01.00` (or `Mug_1`) -> `Mug`."""
    return re.sub(r"\d+$", "", re.split(r"[|_ ]", object_id)[0]) or object_id


def _xyz(value) -> tuple[float, float, float]:
    if isinstance(value, dict):
        return float(value.get("x", 0)), float(value.get("y", 0)), float(value.get("z", 0))
    x, y, *rest = (float(v) for v in value)
    return x, y, (rest[0] if rest else 0.0)


@cache
def asset_attributes() -> dict[str, dict]:
    """Colour and shape per AI2-THOR asset id, from the paper's generated attribute profiles."""
    return json.loads((DATA / "asset_attributes.json").read_text(encoding="utf-8"))


def _size(obj: dict) -> tuple[float, float, float] | None:
    box = obj.get("axisAlignedBoundingBox") or obj.get("objectOrientedBoundingBox") or {}
    size = obj.get("size") or (box.get("size") if isinstance(box, dict) else None)
    try:
        return _xyz(size) if size else None
    except (TypeError, ValueError):
        return None


def _room(room) -> str | None:
    """A room by its name or type ("Kitchen"); a numbered id ("room|7") names nothing a viewer sees."""
    return room if isinstance(room, str) and room.strip() and not re.search(r"\d", room) else None


def normalise(obj: dict) -> dict:
    """One object in one shape: {can, id, type, position, parent, room, size, attributes}."""
    attributes = dict(obj.get("attributes") or {})
    for key in ATTRIBUTE_KEYS:
        if obj.get(key) is not None:
            attributes.setdefault(key, obj[key])
    materials = obj.get("salientMaterials")
    if "material" not in attributes and isinstance(materials, list) and len(materials) == 1:
        attributes["material"] = str(materials[0]).lower()
    profile = asset_attributes().get(str(obj.get("assetId") or ""), {})
    for key in ("color", "shape"):
        if key in profile:
            attributes.setdefault(key, profile[key])
    parent = obj.get("parent")
    if parent is None and obj.get("parentReceptacles"):
        parent = obj["parentReceptacles"][0]
    object_id = str(obj.get("id", obj.get("objectId")))
    return {
        "can": {key: obj[key] for key in ABILITY_KEYS if isinstance(obj.get(key), bool)},
        "id": object_id,
        "type": str(obj.get("type") or obj.get("objectType") or type_of_id(object_id)),
        "position": _xyz(obj.get("position") or [0, 0, 0]),
        "parent": parent,
        "room": _room(obj.get("room")),
        "size": _size(obj),
        "attributes": attributes,
    }


def read_objects(objects, number: int) -> dict[str, dict]:
    objects = objects.get("objects", []) if isinstance(objects, dict) else objects
    if not isinstance(objects, list):
        raise ValueError(f"state {number}: expected a list of objects")
    by_id: dict[str, dict] = {}
    for obj in map(normalise, objects):
        if obj["id"] in by_id:
            raise ValueError(f"state {number}: object id {obj['id']!r} twice")
        by_id[obj["id"]] = obj
    for obj in objects:  # a receptacle may list what it holds instead of each object naming its parent
        holder = obj.get("id", obj.get("objectId"))
        for child in obj.get("receptacleObjectIds") or []:
            if child in by_id and by_id[child]["parent"] is None:
                by_id[child]["parent"] = holder
    return by_id


# --- naming ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    """A description that singles out one object: `adjective noun relation` ("black mug", "mug" "in the
    fridge"); `relation` and a positional adjective hold in one state only (`local`)."""

    noun: str
    adjective: str = ""
    relation: str = ""
    local: bool = False

    def plain(self) -> str:
        return " ".join(p for p in (self.adjective, self.noun, self.relation) if p)

    def the(self, when: str = "", past: bool = True) -> str:
        """"the mug in the fridge"; with `when` ("before the change") a state-bound description says
        so: "the mug that was in the fridge before the change"."""
        if not (self.local and when):
            return f"the {self.plain()}"
        verb = "was" if past else "is"
        if self.relation:
            return f"the {' '.join(p for p in (self.adjective, self.noun) if p)} that {verb} {self.relation} {when}"
        return f"the {self.noun} that {verb} the {self.adjective} one {when}"

    def option(self) -> str:
        text = self.plain()
        return text[:1].upper() + text[1:]


class Grounder:
    """Names for the objects of two states: `name(id, state)` in one state, `stable(id)` across both
    (intrinsic attributes only, unique over every object either state holds)."""

    def __init__(self, states: list[dict[str, dict]]):
        self.states = states
        self.every = {**states[0], **states[1]}

    def _type_of(self, oid: str) -> str:
        return self.every[oid]["type"]

    def noun(self, oid: str) -> str:
        return readable(self._type_of(oid))

    def _intrinsic(self, oid: str, pool: list[str], exclude: tuple[str, ...]) -> Name | None:
        noun = self.noun(oid)
        if len(pool) == 1:
            return Name(noun)
        for key in INTRINSIC:
            if key in exclude:
                continue
            values = [self._stable_value(i, key) for i in pool]
            mine = self._stable_value(oid, key)
            if mine and values.count(mine) == 1:
                return Name(noun, adjective=str(mine))
        return None

    def _stable_value(self, oid: str, key: str):
        """An attribute the object has in every state it is in (a changed colour names nothing)."""
        values = {s[oid]["attributes"].get(key) for s in self.states if oid in s}
        return values.pop() if len(values) == 1 else None

    def stable(self, oid: str, exclude: tuple[str, ...] = ()) -> Name | None:
        pool = [i for i in self.every if self._type_of(i) == self._type_of(oid)]
        return self._intrinsic(oid, pool, exclude)

    def name(self, oid: str, state: int, exclude: tuple[str, ...] = ()) -> Name | None:
        """The most concise description singling `oid` out in `state` (None when none does). `exclude`
        keeps out what the question asks ("color", "parent", "room", "position")."""
        objects = self.states[state]
        if oid not in objects:
            return None
        found = self.stable(oid, exclude)
        if found is not None:
            return found
        pool = [i for i in objects if objects[i]["type"] == objects[oid]["type"]]
        found = self._intrinsic(oid, pool, exclude)
        if found is not None:
            return found
        noun, obj = self.noun(oid), objects[oid]
        if "parent" not in exclude and obj["parent"]:
            holders = [objects[i]["parent"] for i in pool]
            holder = self.receptacle(obj["parent"], state)
            if holder and holders.count(obj["parent"]) == 1:
                word = "in" if self.receptacle_type(obj["parent"]) in CONTAINERS else "on"
                return Name(noun, relation=f"{word} {holder}", local=True)
        if "room" not in exclude and obj["room"]:
            rooms = [objects[i]["room"] for i in pool]
            if rooms.count(obj["room"]) == 1:
                return Name(noun, relation=f"in the {room_words(obj['room'])}", local=True)
        if "position" not in exclude:
            heights = sorted((objects[i]["position"][1], i) for i in pool)
            if heights[-1][1] == oid and heights[-1][0] - heights[-2][0] >= 0.1:
                return Name(noun, adjective="highest" if len(pool) > 2 else "higher", local=True)
            if heights[0][1] == oid and heights[1][0] - heights[0][0] >= 0.1:
                return Name(noun, adjective="lowest" if len(pool) > 2 else "lower", local=True)
            return self._nearest(oid, pool, state)
        return None

    def _nearest(self, oid: str, pool: list[str], state: int) -> Name | None:
        """"the mug nearest the laptop": the closest landmark of another type, named by itself, that
        `oid` is clearly (LANDMARK_MARGIN) the closest (or farthest) of its kind to."""
        objects = self.states[state]
        landmarks = sorted((distance(objects[oid], obj), i) for i, obj in objects.items()
                           if obj["type"] != objects[oid]["type"])
        for _, landmark in landmarks:
            name = self.stable(landmark)
            if name is None:
                continue
            ranked = sorted((distance(objects[i], objects[landmark]), i) for i in pool)
            if ranked[0][1] == oid and ranked[1][0] - ranked[0][0] >= LANDMARK_MARGIN:
                return Name(self.noun(oid), relation=f"nearest {name.the()}", local=True)
            if ranked[-1][1] == oid and ranked[-1][0] - ranked[-2][0] >= LANDMARK_MARGIN:
                word = "farther from" if len(pool) == 2 else "farthest from"
                return Name(self.noun(oid), relation=f"{word} {name.the()}", local=True)
        return None

    def receptacle_type(self, receptacle_id: str) -> str:
        obj = self.every.get(receptacle_id)
        return obj["type"] if obj else type_of_id(receptacle_id)

    def receptacle(self, receptacle_id: str | None, state: int) -> str | None:
        """"the countertop": a receptacle by its type or an intrinsic attribute (never by what it holds)."""
        if not receptacle_id:
            return None
        if receptacle_id not in self.every:
            kind = type_of_id(receptacle_id)
            return f"the {readable(kind)}" if not any(self._type_of(i) == kind for i in self.every) else None
        name = self.stable(receptacle_id) or self.name(receptacle_id, state, exclude=("parent",))
        return name.the() if name is not None and not name.local else None


def room_words(room: str) -> str:
    """`LivingRoom` -> `living room`; names given as words stay as they are."""
    return readable(room) if " " not in room else room.lower()


def distance(a: dict, b: dict) -> float:
    return math.dist(a["position"], b["position"])
