"""M3-Verse's sub-tasks over two states (paper Tables 4 and 5), pure Python: each yields Specs, a
question's template slots, natural slots, the correct option texts and the distractor pool. Only the
sub-tasks the two states support are asked: a room question needs rooms, a height needs box sizes.

Inter-state (object_changes): what appeared, vanished, moved (distance, receptacles, rooms) or changed
state (open, on, dirty, cooked, filled, broken, sliced, used up). Intra-state (object_info), asked of
one state: distances and nearest/farthest, size, colour/shape/material, room, counts, receptacles and
their contents. Objects are named by m3verse_grounding (never an index)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from .m3verse_grounding import CONTAINERS, Grounder, Name, distance, readable, room_words
from .words import plural

MOVE_EPS = 0.05  # metres
WHEN = ("before the change", "after the change")
STATE_IDS = ("state_0", "state_1")
PER_SUBTASK = 2  # intra-state questions per sub-task and scene (both states together)
RECEPTACLE_TYPES = ("CounterTop", "DiningTable", "Shelf", "Sofa", "Bed", "Desk", "SideTable", "Drawer",
                    "Cabinet", "Fridge", "CoffeeTable", "Sink")
# sub-task -> (AI2-THOR state, word when true, word when false); asked where it changed
STATE_COMPARISONS = {
    "openness_state_comparison": ("isOpen", "open", "closed"),
    "toggle_state_comparison": ("isToggled", "on", "off"),
    "cleanliness_state_comparison": ("isDirty", "dirty", "clean"),
    "cooking_state_comparison": ("isCooked", "cooked", "uncooked"),
    "liquid_state_comparison": ("isFilledWithLiquid", "filled", "empty"),
    "breaking_state_comparison": ("isBroken", "broken", "intact"),
}
# sub-task -> (AI2-THOR state, the ability it needs, the paper's types that have it)
STATE_CHANGES = {"slicing_state_change": ("isSliced", "sliceable", ("Apple", "Bread", "Egg", "Lettuce", "Potato", "Tomato")),
                 "usage_state_change": ("isUsedUp", "canBeUsedUp", ("ToiletPaper", "SoapBottle", "PaperTowelRoll",
                                                                     "TissueBox"))}
COLOURS = ("white", "black", "red", "blue", "green", "yellow", "brown", "gray", "silver", "orange", "pink")
SHAPES = ("round", "rectangular", "cylindrical", "square", "oval", "spherical", "curved", "flat")
MATERIALS = ("wood", "metal", "plastic", "glass", "ceramic", "fabric", "stone", "paper", "rubber")


@dataclass
class Spec:
    subtask: str
    slots: dict  # the paper template's slots (state ids filled in later)
    natural: dict  # the natural wording's slots
    correct: list[str]
    pool: list[str]
    state: int | None = None  # the state an intra-state question asks about
    objects: list[str] = field(default_factory=list)  # the object ids it is about


class Context:
    def __init__(self, states: list[dict[str, dict]], rng: random.Random, absent: list[str]):
        self.states, self.rng, self.absent = states, rng, absent
        self.before, self.after = states
        self.g = Grounder(states)
        self.both = [i for i in self.before if i in self.after]

    def steady(self, oid: str, exclude: tuple[str, ...] = ()) -> Name | None:
        """A name true in both states (an unmoved object's containment holds in both)."""
        found = self.g.stable(oid, exclude)
        if found is not None:
            return found
        first, second = self.g.name(oid, 0, exclude), self.g.name(oid, 1, exclude)
        return first if first is not None and first == second else None

    def labels(self, ids, name) -> list[str] | None:
        """Option texts for objects (None when one has no name); every object of a type at once by its
        noun ("Bread slices": the slices a knife made are told apart by nothing)."""
        texts, ids = [], set(ids)
        for kind in sorted({self.g.every[i]["type"] for i in ids}):
            of_kind = [i for i in self.g.every if self.g.every[i]["type"] == kind]
            if len(of_kind) > 1 and set(of_kind) <= ids:
                texts.append(_cap(plural(readable(kind))))
                continue
            for oid in sorted(i for i in ids if self.g.every[i]["type"] == kind):
                found = name(oid)
                if found is None:
                    return None
                texts.append(found.option())
        return sorted(set(texts))

    def others(self, ids, name, excluded) -> list[str]:
        texts = [n.option() for n in (name(i) for i in ids if i not in excluded) if n is not None]
        return texts + [a[:1].upper() + a[1:] for a in self.rng.sample(self.absent, min(len(self.absent), 4))]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def changes(ctx: Context) -> dict:
    before, after = ctx.states
    moved = [i for i in ctx.both if math.dist(before[i]["position"], after[i]["position"]) > MOVE_EPS
             or before[i]["parent"] != after[i]["parent"]]
    return {
        "added": [i for i in after if i not in before],
        "removed": [i for i in before if i not in after],
        "moved": moved,
        "receptacle_moved": [i for i in ctx.both if before[i]["parent"] != after[i]["parent"]
                             and before[i]["parent"] and after[i]["parent"]],
        "attribute_changed": [i for i in ctx.both if before[i]["attributes"] != after[i]["attributes"]],
        "room_changed": [i for i in ctx.both if before[i]["room"] != after[i]["room"]],
    }


# --- inter-state -----------------------------------------------------------------------------------------


def inter_state(ctx: Context) -> list[Spec]:
    delta, g = changes(ctx), ctx.g
    specs: list[Spec] = []
    in_after, in_before = (lambda i: g.name(i, 1)), (lambda i: g.name(i, 0))
    for subtask, ids, name, pool_ids in (
        ("new_visible_objects", delta["added"], in_after, ctx.both),
        ("lost_visible_objects", delta["removed"], in_before, ctx.both),
        ("attribute_changed_objects", delta["attribute_changed"], ctx.steady, ctx.both),
        ("objects_room_movement", delta["room_changed"], ctx.steady, ctx.both),
    ):
        correct = ctx.labels(ids, name) if ids else None
        if correct:
            specs.append(Spec(subtask, {}, {}, correct, ctx.others(pool_ids, name, set(ids)), objects=list(ids)))
    rooms = sorted({o["room"] for o in ctx.before.values() if o["room"]})
    for room in rooms:
        in_room = [i for i in ctx.both if ctx.before[i]["room"] == room == ctx.after[i]["room"]]
        for subtask, key in (("room_position_changes", "moved"), ("room_attribute_changed_objects",
                                                                  "attribute_changed")):
            ids = [i for i in in_room if i in delta[key]]
            correct = ctx.labels(ids, ctx.steady) if ids else None
            if correct:
                words = room_words(room)
                specs.append(Spec(subtask, {"room": words}, {"room": words}, correct,
                                  ctx.others(in_room, ctx.steady, set(ids)), objects=ids))
    specs += _movements(ctx, delta)
    specs += _state_changes(ctx)
    return specs


def _receptacles(ctx: Context, state: int, excluded: set[str]) -> list[str]:
    names = {ctx.g.receptacle(o["parent"], state) for o in ctx.states[state].values() if o["parent"]}
    types = {t for t in (o["type"] for o in ctx.g.every.values())}
    names |= {f"the {readable(t)}" for t in RECEPTACLE_TYPES if t not in types}
    return sorted(n for n in names if n and n not in excluded)


def _movements(ctx: Context, delta: dict) -> list[Spec]:
    g, specs = ctx.g, []
    for oid in delta["moved"]:
        name = ctx.steady(oid, exclude=("parent", "position")) or g.name(oid, 0)
        moved = distance(ctx.before[oid], ctx.after[oid])
        if name is None or moved < 0.2:
            continue
        truth = f"{moved:.1f} m"
        pool = [f"{moved * k:.1f} m" for k in (0.4, 0.6, 1.6, 2.2, 3.0)]
        specs.append(Spec("movement_distance", {"object_name": name.plain()},
                          {"object": name.the(WHEN[0])}, [truth], pool, objects=[oid]))
    for oid in delta["receptacle_moved"]:
        old, new = g.receptacle(ctx.before[oid]["parent"], 0), g.receptacle(ctx.after[oid]["parent"], 1)
        first, second = g.name(oid, 0), g.name(oid, 1)
        if not (old and new and first and second) or old == new:
            continue
        others = _receptacles(ctx, 0, {old, new}) + _receptacles(ctx, 1, {old, new})
        others = sorted(set(others))
        specs.append(Spec("old_receptacle", {"object": first.the()}, {"object_before": first.the(WHEN[0])},
                          [_cap(new)], [_cap(old), *map(_cap, others)], objects=[oid]))
        specs.append(Spec("new_receptacle", {"object": second.the()},
                          {"object_after": second.the(WHEN[1], past=False)},
                          [_cap(old)], [_cap(new), *map(_cap, others)], objects=[oid]))
        steady = ctx.steady(oid, exclude=("parent", "position")) or first
        pairs = [(new, old), *((old, o) for o in others[:2]), *((o, new) for o in others[:2])]
        specs.append(Spec("movement_between_receptacles", {"object": steady.the()},
                          {"object": steady.the(WHEN[0])}, [f"From {old} to {new}"],
                          [f"From {a} to {b}" for a, b in pairs], objects=[oid]))
    return specs


def _state_changes(ctx: Context) -> list[Spec]:
    specs = []
    for subtask, (key, yes, no) in STATE_COMPARISONS.items():
        combos = [f"{a} before, {b} after" for a in (yes, no) for b in (yes, no)]
        for oid in sorted(ctx.both):
            was, now = ctx.before[oid]["attributes"].get(key), ctx.after[oid]["attributes"].get(key)
            name = ctx.steady(oid)
            if not isinstance(was, bool) or not isinstance(now, bool) or was == now or name is None:
                continue
            truth = _cap(combos[(0 if was else 2) + (0 if now else 1)])
            specs.append(Spec(subtask, {"object_name": name.the()}, {"object": name.the()}, [truth],
                              [_cap(c) for c in combos], objects=[oid]))
    for subtask, (key, ability, kinds) in STATE_CHANGES.items():
        unchanged = []
        for oid in sorted(ctx.both):
            was, now = ctx.before[oid]["attributes"].get(key), ctx.after[oid]["attributes"].get(key)
            name, obj = ctx.steady(oid), ctx.before[oid]
            able = obj["can"].get(ability, obj["type"] in kinds)
            if was is False and name is not None and (now or able):
                spec = Spec(subtask, {"object_name": name.the()}, {"object": name.the()},
                            ["Yes" if now else "No"], ["No" if now else "Yes"], objects=[oid])
                (specs if now else unchanged).append(spec)
        if any(s.subtask == subtask for s in specs) and unchanged:  # one "no" beside the "yes": balanced
            specs.append(ctx.rng.choice(unchanged))
    return specs


# --- intra-state -----------------------------------------------------------------------------------------


def intra_state(ctx: Context) -> list[Spec]:
    found: dict[str, list[Spec]] = {}
    for state in (0, 1):
        for spec in _intra(ctx, state):
            found.setdefault(spec.subtask, []).append(spec)
    chosen = []
    for specs in found.values():
        ctx.rng.shuffle(specs)
        chosen += specs[:PER_SUBTASK]
    return chosen


def _named(ctx: Context, state: int, exclude=()) -> dict[str, Name]:
    named = {oid: ctx.g.name(oid, state, exclude) for oid in ctx.states[state]}
    return {oid: n for oid, n in named.items() if n is not None}


def _numbers(truth: float, unit: str, digits: int) -> tuple[str, list[str]]:
    show = lambda v: f"{v:.{digits}f} {unit}"  # noqa: E731
    return show(truth), [show(truth * k) for k in (0.5, 0.7, 1.5, 2.0, 2.6) if show(truth * k) != show(truth)]


def _intra(ctx: Context, state: int) -> list[Spec]:
    objects, g, specs = ctx.states[state], ctx.g, []
    when = {"When": WHEN[state]}

    def spec(subtask, slots, natural, correct, pool, ids):
        specs.append(Spec(subtask, slots, {**when, **natural}, correct, pool, state=state, objects=ids))

    named = _named(ctx, state)
    pickable = [oid for oid in named if objects[oid]["parent"]]  # things standing on something
    # distances: a pair, and nearest / farthest from one object among four others
    ctx.rng.shuffle(pickable)
    for a, b in zip(pickable[::2], pickable[1::2], strict=False):
        far = distance(objects[a], objects[b])
        if far >= 0.3:
            truth, pool = _numbers(far, "m", 1)
            spec("object_distance_estimation", {"object1": named[a].the(), "object2": named[b].the()},
                 {"object1": named[a].the(), "object2": named[b].the()}, [truth], pool, [a, b])
            break
    kinds = {}
    for oid in named:
        kinds.setdefault(objects[oid]["type"], oid)
    distinct = list(kinds.values())  # one per type: options never two of a kind
    for ref in distinct[:6]:
        others = [o for o in distinct if o != ref and objects[o]["type"] != objects[ref]["type"]]
        ctx.rng.shuffle(others)
        others = sorted(others[:4], key=lambda o: distance(objects[ref], objects[o]))
        if len(others) < 3:
            continue
        gaps = [distance(objects[ref], objects[o]) for o in others]
        texts = [named[o].option() for o in others]
        if gaps[1] - gaps[0] >= 0.3:
            spec("object_distance_shortest_comparison", {"object": named[ref].the()}, {"object": named[ref].the()},
                 [texts[0]], texts[1:], [ref, *others])
        if gaps[-1] - gaps[-2] >= 0.3:
            spec("object_distance_longest_comparison", {"object": named[ref].the()}, {"object": named[ref].the()},
                 [texts[-1]], texts[:-1], [ref, *others])
    for oid, obj in objects.items():
        size = obj["size"]
        name = named.get(oid)
        if size and name and obj["parent"]:
            for subtask, value in (("object_height", size[1]), ("object_length", max(size[0], size[2]))):
                if value >= 0.05:
                    truth, pool = _numbers(value * 100, "cm", 0)
                    spec(subtask, {"object_id": name.the()}, {"object": name.the()}, [truth], pool, [oid])
    for subtask, key, vocabulary in (("object_color", "color", COLOURS), ("object_shape", "shape", SHAPES),
                                     ("object_material", "material", MATERIALS)):
        for oid, obj in objects.items():
            value, name = obj["attributes"].get(key), g.name(oid, state, exclude=(key,))
            if isinstance(value, str) and value and name is not None:
                seen = {str(o["attributes"].get(key)) for o in objects.values() if o["attributes"].get(key)}
                pool = [_cap(v) for v in [*sorted(seen), *vocabulary] if v != value]
                spec(subtask, {"object_id": name.the()}, {"object": name.the()}, [_cap(value)], pool, [oid])
    _places(ctx, state, spec)
    return specs


def _places(ctx: Context, state: int, spec) -> None:
    """Where things are: room, receptacle, what a receptacle holds, how many of a type."""
    objects, g = ctx.states[state], ctx.g
    rooms = sorted({o["room"] for o in objects.values() if o["room"]})
    if len(rooms) > 1:
        for oid, name in _named(ctx, state, exclude=("room",)).items():
            room = objects[oid]["room"]
            if room:
                pool = [_cap(room_words(r)) for r in rooms if r != room] + ["Bathroom", "Bedroom", "Hallway"]
                spec("object_room_location", {"object_id": name.the()}, {"object": name.the()},
                     [_cap(room_words(room))], pool, [oid])
    counts: dict[tuple, int] = {}
    for obj in objects.values():
        counts[(obj["type"], None)] = counts.get((obj["type"], None), 0) + 1
        if obj["room"]:
            counts[(obj["type"], obj["room"])] = counts.get((obj["type"], obj["room"]), 0) + 1
    for (type_name, room), count in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))):
        if count < 2 and ctx.rng.random() < 0.7:
            continue
        noun = plural(readable(type_name))
        pool = [str(n) for n in (count - 1, count + 1, count + 2, count + 3) if n >= 0]
        if room is None:
            spec("object_type_num_in_scene", {"object_type": noun}, {"objects": noun}, [str(count)], pool, [])
        elif len(rooms) > 1:
            spec("object_type_num_in_room", {"object_type": noun, "room_name": f"the {room_words(room)}"},
                 {"objects": noun, "room": room_words(room)}, [str(count)], pool, [])
    unplaced = _named(ctx, state, exclude=("parent",))
    for oid, name in unplaced.items():
        holder = g.receptacle(objects[oid]["parent"], state)
        if holder:
            others = {g.receptacle(o["parent"], state) for o in objects.values()} - {holder, None}
            pool = [_cap(r) for r in sorted(others)] + [_cap(r) for r in _receptacles(ctx, state, {holder})]
            spec("object_receptacle_location", {"object_id": name.the()}, {"object": name.the()},
                 [_cap(holder)], [p for p in pool if p.lower() != holder.lower()], [oid])
    holders = sorted({o["parent"] for o in objects.values() if o["parent"]})
    for holder_id in holders:
        holder = g.receptacle(holder_id, state)
        inside = [oid for oid, o in objects.items() if o["parent"] == holder_id]
        texts = [unplaced[i].option() for i in inside if i in unplaced]
        if holder and inside and len(texts) == len(inside) and len(set(texts)) == len(texts):
            pool = [n.option() for i, n in unplaced.items() if i not in inside]
            where = "in" if g.receptacle_type(holder_id) in CONTAINERS else "on"
            spec("receptacle_contents", {"receptacle_id": holder}, {"receptacle": holder, "where": where},
                 sorted(texts), pool + [_cap(a) for a in ctx.absent[:3]], inside)
