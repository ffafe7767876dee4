"""Generated items: every Spatial457 answer checked by an independent reading of its program, every
M3-Verse answer checked from the two states, and both files round-trip through import_items."""

import copy
import json
import math
import random
import re

import pytest
from django.core.management import CommandError, call_command

from benchmarks.models import Item
from construction.generators import m3verse, spatial457

# --- a Spatial457 scene and an independent checker ---------------------------------------------------

# A camera looking along +Y: screen-left is -X, "front" (towards the camera) is -Y.
DIRECTIONS = {
    "left": [-1, 0, 0],
    "right": [1, 0, 0],
    "front": [0, -1, 0],
    "behind": [0, 1, 0],
    "above": [0, 0, 1],
    "below": [0, 0, -1],
}
RADIUS = {"large": 0.7, "small": 0.35}
MARGIN = 0.06


def _local(ref, obj):
    """obj's offset in ref's own frame: (ahead, to its left), by rotating the offset by -yaw."""
    a = math.radians(ref["rotation"])
    dx, dy = obj["3d_coords"][0] - ref["3d_coords"][0], obj["3d_coords"][1] - ref["3d_coords"][1]
    return dx * math.cos(a) + dy * math.sin(a), -dx * math.sin(a) + dy * math.cos(a)


def _hits(ref, obj, direction):
    """Step the reference disc along its heading; does it ever touch obj's disc?"""
    a = math.radians(ref["rotation"]) + (math.pi if direction == "backward" else 0.0)
    reach = RADIUS[ref["size"]] + RADIUS[obj["size"]]
    x0, y0 = ref["3d_coords"][:2]
    for step in range(1, 1500):  # 15 units: past the scene
        t = step * 0.01
        if (
            math.hypot(x0 + t * math.cos(a) - obj["3d_coords"][0], y0 + t * math.sin(a) - obj["3d_coords"][1])
            < reach
        ):
            return True
    return False


def _pose(obj):
    angle = (obj["rotation"] + 180) % 360 - 180  # (-180, 180]; the camera is at -Y
    if -135 < angle <= -45:
        return "front"
    if 45 < angle <= 135:
        return "back"
    return "right" if -45 < angle <= 45 else "left"


def _scene(seed=7, count=9):
    """Random objects, kept only when no answer sits on a threshold (relation margins, grazing hits)."""
    rng = random.Random(seed)
    while True:
        objects = []
        while len(objects) < count:
            x, y = rng.uniform(-4, 4), rng.uniform(-4, 4)
            if all(math.hypot(x - o["3d_coords"][0], y - o["3d_coords"][1]) > 1.6 for o in objects):
                objects.append(
                    {
                        "shape": rng.choice(["cube", "sphere", "cylinder"]),
                        "color": rng.choice(["red", "blue", "green", "gray"]),
                        "size": rng.choice(["small", "large"]),
                        "material": rng.choice(["rubber", "metal"]),
                        "3d_coords": [x, y, 0.5],
                        "rotation": rng.choice([0, 90, 180, 270]) + rng.uniform(-35, 35),
                    }
                )
        if _clear(objects):
            return {
                "image_index": 12,
                "image_filename": "superCLEVR_new_000012.png",
                "objects": objects,
                "directions": DIRECTIONS,
            }


def _clear(objects):
    for ref in objects:
        for obj in objects:
            if obj is ref:
                continue
            dx = obj["3d_coords"][0] - ref["3d_coords"][0]
            dy = obj["3d_coords"][1] - ref["3d_coords"][1]
            ahead, left = _local(ref, obj)
            if any(abs(abs(v) - 0.2) < MARGIN for v in (dx, dy, ahead, left)):
                return False
            if abs(abs(left) - (RADIUS[ref["size"]] + RADIUS[obj["size"]])) < MARGIN:
                return False
    return True


