"""Spatial457-style questions: a CLEVR functional-program executor and a template instantiator.

Pure Python (no Django). A scene is CLEVR's scene JSON: `{"image_index", "image_filename",
"objects": [{"shape", "color", "size", "material", "3d_coords": [x, y, z], "rotation": yaw}],
"directions": {...}}`. `rotation` (or `yaw`) is the object's heading in degrees, counter-clockwise
about +Z from +X (Z up); its facing direction is (cos yaw, sin yaw). `directions` are CLEVR's
camera-view unit vectors (left, right, front, behind, above, below); CLEVR's defaults are used when
a scene has none.

Primitives: scene, filter_<attr>, unique, relate (camera view, CLEVR), relate_3d (Spatial457's
3D Relate: left/right/front/behind in the reference object's own frame), relate_collision
(Spatial457's Relate Collision: the reference object moving forward/backward along its facing
direction sweeps its footprint disc; every object whose disc that swept band crosses ahead of it is
hit), count, exist, query_<attr>, same_<attr>, equal_<attr>, equal_object, union, intersect,
equal_integer, less_than, greater_than, query_pose, same_pose, opposite_pose, vertical_pose.
Template-only functions (filter, filter_unique, filter_count, filter_exist, relate_filter*) are
expanded into these when a template is instantiated, as CLEVR does; the stored program is the
expanded one: a list of `{"type", "inputs", "side_inputs"}` (`function`/`value_inputs`, CLEVR
v1.0's published names, are read too).
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

from .words import plural

DATA = Path(__file__).resolve().parent / "data" / "spatial457"
VERSION = "1.1"

# CLEVR's camera (render_images.py defaults): unit vectors on the ground plane.
DEFAULT_DIRECTIONS = {
    "right": [0.6563112735748291, 0.7544902563095093, 0.0],
    "left": [-0.6563112735748291, -0.7544902563095093, 0.0],
    "behind": [-0.754490315914154, 0.6563112735748291, 0.0],
    "front": [0.754490315914154, -0.6563112735748291, 0.0],
    "above": [0.0, 0.0, 1.0],
    "below": [0.0, 0.0, -1.0],
}
RELATE_EPS = 0.2  # CLEVR's compute_all_relationships margin, used for relate and relate_3d
SIZE_RADIUS = {"large": 0.7, "small": 0.35}  # CLEVR's object half-extents on the ground
ATTRIBUTES = ("size", "color", "material", "shape", "pose")
PARAM_ATTRIBUTE = {"Size": "size", "Color": "color", "Material": "material", "Shape": "shape", "Pose": "pose"}
OPPOSITE_POSE = {"front": "back", "back": "front", "left": "right", "right": "left"}
RELATIONS = ("left", "right", "front", "behind")
COLLISION_DIRECTIONS = ("forward", "backward")
OCCLUSION = ("filter_occludee", "filter_occluder", "relate_occluding", "relate_occluded")
TEMPLATES_PER_IMAGE = 10  # CLEVR's generator default
BALANCE_SLACK = 1  # an answer may lead its template's rarest answer by this many questions

# The 2D (CLEVR relate) and 6D (3D Relate) spatial levels ask the same template families.
SPATIAL_TEMPLATES = ("one_hop", "two_hop", "three_hop", "single_and", "single_or", "compare_integer", "comparison")
# template folder/file -> level of the published question files
TEMPLATE_LEVELS = {
    "L1_single": [("L0_object_identification/zero_hop_filtered.json", "relate")],
    "L2_objects": [
        ("L0_object_identification/single_or_filtered.json", "relate"),
        ("L0_object_identification/same_relate_filtered.json", "relate"),
    ],
    "L3_2d_spatial": [
        (f"L1_L3_spatial_questions/{n}_filtered.json", "relate")
        for n in SPATIAL_TEMPLATES
    ],
    "L4_occ": [("L2_object_occlusion/occlusion_filtered.json", "relate"),
               ("L2_object_occlusion/occlusion_by_filtered.json", "relate")],
    "L4_pose": [("L2_pose/pose_filtered.json", "relate"), ("L2_pose/pose_relate.json", "relate")],
    "L5_6d_spatial": [
        (f"L1_L3_spatial_questions/{n}_filtered.json", "relate_3d")
        for n in SPATIAL_TEMPLATES
    ],
    "L5_collision": [("L3_physics/one_hop_filtered.json", "relate_collision")],
}
LEVELS = tuple(TEMPLATE_LEVELS)


class ProgramError(Exception):
    """The program has no answer on this scene (a `unique` over zero or several objects, a bad node)."""


# --- geometry --------------------------------------------------------------------------------------


def position(obj: dict) -> tuple[float, float, float]:
    coords = obj.get("3d_coords", obj.get("position"))
    if coords is None:
        raise ProgramError("object without 3d_coords")
    x, y, *rest = (float(c) for c in coords)
    return x, y, (rest[0] if rest else 0.0)


def yaw_degrees(obj: dict) -> float:
    return float(obj.get("rotation", obj.get("yaw", 0.0)) or 0.0)


def facing(obj: dict) -> tuple[float, float]:
    angle = math.radians(yaw_degrees(obj))
    return math.cos(angle), math.sin(angle)


def radius(obj: dict) -> float:
    return float(obj.get("radius") or SIZE_RADIUS.get(obj.get("size"), 0.5))


def directions_of(scene: dict) -> dict:
    return {**DEFAULT_DIRECTIONS, **(scene.get("directions") or {})}


def pose(obj: dict, scene: dict) -> str:
    """Which way the object faces in the image: towards the camera is `front`."""
    fx, fy = facing(obj)
    dirs = directions_of(scene)
    named = {"front": "front", "back": "behind", "left": "left", "right": "right"}
    return max(named, key=lambda p: fx * dirs[named[p]][0] + fy * dirs[named[p]][1])


def relate_2d(scene: dict, ref: int, relation: str) -> list[int]:
    if relation not in DEFAULT_DIRECTIONS:
        raise ProgramError(f"unknown relation {relation!r}")
    given = scene.get("relationships")
    if given and relation in given:
        return sorted(given[relation][ref])
    objects, axis = scene["objects"], directions_of(scene)[relation]
    origin = position(objects[ref])
    out = []
    for j, obj in enumerate(objects):
        if j == ref:
            continue
        d = [a - b for a, b in zip(position(obj), origin, strict=True)]
        if sum(a * b for a, b in zip(d, axis, strict=True)) > RELATE_EPS:
            out.append(j)
    return out


def _ground_offsets(objects: list, ref: int):
    """(index, object, dx, dy) of every object but the reference, (dx, dy) its offset on the ground from it."""
    ox, oy, _ = position(objects[ref])
    for j, obj in enumerate(objects):
        if j != ref:
            x, y, _ = position(obj)
            yield j, obj, x - ox, y - oy


def relate_3d(scene: dict, ref: int, relation: str) -> list[int]:
    """Objects `relation` of the reference object, in its own frame (its facing is its front)."""
    objects = scene["objects"]
    fx, fy = facing(objects[ref])
    axes = {"front": (fx, fy), "behind": (-fx, -fy), "left": (-fy, fx), "right": (fy, -fx)}
    if relation not in axes:
        raise ProgramError(f"unknown 3D relation {relation!r}")
    ax, ay = axes[relation]
    return [j for j, _, dx, dy in _ground_offsets(objects, ref) if dx * ax + dy * ay > RELATE_EPS]


def relate_collision(scene: dict, ref: int, direction: str) -> list[int]:
    """Objects the reference object would hit moving `forward` or `backward` along its facing.

    Footprints are discs (radius from size); the moving disc sweeps a band of half-width
    r_ref + r_other along the ray; an object is hit when its centre lies ahead (t > 0) and within
    that band."""
    if direction not in COLLISION_DIRECTIONS:
        raise ProgramError(f"unknown collision direction {direction!r}")
    objects = scene["objects"]
    fx, fy = facing(objects[ref])
    if direction == "backward":
        fx, fy = -fx, -fy
    out = []
    for j, obj, dx, dy in _ground_offsets(objects, ref):
        along = dx * fx + dy * fy
        across = abs(-dx * fy + dy * fx)
        if along > 0 and across < radius(objects[ref]) + radius(obj):
            out.append(j)
    return out


def occlusion(scene: dict, kind: str, arg) -> list[int]:
    """Super-CLEVR's occlusion data: `occlusion[i]["obj"][0] > 0` when object i is occluded, and
    `_occlusion_relation` {"occluding": {i: [the objects i hides]}, "occluded": {i: [those hiding i]}}.
    A scene without it has no occlusion questions."""
    relation = scene.get("_occlusion_relation")
    if not isinstance(relation, dict):
        raise ProgramError("the scene has no occlusion data")

    def related(token, index):
        return sorted(int(j) for j in (relation.get(token) or {}).get(str(index), []))

    if kind == "relate_occluding":
        return related("occluding", arg)
    if kind == "relate_occluded":
        return related("occluded", arg)
    if kind == "filter_occluder":
        return [i for i in arg if related("occluding", i)]
    hidden = scene.get("occlusion") or {}
    return [i for i in arg if ((hidden.get(str(i)) or {}).get("obj") or [0])[0] > 0 or related("occluded", i)]


# --- executor --------------------------------------------------------------------------------------


def node_type(node: dict) -> str:
    return node.get("type") or node.get("function")


def node_values(node: dict) -> list:
    return list(node.get("side_inputs") or node.get("value_inputs") or [])


def attribute(scene: dict, index: int, attr: str):
    obj = scene["objects"][index]
    if attr == "pose":
        return obj.get("pose") or pose(obj, scene)
    return obj.get(attr)


def run_program(program: list[dict], scene: dict) -> list:
    """Every node's output; raises ProgramError where the program has no answer."""
    outputs: list = []
    everything = list(range(len(scene["objects"])))
    for node in program:
        kind, args, values = node_type(node), [outputs[i] for i in node.get("inputs", [])], node_values(node)
        outputs.append(_apply(kind, args, values, scene, everything))
    return outputs


