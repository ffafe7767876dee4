"""M3-Verse items generated as the paper builds them: a small house's two AI2-THOR states (a fridge
opened, one of two mugs moved, an apple gone, a laptop switched on, bread sliced, an egg broken, a cup
emptied) give intra- and inter-state questions over many sub-tasks, in natural wording (no state id),
objects named by attributes, containment and position (never an index), every answer checked here by
an evaluator written apart from the generator."""

import copy
import json
import math
import re

import pytest

from construction.generators import m3verse
from construction.generators.m3verse_grounding import Grounder, read_objects
from construction.generators.m3verse_language import EnhancementError, enhance, unnatural
from construction.generators.words import plural

COUNTER, TABLE, FRIDGE = "CounterTop|+01.00|+00.90|-01.00", "DiningTable|-01.00|+00.00|+01.00", "Fridge|+02.00|+00.00|-02.00"
MUG_MOVED, MUG_STILL = "Mug|+01.10|+00.95|-01.00", "Mug|-01.10|+00.80|+01.00"


def _o(oid, pos, parent=None, **states):
    """An object as AI2-THOR's metadata reports it."""
    kind = oid.split("|")[0]
    return {"objectId": oid, "objectType": kind, "name": f"{kind}_a1b2", "position": dict(zip("xyz", pos, strict=True)),
            "parentReceptacles": [parent] if parent else None,
            "axisAlignedBoundingBox": {"size": {"x": 0.1, "y": 0.12, "z": 0.1}}, **states}


def house():
    before = [
        _o(COUNTER, [1, 0.9, -1]), _o(TABLE, [-1, 0, 1]), _o(FRIDGE, [2, 0, -2], isOpen=False),
        _o(MUG_MOVED, [1.1, 0.95, -1], COUNTER, isFilledWithLiquid=False, isBroken=False),
        _o(MUG_STILL, [-1.1, 0.8, 1], TABLE, isFilledWithLiquid=False, isBroken=False),
        _o("Apple|+00.80|+00.95|-01.10", [0.8, 0.95, -1.1], COUNTER, isSliced=False),
        _o("Laptop|-00.90|+00.80|+00.90", [-0.9, 0.8, 0.9], TABLE, isToggled=False, isOpen=True),
        _o("Bread|+01.30|+00.95|-00.90", [1.3, 0.95, -0.9], COUNTER, isSliced=False),
        _o("Egg|+02.00|+01.00|-02.00", [2, 1.0, -2], FRIDGE, isBroken=False, isSliced=False),
        _o("Cup|-01.20|+00.80|+01.20", [-1.2, 0.8, 1.2], TABLE, isFilledWithLiquid=True, isBroken=False),
        _o("Pot|+01.50|+00.95|-01.20", [1.5, 0.95, -1.2], COUNTER),
    ]
    after = copy.deepcopy([o for o in before if not o["objectId"].startswith("Apple")])
    by_id = {o["objectId"]: o for o in after}
    by_id[FRIDGE]["isOpen"] = True
    by_id[MUG_MOVED].update(position={"x": -0.7, "y": 0.8, "z": 1.3}, parentReceptacles=[TABLE])
    by_id["Laptop|-00.90|+00.80|+00.90"]["isToggled"] = True
    by_id["Bread|+01.30|+00.95|-00.90"]["isSliced"] = True
    by_id["Egg|+02.00|+01.00|-02.00"]["isBroken"] = True
    by_id["Cup|-01.20|+00.80|+01.20"]["isFilledWithLiquid"] = False
    return before, after


# --- an evaluator apart from the generator: names resolved against the raw AI2-THOR objects ----------------

WORDS = {"countertop": "CounterTop", "dining table": "DiningTable"}
STATE_WORDS = {"before the change": 0, "after the change": 1}


def _kind(noun):
    return WORDS.get(noun, noun[:1].upper() + noun[1:])


def _pos(obj):
    return [obj["position"][k] for k in "xyz"]


def _objects(state, house_states):
    return {o["objectId"]: o for o in house_states[state]}


def resolve(phrase, state, house_states):
    """The one object a description names in `state` (AssertionError when it names none or several)."""
    phrase = phrase.strip().lower().removeprefix("the ")
    bound = re.match(r"(.+?) that (?:was|is) (?:the )?(.+?)(?: one)? (before|after) the change$", phrase)
    if bound:
        state = 0 if bound.group(3) == "before" else 1
        rest = bound.group(2)
        phrase = f"{rest} {bound.group(1)}" if rest in ("lower", "higher", "lowest", "highest") else \
            f"{bound.group(1)} {rest}"
    objects = _objects(state, house_states)
    height = re.match(r"(higher|highest|lower|lowest) (.+)$", phrase)
    if height:
        ranked = sorted((o for o in objects.values() if o["objectType"] == _kind(height.group(2))),
                        key=lambda o: o["position"]["y"])
        return ranked[-1] if height.group(1).startswith("high") else ranked[0]
    match = re.match(r"(.+?) (on|in|nearest|farther from) the (.+)$", phrase)
    noun = match.group(1) if match else phrase
    found = [o for o in objects.values() if o["objectType"] == _kind(noun)]
    if match:
        other = [o for o in objects.values() if o["objectType"] == _kind(match.group(3))]
        assert len(other) == 1, phrase
        other = other[0]
        if match.group(2) in ("on", "in"):
            found = [o for o in found if (o["parentReceptacles"] or [None])[0] == other["objectId"]]
        else:
            ranked = sorted(found, key=lambda o: math.dist(_pos(o), _pos(other)))
            found = ranked[:1] if match.group(2) == "nearest" else ranked[-1:]
    assert len(found) == 1, (phrase, state)
    return found[0]