def check(program, scene):
    """An evaluator written apart from the executor: relations straight from coordinates."""
    objects = scene["objects"]
    every = list(range(len(objects)))
    out = []

    def rel2d(i, name):
        ox, oy = objects[i]["3d_coords"][:2]
        test = {
            "left": lambda x, y: x - ox < -0.2,
            "right": lambda x, y: x - ox > 0.2,
            "front": lambda x, y: y - oy < -0.2,
            "behind": lambda x, y: y - oy > 0.2,
        }[name]
        return [j for j in every if j != i and test(*objects[j]["3d_coords"][:2])]

    def rel3d(i, name):
        keep = {
            "front": lambda a, lft: a > 0.2,
            "behind": lambda a, lft: a < -0.2,
            "left": lambda a, lft: lft > 0.2,
            "right": lambda a, lft: lft < -0.2,
        }[name]
        return [j for j in every if j != i and keep(*_local(objects[i], objects[j]))]

    def attr(i, name):
        return _pose(objects[i]) if name == "pose" else objects[i][name]

    for node in program:
        kind, args, side = node["type"], [out[k] for k in node["inputs"]], node["side_inputs"]
        if kind == "scene":
            value = every
        elif kind.startswith("filter_"):
            value = [i for i in args[0] if attr(i, kind[7:]) == side[0]]
        elif kind == "unique":
            assert len(args[0]) == 1, "a stored program must name one object where it asks for one"
            value = args[0][0]
        elif kind == "relate":
            value = rel2d(args[0], side[0])
        elif kind == "relate_3d":
            value = rel3d(args[0], side[0])
        elif kind == "relate_collision":
            value = [j for j in every if j != args[0] and _hits(objects[args[0]], objects[j], side[0])]
        elif kind == "count":
            value = len(args[0])
        elif kind == "exist":
            value = "yes" if args[0] else "no"
        elif kind.startswith("query_"):
            value = attr(args[0], kind[6:])
        elif kind.startswith("same_"):
            value = [j for j in every if j != args[0] and attr(j, kind[5:]) == attr(args[0], kind[5:])]
        elif kind in ("opposite_pose", "vertical_pose"):
            mine = attr(args[0], "pose")
            axis = {"front": 0, "back": 0, "left": 1, "right": 1}
            if kind == "opposite_pose":
                value = [j for j in every if attr(j, "pose") != mine and axis[attr(j, "pose")] == axis[mine]]
            else:
                value = [j for j in every if axis[attr(j, "pose")] != axis[mine]]
        elif kind.startswith("equal_"):
            value = "yes" if args[0] == args[1] else "no"
        elif kind in ("less_than", "greater_than"):
            value = "yes" if (args[0] < args[1]) == (kind == "less_than") and args[0] != args[1] else "no"
        elif kind == "union":
            value = sorted(set(args[0]) | set(args[1]))
        elif kind == "intersect":
            value = sorted(set(args[0]) & set(args[1]))
        else:
            raise AssertionError(f"unexpected function {kind}")
        out.append(value)
    return out[-1]


@pytest.fixture(scope="module")
def scene():
    return _scene()


@pytest.mark.parametrize("level", [level for level in spatial457.LEVELS if level != "L4_occ"])  # occlusion: paper
def test_every_spatial457_answer_matches_an_independent_evaluation(scene, level):
    data = spatial457.generate(scene, level, per_template=2, seed=5, templates_per_image=None)
    questions = data["questions"]
    assert data["split"] == level and len(questions) >= 4
    used = set()
    for q in questions:
        assert set(q) == {
            "split",
            "image_filename",
            "image_index",
            "question",
            "program",
            "answer",
            "template_filename",
            "question_family_index",
            "question_index",
        }
        assert "<" not in q["question"] and "[" not in q["question"] and q["question"].endswith("?")
        assert check(q["program"], scene) == q["answer"], q["question"]
        used |= {node["type"] for node in q["program"]}
    wanted = {
        "L3_2d_spatial": "relate",
        "L5_6d_spatial": "relate_3d",
        "L5_collision": "relate_collision",
        "L4_pose": "query_pose",
        "L2_objects": "union",
        "L1_single": "unique",
    }[level]
    assert wanted in used


