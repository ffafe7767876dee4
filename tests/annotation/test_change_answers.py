"""Answers the geometry after a change derives (#47), one test per template on the synthetic room with its
turned world frame, with the degenerate cases: ties, a label naming several objects, no world frame, a
question of no supported shape (annotation/change_answers.py). No database."""

import pytest

from annotation.change_answers import derived_answer, draft_questions
from annotation.change_geometry import Box, apply_edit, parse_edit
from scoring.hypo3d import normalize_answer
from tests.annotation.geometry_rooms import CHAIR, LAMP, axes, boxes, move


def after(edit):
    stored, _ = parse_edit(edit)
    return apply_edit(boxes(), stored)


MOVED = after(move(CHAIR, -3.0, 2.7))  # the chair now stands to the bed's left (world frame)


def answer(question, state=MOVED, world=True, touched=(CHAIR,)):
    return derived_answer(question, state, axes() if world else None, touched)


def test_relative_direction_in_the_world_frame():
    assert answer("What is the direction of the chair relative to the bed?") == "left"
    assert answer("Where is the desk relative to the bed?") == "front right"
    assert answer("In which direction is the bed from the desk?") == "back left"
    assert normalize_answer("front right") == "front right"  # the words scoring compares
    assert answer("Is the desk to the left or right of the bed?") == "right"
    assert answer("Is the wardrobe in front of or behind the bed?") == "front"


def test_direction_needs_a_world_frame_and_one_object_per_label():
    assert answer("What is the direction of the chair relative to the bed?", world=False) is None
    # two chairs and the change touched neither: which chair is meant is not known
    assert answer("What is the direction of the chair relative to the bed?", touched=()) is None


def test_nearer_or_farther():
    assert answer("Is the lamp closer to the desk or the bed?") == "desk"
    assert answer("Is the lamp farther from the desk or the bed?") == "bed"
    assert answer("Is the bed nearer to the chair or the window?") == "chair"  # the moved chair: 1.4 m, not 2.5


def test_a_tie_in_distances_derives_nothing():
    between = [Box(1, "lamp", (0.0, 0.0, 0.2), (0.2, 0.2, 0.4)), Box(2, "desk", (1.0, 0.0, 0.4), (1.0, 0.5, 0.8)),
               Box(3, "bed", (0.0, -1.0, 0.3), (2.0, 1.5, 0.6))]
    assert derived_answer("Is the lamp closer to the desk or the bed?", between, None, ()) is None
    assert derived_answer("Which object is closest to the lamp?", between, None, ()) is None
    nudged = [between[0], between[1], Box(3, "bed", (0.0, -1.2, 0.3), (2.0, 1.5, 0.6))]
    assert derived_answer("Which object is closest to the lamp?", nudged, None, ()) == "desk"


def test_which_object_is_closest():
    assert answer("Which object is closest to the lamp?") == "desk"
    # from the moved chair (1.5, 3.9): the other chair is 1.3 m away, the bed 1.4 m; never the chair itself
    assert answer("What is the nearest object to the chair?") == "chair"
    assert answer("Which object is farthest from the lamp?") == "window"


def test_larger_or_smaller_by_volume():
    assert answer("Which is larger, the bed or the desk?") == "bed"
    assert answer("Which is smaller, the bed or the desk?") == "desk"
    assert answer("Is the lamp bigger than the desk?") == "no"
    assert answer("Is the desk bigger than the lamp?") == "yes"
    assert answer("Which is larger, the bed or the wardrobe?") is None  # 1.92 m^3 each: a tie


def test_a_scaled_object_is_compared_at_its_new_size():
    grown = after({"objects": [{"instance_id": LAMP, "scale": 4.0}]})  # 0.8 x 0.8 x 1.6 = 1.02 m^3
    assert derived_answer("Is the lamp bigger than the desk?", grown, axes(), (LAMP,)) == "yes"


def test_how_many_of_a_class_remain():
    gone = after({"objects": [{"instance_id": CHAIR, "removed": True}]})
    assert derived_answer("How many chairs are left in the room?", gone, axes(), ()) == "1"
    assert answer("How many chairs are there in the room?") == "2"
    assert normalize_answer("two") == "2"  # a written "two" agrees with it
    everything_gone = [b for b in gone if b.label != "chair"]
    assert derived_answer("How many chairs are there now?", everything_gone, None, ()) == "0"


def test_a_question_of_no_supported_shape_derives_nothing():
    assert answer("What colour is the bed?") is None
    assert answer("Can you sit on the desk?") is None


def test_drafted_questions_carry_their_derived_answers():
    drafts = draft_questions(MOVED, axes(), [CHAIR], ["lamp"])
    questions = {d["question"]: d["answer"] for d in drafts}
    assert questions["What is the direction of the chair relative to the bed?"] == "left"
    assert questions["Which object is closest to the chair?"] == "chair"
    assert questions["How many chairs are there in the room?"] == "2"
    assert questions["How many lamps are left in the room?"] == "1"
    for draft in drafts:
        assert derived_answer(draft["question"], MOVED, axes(), [CHAIR]) == draft["answer"]
        assert draft["question_type"][0] in ("Direction", "Scale", "Semantic")


@pytest.mark.parametrize("world", [True, False])
def test_drafts_without_a_world_frame_ask_no_direction(world):
    drafts = draft_questions(MOVED, axes() if world else None, [CHAIR])
    assert any("direction" in d["question"] for d in drafts) is world
