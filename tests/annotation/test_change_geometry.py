"""The words of a change against its geometry (#47), on a synthetic room with a turned world frame: each check
passes when text and edit agree and fails with a message naming what disagrees (annotation/change_checks.py),
and the edit's shape is refused naming the field at fault (annotation/change_geometry.py). No database."""

import math

import pytest

from annotation.change_checks import check_edit, destination
from annotation.change_geometry import (
    Box,
    EditError,
    apply_edit,
    direction,
    edit_from_world,
    edit_in_world,
    overlap_fraction,
    parse_edit,
)
from tests.annotation.geometry_rooms import CHAIR, DESK, LAMP, WARDROBE, axes, boxes, move, room

LEFT_OF_BED = "The chair has been moved from the desk to the left of the bed."


def problems(text, change_type, edit, world=True, named=None):
    stored, _ = parse_edit(edit)
    return check_edit(text, change_type, boxes(), stored, room(), axes() if world else None, named)


def test_the_world_frame_puts_the_anchor_on_its_side():
    frame = axes()
    assert frame.front == pytest.approx((1.0, 0.0)) and frame.right == pytest.approx((0.0, -1.0))
    bed, desk = boxes()[1], boxes()[4]
    assert direction(frame, desk, bed) == "front right"  # desk is +x (front) and -y (right) of the bed
    assert direction(frame, bed, desk) == "back left"


def test_a_movement_to_the_left_of_the_bed_in_the_world_frame_passes():
    assert problems(LEFT_OF_BED, "movement", move(CHAIR, -3.0, 2.7), named="chair") == []


def test_a_movement_said_left_but_going_right_is_refused_naming_the_disagreement():
    assert problems(LEFT_OF_BED, "movement", move(CHAIR, -3.0, -0.1), named="chair") == [
        "The text puts the chair left of the bed, but the move puts it to the bed's right (world frame).",
    ]


def test_left_and_right_are_not_judged_without_a_world_frame():
    assert problems(LEFT_OF_BED, "movement", move(CHAIR, -3.0, -0.1), world=False, named="chair") == []


def test_the_moved_object_must_be_the_one_the_text_names():
    found = problems(LEFT_OF_BED, "movement", move(DESK, -3.0, 2.6), named="chair")
    assert found[0] == "The text moves the chair, but the edit moves the desk."


def test_a_chair_moved_into_the_wardrobe_is_refused():
    found = problems("The chair has been moved from the desk to the wardrobe.", "movement",
                     move(CHAIR, 1.1, 3.0), named="chair")
    assert len(found) == 1 and found[0].startswith("The chair's new box overlaps the wardrobe (94%")


def test_a_chair_next_to_the_wardrobe_passes():
    assert problems("The chair has been moved from the desk to the wardrobe.", "movement",
                    move(CHAIR, 0.5, 3.0), named="chair") == []


def test_the_destination_must_be_the_nearest_object():
    found = problems("The chair has been moved from the desk to the window.", "movement",
                     move(CHAIR, -2.5, 0.3), named="chair")
    assert found == ["The text moves the chair to the window, but the nearest object to its new place is the "
                     "bed (0.2 m; the window is 3.4 m away)."]


def test_a_floating_lamp_is_refused_and_one_on_the_bed_passes():
    up_high = problems("The lamp has been moved from the desk to the bed.", "movement",
                       move(LAMP, -2.7, 2.1, 1.5 - 0.75), named="lamp")
    assert up_high == ["The lamp floats: its bottom is 1.50 m above the floor and it rests on no object."]
    assert problems("The lamp has been moved from the desk onto the bed.", "movement",
                    move(LAMP, -2.7, 2.1, 0.6 - 0.75), named="lamp") == []


def test_on_checks_the_height_of_the_support():
    found = problems("The lamp has been moved from the desk onto the bed.", "movement",
                     move(LAMP, -2.7, 2.1, -0.75), named="lamp")
    assert "The text puts the lamp on the bed, but its bottom is 0.60 m below the bed's top." in found