def test_the_checked_questions_use_every_primitive_the_templates_need(scene):
    used = {
        node["type"]
        for level in spatial457.LEVELS
        for q in spatial457.generate(scene, level, per_template=2, seed=5, templates_per_image=None)["questions"]
        for node in q["program"]
    }
    assert {
        "scene", "filter_size", "filter_color", "filter_shape", "filter_pose", "unique", "relate", "relate_3d",
        "relate_collision", "count", "exist", "query_size", "query_color", "query_shape", "query_pose",
        "same_size", "same_color", "same_shape", "same_pose", "opposite_pose", "vertical_pose", "equal_size",
        "equal_color", "equal_shape", "equal_integer", "less_than", "greater_than", "union", "intersect",
    } <= used  # fmt: skip


def test_object_centric_relations_and_collisions_follow_the_heading():
    facing_east = {"shape": "cube", "color": "red", "size": "small", "3d_coords": [0, 0, 0], "rotation": 0}
    north = {"shape": "sphere", "color": "blue", "size": "small", "3d_coords": [0, 2, 0], "rotation": 0}
    east = {"shape": "cylinder", "color": "gray", "size": "large", "3d_coords": [3, 0.1, 0], "rotation": 0}
    west = {"shape": "cube", "color": "green", "size": "large", "3d_coords": [-3, -0.1, 0], "rotation": 0}
    scene = {"objects": [facing_east, north, east, west], "directions": DIRECTIONS}
    assert spatial457.relate_3d(scene, 0, "left") == [1]
    assert spatial457.relate_3d(scene, 0, "front") == [2]
    assert spatial457.relate_collision(scene, 0, "forward") == [2]
    assert spatial457.relate_collision(scene, 0, "backward") == [3]
    facing_east["rotation"] = 180  # turned round: left and right swap, the same object is now behind
    assert spatial457.relate_3d(scene, 0, "right") == [1]
    assert spatial457.relate_3d(scene, 0, "behind") == [2]
    assert spatial457.relate_2d(scene, 0, "behind") == [1]  # the camera's view does not turn
    with pytest.raises(spatial457.ProgramError):
        spatial457.execute(
            [
                {"type": "scene", "inputs": []},
                {"type": "filter_size", "inputs": [0], "side_inputs": ["large"]},
                {"type": "unique", "inputs": [1]},
            ],
            scene,
        )


@pytest.mark.django_db
def test_spatial457_file_round_trips_through_import_items(scene, tmp_path):
    scene_file = tmp_path / "scenes.json"
    scene_file.write_text(json.dumps({"scenes": [scene]}))
    out = tmp_path / "L5_6d_spatial.json"
    call_command(
        "generate_items",
        "--family",
        "spatial457",
        "--scene-meta",
        str(scene_file),
        "--out",
        str(out),
        "--level",
        "L5_6d_spatial",
        "--seed",
        "3",
    )
    questions = json.loads(out.read_text())["questions"]
    call_command("create_benchmark", "gen-s457", "--family", "spatial457")
    call_command("import_items", "--benchmark", "gen-s457", str(out))
    items = {i.external_id: i for i in Item.objects.filter(benchmark__slug="gen-s457")}
    assert len(items) == len(questions)
    for q in questions:
        item = items[f"L5_6d_spatial/{q['question_index']}"]
        assert item.question == q["question"] and item.answers == [str(q["answer"])]
        assert item.tags["program"] == q["program"] and item.tags["level"] == "L5_6d_spatial"
    call_command("import_items", "--benchmark", "gen-s457", str(out))  # again: nothing doubles
    assert Item.objects.filter(benchmark__slug="gen-s457").count() == len(questions)


# --- M3-Verse ------------------------------------------------------------------------------------------


def _thing(object_id, position, parent, room, **attributes):
    """One object of an M3-Verse state; its type is the id's prefix, as in AI2-THOR."""
    thing = {"id": object_id, "type": object_id.split("|")[0], "position": position, "parent": parent, "room": room}
    if attributes:
        thing["attributes"] = attributes
    return thing