def truth(row, house_states):
    """The set of correct option texts (lower case) from the states alone."""
    sub, q = row["subcategory"], row["question"]
    before, after = (_objects(s, house_states) for s in (0, 1))
    when = next((s for w, s in STATE_WORDS.items() if q.startswith(w[:1].upper() + w[1:])), None)
    if sub == "attribute_changed_objects":
        return {readable_type(o["objectType"]) for i, o in before.items()
                if i in after and {k: v for k, v in o.items() if k.startswith("is")}
                != {k: v for k, v in after[i].items() if k.startswith("is")}}
    if sub == "lost_visible_objects":
        return {o["objectType"].lower() for i, o in before.items() if i not in after}
    if sub.endswith("_state_comparison"):
        key, yes, no = {"openness": ("isOpen", "open", "closed"), "toggle": ("isToggled", "on", "off"),
                        "liquid": ("isFilledWithLiquid", "filled", "empty"),
                        "breaking": ("isBroken", "broken", "intact")}[sub.split("_")[0]]
        name = re.match(r"Was (.+?) (?:open|switched|filled|intact)", q).group(1)
        oid = resolve(name, 0, house_states)["objectId"]
        words = [yes if s[oid][key] else no for s in (before, after)]
        return {f"{words[0]} before, {words[1]} after"}
    if sub == "slicing_state_change":
        oid = resolve(re.match(r"Was (.+?) sliced", q).group(1), 0, house_states)["objectId"]
        return {"yes" if after[oid]["isSliced"] and not before[oid]["isSliced"] else "no"}
    if sub in ("old_receptacle", "new_receptacle", "movement_between_receptacles", "movement_distance"):
        name = re.search(r"(the (?:mug|apple|bread|egg|cup|pot|laptop).*?(?:before|after) the change)", q).group(1)
        oid = resolve(name, 0, house_states)["objectId"]
        old, new = (resolve_type(s[oid]["parentReceptacles"][0]) for s in (before, after))
        return {"old_receptacle": {f"the {new}"}, "new_receptacle": {f"the {old}"},
                "movement_between_receptacles": {f"from the {old} to the {new}"},
                "movement_distance": {f"{math.dist(_pos(before[oid]), _pos(after[oid])):.1f} m"}}[sub]
    objects = (before, after)[when]
    if sub == "object_type_num_in_scene":
        noun = re.search(r"how many (.+?) are there", q).group(1)
        return {str(sum(plural(readable_type(o["objectType"])) == noun for o in objects.values()))}
    if sub == "object_receptacle_location":
        obj = resolve(re.search(r"what is (.+?) placed", q).group(1), when, house_states)
        return {f"the {resolve_type(obj['parentReceptacles'][0])}"}
    if sub == "receptacle_contents":
        holder = resolve(re.search(r"(?:in|on) (the .+?)\?", q).group(1), when, house_states)
        shown = [o.split(". ", 1)[1] for o in row["options"] if m3verse.NONE_OPTION not in o]
        return {t.lower() for t in shown if _kind(t.lower().split(" ")[-1]) in _types(objects)
                and (resolve(t, when, house_states)["parentReceptacles"] or [None])[0] == holder["objectId"]}
    if sub == "object_distance_estimation":
        a, b = re.search(r"apart are (.+?) and (.+?)\?", q).groups()
        return {f"{math.dist(_pos(resolve(a, when, house_states)), _pos(resolve(b, when, house_states))):.1f} m"}
    if sub in ("object_height", "object_length"):
        size = resolve(re.search(r"how (?:tall|long) is (.+?)\?", q).group(1), when, house_states)
        box = size["axisAlignedBoundingBox"]["size"]
        value = box["y"] if sub == "object_height" else max(box["x"], box["z"])
        return {f"{value * 100:.0f} cm"}
    if sub in ("object_distance_shortest_comparison", "object_distance_longest_comparison"):
        ref = resolve(re.search(r"(?:closest to|farthest from) (.+?)\?", q).group(1), when, house_states)
        shown = [o.split(". ", 1)[1] for o in row["options"] if m3verse.NONE_OPTION not in o]
        far = {t.lower(): math.dist(_pos(ref), _pos(resolve(t, when, house_states))) for t in shown}
        pick = min if sub.endswith("shortest_comparison") else max
        return {pick(far, key=far.get)}
    raise AssertionError(f"no evaluator for {sub}")