def test_an_object_sinking_into_the_floor_is_refused():
    found = problems("The chair has been moved from the desk to the wardrobe.", "movement",
                     move(CHAIR, 0.5, 3.0, -0.4), named="chair")
    assert found == ["The chair sinks 0.40 m into the floor."]


def test_an_object_that_hung_before_may_hang_after():
    # the window hangs on the wall: moving it along the wall is not "floating"
    assert problems("The window has been moved from the bed to the wardrobe.", "movement",
                    move(7, 1.5, -0.0), named="window") == []


def test_an_object_taken_out_of_the_room_is_refused_and_one_against_the_wall_passes():
    out = problems("The chair has been moved from the desk to the wardrobe.", "movement",
                   move(CHAIR, 3.0, 3.0), named="chair")
    assert "The edit takes the chair 1.75 m outside the room (past its walls or ceiling)." in out
    against = problems("The chair has been moved from the desk to the wardrobe.", "movement",
                       move(CHAIR, 1.25, 1.6), named="chair")  # its footprint touches the wall at x = 6
    assert against == []


def test_bigger_and_smaller_must_agree_with_the_scale():
    shrunk = problems("The lamp on the desk has become bigger.", "attribute",
                      {"objects": [{"instance_id": LAMP, "scale": 0.5}]}, named="lamp")
    assert shrunk == ["The text says the lamp got bigger, but the edit shrinks its volume (x0.12)."]
    assert problems("The lamp on the desk has become bigger.", "attribute",
                    {"objects": [{"instance_id": LAMP, "scale": 1.5}]}, named="lamp") == []
    grown = problems("The lamp on the desk has become smaller.", "attribute",
                     {"objects": [{"instance_id": LAMP, "scale": [1.0, 1.0, 2.0]}]}, named="lamp")
    assert grown == ["The text says the lamp got smaller, but the edit enlarges its volume (x2.00)."]
    unsaid = problems("The lamp on the desk has been painted red.", "attribute",
                      {"objects": [{"instance_id": LAMP, "scale": 2.0}]}, named="lamp")
    assert unsaid[0].startswith("The edit makes the lamp larger (volume x8.00), but the text does not say")


def test_scaling_keeps_the_bottom_on_its_support():
    stored, _ = parse_edit({"objects": [{"instance_id": LAMP, "scale": 2.0}]})
    lamp = next(b for b in apply_edit(boxes(), stored) if b.instance_id == LAMP)
    assert lamp.bottom == pytest.approx(0.75) and lamp.size == pytest.approx((0.4, 0.4, 0.8))


def test_removal_addition_and_replacement_name_what_they_change():
    assert problems("The lamp on the desk has been removed.", "removal",
                    {"objects": [{"instance_id": LAMP, "removed": True}]}, named="lamp") == []
    assert problems("The lamp on the desk has been removed.", "removal",
                    {"objects": [{"instance_id": DESK, "removed": True}]}, named="lamp") == [
        "The text removes the lamp, but the edit removes the desk."]
    assert problems("A lamp has been added on the bed.", "addition",
                    {"added": [{"label": "lamp", "center": [1.5, 2.5, 0.8], "size": [0.2, 0.2, 0.4]}]}) == []
    assert problems("The desk has been replaced with a sofa.", "replacement", {
        "objects": [{"instance_id": DESK, "removed": True}],
        "added": [{"label": "bed", "center": [4.5, 0.5, 0.4], "size": [1.2, 0.6, 0.8]}]}, named="desk") == [
        "The edit adds a bed, but the text does not name it."]
    assert problems("The lamp on the desk has been removed.", "removal", move(LAMP, 0.1), named="lamp") == [
        "A removal edit must remove an object, but this one removes none: mark the removed object removed."]


def test_the_destination_is_read_after_the_origin():
    labels = {"desk", "bed", "window", "chair"}
    assert destination(labels, LEFT_OF_BED) == ("left", "bed")
    assert destination(labels, "The chair that used to stand by the desk is now in front of the window.") == (
        "front", "window")
    assert destination(labels, "The chair has been moved from the desk to the window next to the bed.") == (
        "near", "window")
    assert destination(labels, "The chair has been moved away.") is None