def _states():
    before = [
        _thing("Apple|1", [1, 0, 1], "CounterTop|1", "Kitchen", color="red"),
        _thing("Apple|2", [2, 0, 1], "DiningTable|1", "Kitchen", color="green"),
        _thing("Mug|1", [0, 0, 0], "CounterTop|1", "Kitchen", color="white", material="ceramic"),
        _thing("Book|1", [5, 0, 5], "Sofa|1", "LivingRoom", color="blue"),
        _thing("CounterTop|1", [1, 0, 1], None, "Kitchen"),
        _thing("DiningTable|1", [2, 0, 1], None, "Kitchen"),
        _thing("Sofa|1", [5, 0, 5], None, "LivingRoom"),
        _thing("Fridge|1", [0, 0, 3], None, "Kitchen", isOpen=False, color="white"),
        _thing("Vase|1", [6, 0, 5], "Sofa|1", "LivingRoom"),
        _thing("Pen|1", [6, 0, 6], "Sofa|1", "LivingRoom"),
    ]
    after = [copy.deepcopy(o) for o in before if o["id"] not in ("Vase|1", "Pen|1")]
    after[0].update(position=[2, 0, 1.5], parent="DiningTable|1")  # red apple moved
    after[7]["attributes"]["isOpen"] = True  # fridge opened
    after[2]["attributes"]["color"] = "black"  # mug changed colour
    after[3].update(position=[1.5, 0, 1], parent="CounterTop|1", room="Kitchen")  # book changed rooms
    after.append(_thing("Laptop|1", [5, 0, 5], "Sofa|1", "LivingRoom", color="gray"))  # laptop added
    return {"scene_id": "scene_9", "states": [before, after]}


# the truth, from how _states() was built (inter-state rows; the intra-state ones are checked in
# test_generators_paper.py)
TRUTH = {
    "new_visible_objects": {"laptop"},
    "lost_visible_objects": {"vase", "pen"},
    "attribute_changed_objects": {"mug", "fridge"},
    "openness_state_comparison": {"closed before, open after"},
    "objects_room_movement": {"book"},
    ("room_position_changes", "kitchen"): {"red apple"},
    ("room_position_changes", "living room"): {"book"},
    ("room_attribute_changed_objects", "kitchen"): {"mug", "fridge"},
    ("movement_between_receptacles", "red apple"): {"from the countertop to the dining table"},
    ("old_receptacle", "red apple"): {"the dining table"},
    ("new_receptacle", "red apple"): {"the countertop"},
    ("movement_between_receptacles", "book"): {"from the sofa to the countertop"},
    ("old_receptacle", "book"): {"the countertop"},
    ("new_receptacle", "book"): {"the sofa"},
    ("movement_distance", "red apple"): {f"{math.dist([1, 0, 1], [2, 0, 1.5]):.1f} m"},
    ("movement_distance", "book"): {f"{math.dist([5, 0, 5], [1.5, 0, 1]):.1f} m"},
}


def _truth(row):
    sub, question = row["subcategory"], row["question"]
    if sub in TRUTH:
        return TRUTH[sub]
    keys = [
        k
        for k in TRUTH
        if isinstance(k, tuple) and k[0] == sub and (f"In the {k[1]}," in question or re.search(rf"the {k[1]}\b", question))
    ]
    assert len(keys) == 1, question
    return TRUTH[keys[0]]