def execute(program: list[dict], scene: dict):
    return run_program(program, scene)[-1]


def _apply(kind: str, args: list, values: list, scene: dict, everything: list[int]):
    if kind == "scene":
        return list(everything)
    if kind.startswith("filter_") and kind[7:] in ATTRIBUTES:
        return [i for i in args[0] if attribute(scene, i, kind[7:]) == values[0]]
    if kind == "unique":
        if len(args[0]) != 1:
            raise ProgramError(f"unique over {len(args[0])} objects")
        return args[0][0]
    if kind == "relate":
        return relate_2d(scene, args[0], values[0])
    if kind == "relate_3d":
        return relate_3d(scene, args[0], values[0])
    if kind == "relate_collision":
        return relate_collision(scene, args[0], values[0])
    if kind in OCCLUSION:
        return occlusion(scene, kind, args[0])
    if kind == "count":
        return len(args[0])
    if kind == "exist":
        return bool(args[0])
    if kind.startswith("query_") and kind[6:] in ATTRIBUTES:
        return attribute(scene, args[0], kind[6:])
    if kind.startswith("same_") and kind[5:] in ATTRIBUTES:
        mine = attribute(scene, args[0], kind[5:])
        return [i for i in everything if i != args[0] and attribute(scene, i, kind[5:]) == mine]
    if kind == "opposite_pose":
        wanted = OPPOSITE_POSE[attribute(scene, args[0], "pose")]
        return [i for i in everything if attribute(scene, i, "pose") == wanted]
    if kind == "vertical_pose":
        mine = attribute(scene, args[0], "pose")
        return [i for i in everything if attribute(scene, i, "pose") not in (mine, OPPOSITE_POSE[mine])]
    if kind.startswith("equal_") and kind[6:] in (*ATTRIBUTES, "integer", "object"):
        return args[0] == args[1]
    if kind == "less_than":
        return args[0] < args[1]
    if kind == "greater_than":
        return args[0] > args[1]
    if kind == "union":
        return sorted(set(args[0]) | set(args[1]))
    if kind == "intersect":
        return sorted(set(args[0]) & set(args[1]))
    raise ProgramError(f"unknown function {kind!r}")