def test_oriented_boxes_overlap_by_their_turned_footprints():
    a = Box(1, "a", (0.0, 0.0, 0.5), (2.0, 0.2, 1.0), 0.0)
    b = Box(2, "b", (0.0, 0.0, 0.5), (2.0, 0.2, 1.0), math.pi / 2)  # a cross: 0.2 x 0.2 shared
    assert overlap_fraction(a, b) == pytest.approx(0.04 / 0.4)
    c = Box(3, "c", (1.5, 1.5, 0.5), (2.0, 0.2, 1.0), math.pi / 4)
    assert overlap_fraction(a, c) == 0.0
    on_top = Box(4, "d", (0.0, 0.0, 1.02), (0.5, 0.2, 0.1), 0.0)  # resting 2 cm into it: contact
    assert overlap_fraction(a, on_top, contact=0.05) == 0.0


def test_the_edit_is_stored_in_the_world_frame_and_read_back_from_it():
    stored, _ = parse_edit({"objects": [{"instance_id": CHAIR, "translation": [0.0, 1.0, 0.0]}],
                            "added": [{"label": "lamp", "center": [3.0, 3.5, 0.2], "size": [0.2, 0.2, 0.4]}]})
    world = edit_in_world(stored, axes())
    assert world["objects"][0]["translation"] == pytest.approx([-1.0, 0.0, 0.0])  # +y is world left
    assert world["added"][0]["center"] == pytest.approx([-1.0, 0.0, 0.2])
    back = edit_from_world(world, axes())
    assert back["objects"][0]["translation"] == pytest.approx([0.0, 1.0, 0.0])
    assert back["added"][0]["center"] == pytest.approx([3.0, 3.5, 0.2])
    assert back["added"][0]["yaw"] == pytest.approx(0.0, abs=1e-5)


@pytest.mark.parametrize(("edit", "field"), [
    ([], "edit"),
    ({"objects": [{"instance_id": CHAIR, "scale": -1}]}, "edit.objects[0].scale"),
    ({"objects": [{"instance_id": "3", "translation": [1, 0, 0]}]}, "edit.objects[0].instance_id"),
    ({"objects": [{"instance_id": CHAIR, "translation": [1, 0]}]}, "edit.objects[0].translation"),
    ({"objects": [{"instance_id": CHAIR, "removed": True, "rotation": 1.0}]}, "edit.objects[0]"),
    ({"objects": [{"instance_id": CHAIR}]}, "edit.objects[0]"),
    ({"objects": [{"instance_id": WARDROBE, "spin": 1}]}, "edit.objects[0].spin"),
    ({"added": [{"label": "", "center": [0, 0, 0], "size": [1, 1, 1]}]}, "edit.added[0].label"),
    ({"added": [{"label": "lamp", "center": [0, 0, 0]}]}, "edit.added[0].size"),
    ({"objects": [], "frame": "room"}, "edit.frame"),
    ({"objects": []}, "edit"),
])
def test_a_malformed_edit_names_the_field_at_fault(edit, field):
    with pytest.raises(EditError) as refused:
        parse_edit(edit)
    assert refused.value.field == field and refused.value.message


def test_in_and_under_allow_the_container_and_check_the_footprint():
    # the lamp put inside the wardrobe (at 1 m, resting on nothing but held by it) overlaps it by intent
    inside = problems("The lamp has been moved from the desk into the wardrobe.", "movement",
                      move(LAMP, 1.4, 3.8, 0.0), named="lamp")
    assert inside == ["The lamp floats: its bottom is 0.75 m above the floor and it rests on no object."]
    assert problems("The lamp has been moved from the desk into the wardrobe.", "movement",
                    move(LAMP, 1.4, 3.8, -0.75), named="lamp") == []
    beside = problems("The lamp has been moved from the desk into the wardrobe.", "movement",
                      move(LAMP, 0.6, 3.8, -0.75), named="lamp")
    assert beside[0].startswith("The text puts the lamp in the wardrobe, but the move leaves it beside it")