@pytest.mark.parametrize("seed", range(6))
def test_every_m3verse_answer_matches_the_states(seed):
    rows = m3verse.generate(_states(), seed=seed)
    subcategories = {row["subcategory"] for row in rows}
    assert {
        "new_visible_objects",
        "lost_visible_objects",
        "attribute_changed_objects",
        "objects_room_movement",
        "room_position_changes",
        "movement_between_receptacles",
        "movement_distance",
        "openness_state_comparison",
    } <= subcategories
    for row in rows:
        assert set(row) == {
            "scene_id",
            "category",
            "question_id",
            "state_type",
            "question",
            "options",
            "answer",
            "question_type",
            "subcategory",
            "generator_name",
            "hallucination",
            "capabilities",
            "provenance",
        }
        letters = [o.split(". ", 1)[0] for o in row["options"]]
        texts = [o.split(". ", 1)[1].lower() for o in row["options"]]
        assert letters == list("ABCD"[: len(letters)]) and len(set(texts)) == len(texts)
        if row["state_type"] != "inter-states":
            continue
        truth = _truth(row)
        none = m3verse.NONE_OPTION.lower()
        if row["hallucination"]:
            assert not truth & set(texts), row
            assert row["answer"] == [letters[texts.index(none)]]
        else:
            assert truth & set(texts), row
            assert row["answer"] == sorted(letters[k] for k, t in enumerate(texts) if t in truth)
            assert all(texts[ord(a) - 65] != none for a in row["answer"])


def test_m3verse_hallucinations_and_none_distractors_both_appear():
    rows = [row for seed in range(12) for row in m3verse.generate(_states(), seed=seed)]
    hallucinations = [r for r in rows if r["hallucination"]]
    none_wrong = [
        r for r in rows if not r["hallucination"] and any(m3verse.NONE_OPTION in o for o in r["options"])
    ]
    assert hallucinations and none_wrong
    assert 0.1 < len(hallucinations) / len(rows) < 0.45


@pytest.mark.django_db
def test_m3verse_file_round_trips_through_import_items(tmp_path):
    states = tmp_path / "states.json"
    states.write_text(json.dumps(_states()))
    out = tmp_path / "scene_9.jsonl"
    call_command(
        "generate_items",
        "--family",
        "m3verse",
        "--scene-meta",
        str(states),
        "--states",
        str(states),
        "--out",
        str(out),
        "--seed",
        "1",
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    call_command("create_benchmark", "gen-m3", "--family", "m3verse")
    call_command("import_items", "--benchmark", "gen-m3", str(out))
    items = {i.external_id: i for i in Item.objects.filter(benchmark__slug="gen-m3")}
    assert len(items) == len(rows)
    for row in rows:
        item = items[row["question_id"]]
        assert item.answers == row["answer"] and item.question == row["question"]
        assert item.choices == [o.split(". ", 1)[1] for o in row["options"]]
        assert (
            item.tags["hallucination"] == row["hallucination"]
            and item.tags["subcategory"] == row["subcategory"]
        )


def _ai2thor(objects):
    """The same objects as AI2-THOR reports them (objectId, objectType, position {x,y,z}, parentReceptacles)."""
    return [
        {
            "objectId": o["id"],
            "objectType": o["type"],
            "position": dict(zip("xyz", o["position"], strict=True)),
            "parentReceptacles": [o["parent"]] if o["parent"] else None,
            "room": o["room"],
            **(o.get("attributes") or {}),
        }
        for o in objects
    ]


def test_generate_items_reads_one_file_per_state_and_refuses_bad_input(tmp_path):
    before, after = _states()["states"]
    (tmp_path / "before.json").write_text(json.dumps(_ai2thor(before)))
    (tmp_path / "after.json").write_text(json.dumps({"objects": _ai2thor(after)}))
    out = tmp_path / "items.jsonl"
    call_command(
        "generate_items", "--family", "m3verse", "--scene-meta", str(tmp_path / "before.json"),
        "--states", str(tmp_path / "after.json"), "--scene-id", "scene_9", "--out", str(out), "--seed", "2",
    )  # fmt: skip
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == m3verse.generate(_states(), seed=2)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command(
            "generate_items", "--family", "spatial457", "--scene-meta", str(tmp_path / "bad.json"),
            "--out", str(out),
        )  # fmt: skip
    (tmp_path / "empty.json").write_text(json.dumps({"objects": []}))
    with pytest.raises(CommandError, match="non-empty 'objects'"):
        call_command(
            "generate_items", "--family", "spatial457", "--scene-meta", str(tmp_path / "empty.json"),
            "--out", str(out),
        )  # fmt: skip
