"""M3-Verse questions from the objects of two states, built as the paper builds them (pure Python).

Input (`states`): `{"scene_id", "states": [objects_0, objects_1]}` (or `"state_0"`/`"state_1"`, or
`"before"`/`"after"`), each object either ours, `{"id", "type", "position": [x, y, z] | {"x", "y",
"z"}, "parent", "room", "size", "attributes": {"color", "material", "isOpen", ...}}`, or AI2-THOR's
metadata (`objectId`, `objectType`, `parentReceptacles`, `receptacleObjectIds`,
`axisAlignedBoundingBox`, `salientMaterials`, `assetId`, the states at the top level). An object id
present in one state only was added or removed; one whose position moved by more than MOVE_EPS or
whose parent changed was moved; one whose attributes differ was changed.

The pipeline (paper A.4): templates of the intra-state (object_info) and inter-state
(object_changes) sub-tasks the states support (m3verse_tasks) over objects named by attributes,
containment and position (m3verse_grounding), options with hallucination items (about a quarter, as in
the paper's 23.2%: every correct option dropped, "No correct option is listed." the one right answer),
every answer checked against the state data, then the linguistic-enhancement stage
(m3verse_language) rewriting question and options into natural language. Output: M3-Verse's item
JSONL rows plus `provenance` (generator, version, seed, source states, the template question), which
import_items reads to bring the items in as drafts for review."""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

from . import m3verse_language
from .m3verse_grounding import DATA, read_objects, readable
from .m3verse_tasks import STATE_IDS, Context, Spec, inter_state, intra_state

GENERATOR = "m3verse"
VERSION = "2.0"
NONE_OPTION = "No correct option is listed."
LETTERS = "ABCDEFGH"
HALLUCINATION_RATE = 0.25
NONE_AS_DISTRACTOR_RATE = 0.3
INTER, INTRA = "inter-states", "intra-state"
SU, TU, AR, RS = "spatial understanding", "temporal understanding", "attribute recognition", "reasoning"

# sub-task -> (category, question_type, capabilities)
SUBTASKS = {
    "new_visible_objects": ("object_changes", "multiple_choice", [TU, AR]),
    "lost_visible_objects": ("object_changes", "multiple_choice", [TU, AR]),
    "attribute_changed_objects": ("object_changes", "multiple_choice", [TU, AR]),
    "room_attribute_changed_objects": ("object_changes", "multiple_choice", [SU, TU, AR]),
    "room_position_changes": ("object_changes", "multiple_choice", [SU, TU]),
    "objects_room_movement": ("object_changes", "multiple_choice", [SU, TU]),
    "movement_between_receptacles": ("object_changes", "single_choice", [SU, TU]),
    "old_receptacle": ("object_changes", "single_choice", [SU, TU]),
    "new_receptacle": ("object_changes", "single_choice", [SU, TU]),
    "movement_distance": ("object_changes", "single_choice", [SU, TU, RS]),
    **{name: ("object_changes", "single_choice", [TU, AR]) for name in (
        "openness_state_comparison", "toggle_state_comparison", "cleanliness_state_comparison",
        "cooking_state_comparison", "liquid_state_comparison", "breaking_state_comparison",
        "slicing_state_change", "usage_state_change")},
    "object_distance_estimation": ("object_info", "single_choice", [SU, RS]),
    "object_distance_shortest_comparison": ("object_info", "single_choice", [SU, RS]),
    "object_distance_longest_comparison": ("object_info", "single_choice", [SU, RS]),
    "object_shape": ("object_info", "single_choice", [AR]),
    "object_material": ("object_info", "single_choice", [AR]),
    "object_color": ("object_info", "single_choice", [AR]),
    "object_height": ("object_info", "single_choice", [SU, AR]),
    "object_length": ("object_info", "single_choice", [SU, AR]),
    "object_room_location": ("object_info", "single_choice", [SU]),
    "object_type_num_in_room": ("object_info", "single_choice", [SU, RS]),
    "object_type_num_in_scene": ("object_info", "single_choice", [RS]),
    "object_receptacle_location": ("object_info", "single_choice", [SU]),
    "receptacle_contents": ("object_info", "multiple_choice", [SU, AR]),
}
YES_NO = ("slicing_state_change", "usage_state_change")
# right only relative to the options shown: dropping it would make another option right
RELATIVE = ("object_distance_shortest_comparison", "object_distance_longest_comparison")


