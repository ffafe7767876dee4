"""The demo's questions match their scenes (#46): each M3-Verse question's answer follows from its scene's
object lists (objects_before.json, objects_after.json, operations.json), its options name only objects the
videos can draw, each drawn as itself; and the movement guidelines' example names only objects every demo
room has."""

import json
import re

import pytest
from PIL import Image, ImageDraw

from demo import m3verse
from demo.m3verse import M3_SCENES, M3_TYPES, NO_OPTION, _m3_items, _m3_objects, _m3_states
from demo.management.commands.seed_demo import GUIDELINES
from demo.rooms import ROOMS

COLOUR_WORDS = {"red", "blue", "green", "yellow", "white", "orange", "purple", "gray", "black", "cyan"}


def object_lists(scene_id: str) -> tuple[list[dict], list[dict], list[dict]]:
    """The scene's files as the importer reads them."""
    before, after, log = _m3_states(scene_id)
    return (json.loads(json.dumps(_m3_objects(before))), json.loads(json.dumps(_m3_objects(after))),
            json.loads(json.dumps(log)))


def answer_from_lists(question: str, before: list[dict], after: list[dict], log: list[dict]) -> set[str]:
    """What the object lists say the answer is, in words (lower case); empty for a change that never happened."""
    ids_before, ids_after = {o["objectId"] for o in before}, {o["objectId"] for o in after}
    if question.startswith("Which objects newly appear"):
        return {o["objectType"].lower() for o in after if o["objectId"] not in ids_before}
    if question.startswith("Which object is no longer there"):
        return {o["objectType"].lower() for o in before if o["objectId"] not in ids_after}
    if question.startswith("Which object changed its position"):
        return {e["before"]["type"] for e in log if e["operation"] == "move"}
    if found := re.match(r"What colou?r (?:is|did) the (\w+)", question):
        was = next(o for o in before if o["objectType"].lower() == found.group(1))
        now = next(o for o in after if o["objectId"] == was["objectId"])
        return {now["color"]} if now["color"] != was["color"] else set()
    found = re.match(r"In the (first|second) video, which object is immediately to the (left|right) of the (\w+)\?",
                     question)
    assert found, question
    video, side, anchor = found.groups()
    row = sorted(before if video == "first" else after, key=lambda o: o["position"]["x"])
    at = next(k for k, o in enumerate(row) if o["objectType"].lower() == anchor)
    return {row[at + (1 if side == "right" else -1)]["objectType"].lower()}


@pytest.mark.parametrize("scene_id", list(M3_SCENES))
def test_each_m3verse_answer_follows_from_its_scenes_object_lists(scene_id):
    before, after, log = object_lists(scene_id)
    drawn = {o["objectType"].lower() for o in before + after}
    for item in _m3_items(scene_id):
        options = {option[3:].lower(): option[0] for option in item["options"]}
        expected = answer_from_lists(item["question"], before, after, log)
        letters = sorted(options[word] for word in expected) if expected else [options[NO_OPTION.lower()]]
        assert item["answer"] == letters, (item["question_id"], item["options"])
        for word in set(options) - {NO_OPTION.lower()} - COLOUR_WORDS:
            assert word in M3_TYPES, (item["question_id"], word)  # a thing the videos can draw
        # a question about one object asks about one the videos show
        named = re.findall(r"\b(" + "|".join(M3_TYPES) + r")\b", item["question"])
        assert set(named) <= drawn, (item["question_id"], named)


def glyph_pixels(kind: str) -> bytes:
    image = Image.new("RGB", (60, 50), (222, 214, 196))
    m3verse._glyph(ImageDraw.Draw(image), kind, "blue", 30, 45)
    return image.tobytes()


def test_every_object_type_is_drawn_as_itself():
    """No two types share a drawing and none falls back to another's (the book once looked like a bottle)."""
    drawings = {kind: glyph_pixels(kind) for kind in M3_TYPES}
    assert len(set(drawings.values())) == len(M3_TYPES)
    with pytest.raises(ValueError, match="no glyph"):
        glyph_pixels("bottle")


def test_the_movement_guidelines_example_names_objects_every_demo_room_has():
    example = next(line for line in GUIDELINES.splitlines() if line.startswith("- Good:"))
    every_label = {f.label for room in ROOMS for f in room.furniture}
    named = {label for label in every_label if re.search(rf"\b{label}\b", example)}
    assert named, example
    for room in ROOMS:
        assert named <= {f.label for f in room.furniture}, (room.room_type, named)