# --- templates -------------------------------------------------------------------------------------


def load_json(path: Path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def expand(template: dict, values: dict, relate_kind: str = "relate") -> tuple[list[dict], dict[int, int]]:
    """The template's nodes with the params' values, template-only functions expanded."""
    param_types = {p["name"]: p["type"] for p in template["params"]}
    program: list[dict] = []
    where: dict[int, int] = {}  # template node -> index of its output in the program

    def add(kind, inputs, side=()):
        program.append({"type": kind, "inputs": list(inputs), "side_inputs": list(side)})
        return len(program) - 1

    def filters(at: int, names: list[str]) -> int:
        for name in names:
            attr, value = PARAM_ATTRIBUTE[param_types[name]], values.get(name)
            if value:
                at = add(f"filter_{attr}", [at], [value])
        return at

    for number, node in enumerate(template["nodes"]):
        kind, side = node["type"], node.get("side_inputs", [])
        inputs = [where[i] for i in node.get("inputs", [])]
        if kind in ("filter", "filter_unique", "filter_count", "filter_exist"):
            at = filters(inputs[0], side)
            if kind != "filter":
                at = add(kind[7:], [at])
        elif kind.startswith("relate_filter"):
            relation = side[0]
            related = relate_kind if param_types[relation] == "Relation" else "relate_collision"
            at = filters(add(related, inputs, [values[relation]]), side[1:])
            if kind != "relate_filter":
                at = add(kind[len("relate_filter_") :], [at])
        elif kind == "relate":
            at = add(
                relate_kind if param_types[side[0]] == "Relation" else "relate_collision",
                inputs,
                [values[side[0]]],
            )
        elif kind.startswith("filter_") and side:  # a plain filter_<attr> whose value may be null
            at = filters(inputs[0], side)
        else:
            at = add(kind, inputs, [values[s] for s in side])
        where[number] = at
    return program, where


def render(
    text: str,
    template: dict,
    values: dict,
    synonyms: dict,
    rng: random.Random,
    shape_names: dict | None = None,
) -> str:
    param_types = {p["name"]: p["type"] for p in template["params"]}

    def word(value):
        value = (shape_names or {}).get(value, value)
        return rng.choice(synonyms.get(value, [value]))

    for name in sorted(param_types, key=len, reverse=True):
        value, kind = values.get(name), param_types[name]
        if kind == "Shape":
            noun = word(value) if value else word("thing")
            text = text.replace(f"{name}s", plural(noun)).replace(name, noun)
        elif kind == "Pose":
            text = text.replace(name, value or "")
        else:
            text = text.replace(name, word(value) if value else "")
    while "[" in text:
        start = text.index("[")
        end = text.index("]", start)
        text = text[:start] + (text[start + 1 : end] if rng.random() < 0.5 else "") + text[end + 1 :]
    text = re.sub(r"\b([Aa]) (?=[aeio])", r"\1n ", " ".join(text.split()))  # "an object", "an articulated bus"
    for mark in "?;,":
        text = text.replace(f" {mark}", mark)
    return text[0].upper() + text[1:] if text else text


def _constraints_ok(template: dict, values: dict, where: dict, outputs: list) -> bool:
    for constraint in template.get("constraints", []):
        kind, params = constraint["type"], constraint["params"]
        if kind == "NULL" and any(values.get(p) for p in params):
            return False
        if kind in ("NOT-NULL", "NOT_NULL") and not all(values.get(p) for p in params):
            return False
        if kind == "NOT_ALL_NULL" and not any(values.get(p) for p in params):
            return False
        if kind == "OUT_NEQ" and outputs[where[params[0]]] == outputs[where[params[1]]]:
            return False
    return True


def _null_params(template: dict) -> set[str]:
    return {p for c in template.get("constraints", []) if c["type"] == "NULL" for p in c["params"]}


def _random_values(template: dict, scene: dict, rng: random.Random) -> dict:
    """Params grouped per object description (<Z> <C> <S> <R>...): each group describes a random
    object of the scene with a random subset of its attributes; relations are drawn at random."""
    forced_null = _null_params(template)
    values: dict = {}
    objects = scene["objects"]
    for param in template["params"]:
        name, kind = param["name"], param["type"]
        if kind == "Relation":
            values[name] = rng.choice(RELATIONS)
        elif kind == "CollisionRelation":
            values[name] = rng.choice(COLLISION_DIRECTIONS)
    groups: dict[str, list[tuple[str, str]]] = {}
    for param in template["params"]:
        if param["type"] in PARAM_ATTRIBUTE:
            suffix = param["name"][2:-1]
            groups.setdefault(suffix, []).append((param["name"], PARAM_ATTRIBUTE[param["type"]]))
    for members in groups.values():
        target = rng.randrange(len(objects))
        for name, attr in members:
            keep = name not in forced_null and rng.random() < (0.7 if attr == "shape" else 0.45)
            values[name] = attribute(scene, target, attr) if keep else None
    return values


def instantiate(
    template: dict, scene: dict, rng: random.Random, relate_kind: str = "relate", tries: int = 60,
    accept=None,
) -> tuple[dict, list[dict], object] | None:
    """Values, program and answer of one well-posed question from the template, or None; `accept`
    (answer -> bool) turns away answers the template has given too often (CLEVR's balancing)."""
    for _ in range(tries):
        values = _random_values(template, scene, rng)
        program, where = expand(template, values, relate_kind)
        try:
            outputs = run_program(program, scene)
        except ProgramError:
            continue
        if _constraints_ok(template, values, where, outputs) and (accept is None or accept(outputs[-1])):
            return values, program, outputs[-1]
    return None


def balanced(counts: dict, answer) -> bool:
    """Whether the template may give `answer` again: not more than BALANCE_SLACK ahead of its rarest
    answer (yes/no both counted from the start)."""
    if isinstance(answer, bool):
        counts.setdefault(True, 0)
        counts.setdefault(False, 0)
    return counts.get(answer, 0) <= min(counts.values(), default=0) + BALANCE_SLACK


def vocabulary_for(scenes: list[dict]) -> dict:
    """Super-CLEVR's vocabulary (vehicles: `addi` is a "regular car") when the scenes hold its shapes,
    else CLEVR's."""
    superclevr = load_json(DATA / "metadata_superclevr.json")
    names = superclevr["types"]["Shapename"]
    if any(obj.get("shape") in names for scene in scenes for obj in scene["objects"]):
        return superclevr
    return load_json(DATA / "metadata.json")


def load_templates(level: str, templates_dir: Path | None = None) -> list[tuple[str, int, dict, str]]:
    base = Path(templates_dir or DATA / "templates")
    out = []
    for relative, relate_kind in TEMPLATE_LEVELS[level]:
        for index, template in enumerate(load_json(base / relative)):
            out.append((relative, index, template, relate_kind))
    return out


def read_scenes(data) -> list[dict]:
    """A scene, a list of scenes, or CLEVR's scenes file `{"info", "scenes": [...]}`."""
    if isinstance(data, dict) and "scenes" in data:
        data = data["scenes"]
    scenes = data if isinstance(data, list) else [data]
    for number, scene in enumerate(scenes):
        if not isinstance(scene, dict) or not isinstance(scene.get("objects"), list) or not scene["objects"]:
            raise ValueError(f"scene {number}: expected an object with a non-empty 'objects' list")
        for k, obj in enumerate(scene["objects"]):
            missing = [key for key in ("shape", "color", "size") if not obj.get(key)]
            if missing or ("3d_coords" not in obj and "position" not in obj):
                raise ValueError(f"scene {number} object {k}: needs shape, color, size and 3d_coords")
    return scenes


def answer_value(value, program: list[dict] | None = None, shape_names: dict | None = None):
    """Published answers: integers, "yes"/"no" for booleans, words otherwise (a shape by its display
    name where the vocabulary has one: superCLEVR's `addi` is a "regular car")."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if program and shape_names and node_type(program[-1]) == "query_shape":
        return shape_names.get(value, value)
    return value


def generate(
    scene_meta,
    level: str,
    *,
    per_template: int = 1,
    seed: int = 0,
    synonyms: dict | None = None,
    metadata: dict | None = None,
    templates_dir: Path | None = None,
    start_index: int = 0,
    templates_per_image: int | None = TEMPLATES_PER_IMAGE,
) -> dict:
    """One level's question file in Spatial457's published shape over the given scenes: per image,
    `templates_per_image` templates drawn at random (all with None), `per_template` questions each,
    every template's answers kept balanced across the file (CLEVR's generator does both)."""
    if level not in TEMPLATE_LEVELS:
        raise ValueError(f"level {level!r}: one of {', '.join(LEVELS)}")
    scenes = read_scenes(scene_meta)
    synonyms = synonyms if synonyms is not None else load_json(DATA / "synonyms.json")
    metadata = metadata if metadata is not None else vocabulary_for(scenes)
    shape_names = (metadata.get("types") or {}).get("Shapename") or {}
    rng = random.Random(f"{seed}-{level}")
    templates = load_templates(level, templates_dir)
    answers: dict[int, dict] = {number: {} for number in range(len(templates))}
    questions = []
    seen: set[tuple] = set()
    for number, scene in enumerate(scenes):
        image_index = scene.get("image_index", number)
        image_filename = scene.get("image_filename") or f"superCLEVR_new_{int(image_index):06d}.png"
        order = rng.sample(range(len(templates)), len(templates))
        asked = 0
        for family_index in order:
            if templates_per_image is not None and asked >= templates_per_image:
                break
            relative, _index, template, relate_kind = templates[family_index]
            counts, before = answers[family_index], len(questions)
            for _ in range(per_template):
                made = instantiate(template, scene, rng, relate_kind, accept=lambda a, c=counts: balanced(c, a))
                if made is None:
                    continue
                values, program, answer = made
                text = render(rng.choice(template["text"]), template, values, synonyms, rng, shape_names)
                key = (image_filename, text)
                if key in seen:
                    continue
                seen.add(key)
                counts[answer] = counts.get(answer, 0) + 1
                questions.append(
                    {
                        "split": level,
                        "image_filename": image_filename,
                        "image_index": image_index,
                        "question": text,
                        "program": program,
                        "answer": answer_value(answer, program, shape_names),
                        "template_filename": relative,
                        "question_family_index": family_index,
                        "question_index": start_index + len(questions),
                    }
                )
            asked += len(questions) > before
    scenes_used = sorted({q["image_filename"] for q in questions})
    return {
        "info": {"split": level, "generator": "hypolab.spatial457", "seed": seed},
        "split": level,
        "questions": questions,
        # import_items reads it: generated questions arrive as drafts for review
        "provenance": {"source": "generated", "generator": "spatial457", "version": VERSION, "seed": seed,
                       "level": level, "scenes": scenes_used},
    }