def load_json(path: Path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def side_by_side(data) -> bool:
    """Whether `data` is the two states as a two-item list (each a list of objects or {"objects"})."""
    return isinstance(data, list) and len(data) == 2 and all(
        isinstance(s, list) or (isinstance(s, dict) and "objects" in s) for s in data)


def read_states(data) -> tuple[str, list[dict[str, dict]]]:
    if side_by_side(data):
        data = {"states": data}
    if not isinstance(data, dict):
        raise ValueError("expected two states: {'states': [objects_0, objects_1]}")
    for keys in (("state_0", "state_1"), ("before", "after")):
        if "states" not in data and all(k in data for k in keys):
            raw = [data[k] for k in keys]
            break
    else:
        raw = data.get("states")
    if not isinstance(raw, list) or len(raw) != 2 or any(r is None for r in raw):
        raise ValueError("expected two states: {'states': [objects_0, objects_1]}")
    named = [data, *(r for r in raw if isinstance(r, dict))]  # AI2-THOR's metadata names its scene
    scene_id = next((str(d.get(k)) for d in named for k in ("scene_id", "sceneName") if d.get(k)), "scene")
    return scene_id, [read_objects(objects, n) for n, objects in enumerate(raw)]


def _templates(path: Path | None = None) -> dict[str, str]:
    found = {}
    for name in ("object_changes_template.json", "object_info_template.json"):
        data = load_json(Path(path) / name if path else DATA / name)
        for group in data.values():
            found.update({key: value["question_template"] for key, value in group.items()})
    return found


def template_question(template: str, spec: Spec) -> str:
    """The paper's template filled as the paper fills it, state ids and all (kept in provenance)."""
    state = {"state": STATE_IDS[spec.state]} if spec.state is not None else {}
    text = template.format(state1=STATE_IDS[0], state2=STATE_IDS[1], **state, **spec.slots)
    return " ".join(re.sub(r"\s*\(", " (", text).split())


# --- options ---------------------------------------------------------------------------------------------


def _options(correct: list[str], pool: list[str], rng: random.Random, *, hallucination: bool,
             size: int = 4) -> tuple[list[str], list[str]] | None:
    """(option texts, sorted answer letters), or None when the pool is too small; a distractor equal
    to a correct text (any case) is never offered, and every correct text offered is an answer."""
    truth = {c.lower() for c in correct}
    pool = [p for p in dict.fromkeys(pool) if p.lower() not in truth and p != NONE_OPTION]
    pool = list({p.lower(): p for p in pool}.values())
    rng.shuffle(pool)
    if hallucination:
        if len(pool) < size - 1:
            return None
        texts, right = [*pool[: size - 1], NONE_OPTION], [NONE_OPTION]
    else:
        if len(correct) > size - 1:  # "which of the following": some of the truths, each marked
            correct = rng.sample(correct, size - 2)
        with_none = size > 2 and rng.random() < NONE_AS_DISTRACTOR_RATE
        wanted = min(len(pool), size - len(correct) - (1 if with_none else 0))
        if wanted < 1:
            return None
        texts = [*correct, *pool[:wanted]] + ([NONE_OPTION] if with_none else [])
        right = list(correct)
    rng.shuffle(texts)
    return texts, sorted(LETTERS[k] for k, text in enumerate(texts) if text in right)


def checked(spec: Spec, texts: list[str], answer: list[str]) -> None:
    """The answer re-read against the spec: its letters are exactly the options that are true."""
    truth = {c.lower() for c in spec.correct}
    marked = {LETTERS[k] for k, text in enumerate(texts) if text.lower() in truth}
    if not marked:
        marked = {LETTERS[texts.index(NONE_OPTION)]} if NONE_OPTION in texts else set()
    if marked != set(answer) or len(set(map(str.lower, texts))) != len(texts):
        raise AssertionError(f"{spec.subtask}: answer {answer} is not what the states say")


# --- generation ------------------------------------------------------------------------------------------


def state_digest(objects: dict[str, dict]) -> str:
    return hashlib.sha256(json.dumps(objects, sort_keys=True, default=list).encode()).hexdigest()[:16]


def generate(states_data: dict, *, seed: int = 0, templates_path: Path | None = None,
             vocabulary: list[str] | None = None, hallucination_rate: float = HALLUCINATION_RATE,
             enhancement: str | None = None) -> list[dict]:
    scene_id, states = read_states(states_data)
    templates = _templates(templates_path)
    if vocabulary is None:
        vocabulary = [t for t in load_json(DATA / "all_object_types.json") if not t.endswith("*")]
    rng = random.Random(f"{seed}-{scene_id}")
    scene_types = {obj["type"] for state in states for obj in state.values()}
    absent = [readable(t) for t in vocabulary if t not in scene_types]
    context = Context(states, rng, absent)
    stage, _ = m3verse_language.rules(enhancement)
    source = {"source": "generated", "generator": GENERATOR, "version": VERSION, "seed": seed,
              "scene_id": scene_id, "states": [state_digest(s) for s in states], "enhancement": stage}
    rows: list[dict] = []
    for spec in [*inter_state(context), *intra_state(context)]:
        row = _row(spec, templates, rng, hallucination_rate, enhancement)
        if row is not None:
            template = row.pop("template")
            rows.append({"scene_id": scene_id, "question_id": f"{scene_id}-{len(rows)}", **row,
                         "provenance": {**source, "template": template}})
    return rows


def _row(spec: Spec, templates: dict[str, str], rng: random.Random, rate: float, enhancement) -> dict | None:
    yes_no = spec.subtask in YES_NO
    hallucination = spec.subtask not in (*YES_NO, *RELATIVE) and rng.random() < rate
    made = _options(spec.correct, spec.pool, rng, hallucination=hallucination, size=2 if yes_no else 4)
    if made is None and hallucination:
        hallucination, made = False, _options(spec.correct, spec.pool, rng, hallucination=False)
    if made is None:
        return None
    texts, answer = made
    checked(spec, texts, answer)
    template = template_question(templates[spec.subtask], spec)
    question, texts = m3verse_language.enhance(spec.subtask, template, spec.natural, texts, enhancement)
    category, question_type, capabilities = SUBTASKS[spec.subtask]
    return {
        "category": category,
        "state_type": INTRA if spec.state is not None else INTER,
        "question": question,
        "options": [f"{LETTERS[k]}. {text[:1].upper()}{text[1:]}" for k, text in enumerate(texts)],
        "answer": answer,
        "question_type": question_type,
        "subcategory": spec.subtask,
        "generator_name": category,
        "hallucination": hallucination,
        "capabilities": list(capabilities),
        "template": template,
    }


def write_jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)