def _types(objects):
    return {o["objectType"] for o in objects.values()}


def readable_type(kind):
    return {"CounterTop": "countertop", "DiningTable": "dining table"}.get(kind, kind.lower())


def resolve_type(object_id):
    return readable_type(object_id.split("|")[0])


@pytest.fixture(scope="module")
def states():
    return house()


@pytest.mark.parametrize("seed", range(4))
def test_a_small_house_gives_natural_questions_over_many_subtasks_each_checked_against_the_states(states, seed):
    rows = m3verse.generate({"scene_id": "house_1", "states": list(states)}, seed=seed)
    assert {row["state_type"] for row in rows} == {"intra-state", "inter-states"}
    assert len({row["subcategory"] for row in rows}) >= 12
    for row in rows:
        texts = [row["question"], *row["options"]]
        assert not any(unnatural(text) for text in texts), texts
        assert re.search(r"state_[01]", row["provenance"]["template"])  # the paper's template, kept
        letters = [o.split(". ", 1)[0] for o in row["options"]]
        options = [o.split(". ", 1)[1].lower() for o in row["options"]]
        assert letters == list("ABCD"[: len(letters)]) and len(set(options)) == len(options)
        right = truth(row, states)
        none = m3verse.NONE_OPTION.lower()
        if row["hallucination"]:
            assert not right & set(options), row
            assert row["answer"] == [letters[options.index(none)]]
        else:  # every truth shown is marked, and at least one is shown ("which of the following")
            assert right & set(options) and (row["question_type"] == "multiple_choice" or right <= set(options))
            assert row["answer"] == sorted(letters[k] for k, t in enumerate(options) if t in right), row


def test_the_two_mugs_are_told_apart_by_containment_and_position_never_by_index(states):
    grounder = Grounder([read_objects(s, n) for n, s in enumerate(states)])
    assert grounder.name(MUG_MOVED, 0).the() == "the mug on the countertop"
    assert grounder.name(MUG_STILL, 0).the() == "the mug on the dining table"
    after = {grounder.name(MUG_MOVED, 1).the(), grounder.name(MUG_STILL, 1).the()}
    assert len(after) == 2 and all(not re.search(r"\d", name) for name in after)  # both on the table now
    assert grounder.name(MUG_MOVED, 0).the("before the change") == "the mug that was on the countertop before the change"
    rows = m3verse.generate({"scene_id": "house_1", "states": list(states)}, seed=0)
    for row in rows:  # a mug is always said which one
        for text in (row["question"], *row["options"]):
            assert not re.search(r"(?<!higher )(?<!lower )\bmug\b(?! (?:on|in|nearest|farther|that))", text, re.I), text


def test_an_object_no_description_singles_out_is_not_asked_about():
    twins = [{"id": f"Mug|{k}", "type": "Mug", "position": [0, 0.9, 0], "parent": "Shelf|1"} for k in (1, 2)]
    grounder = Grounder([read_objects([*twins, {"id": "Shelf|1", "type": "Shelf", "position": [0, 0, 0]}], 0)] * 2)
    assert grounder.name("Mug|1", 0) is None and grounder.name("Mug|2", 0) is None


def test_plurals_and_the_enhancement_never_leave_a_state_id():
    assert [plural(w) for w in ("mug", "glass", "knife", "bread", "dish sponge", "shelf", "TV")] == [
        "mugs", "glasses", "knives", "loaves of bread", "dish sponges", "shelves", "TVs"]
    question, options = enhance("no_such_subtask", "Where was the mug at state_0?", {}, ["in state_1"])
    assert question == "Where was the mug before the change?" and options == ["after the change"]
    with pytest.raises(EnhancementError):
        enhance("no_such_subtask", "Compare state1 with the rest", {}, ["A"])
    assert unnatural("What colour is Mug 1?") == ["Mug 1"] and not unnatural("How far? 1.2 m")


def test_generated_rows_say_where_they_came_from(states):
    rows = m3verse.generate({"scene_id": "house_1", "states": list(states)}, seed=3)
    provenance = rows[0]["provenance"]
    assert provenance["source"] == "generated" and provenance["generator"] == "m3verse"
    assert provenance["seed"] == 3 and provenance["version"] == m3verse.VERSION and len(provenance["states"]) == 2
    assert json.loads(m3verse.write_jsonl(rows).splitlines()[0]) == rows[0]


def test_the_two_states_side_by_side_or_as_ai2thor_metadata_read_the_same(states):
    before, after = states
    listed = m3verse.generate([{"sceneName": "FloorPlan_7", "objects": before}, after], seed=1)
    named = m3verse.generate({"scene_id": "FloorPlan_7", "states": [before, after]}, seed=1)
    assert listed == named and listed[0]["scene_id"] == "FloorPlan_7"
