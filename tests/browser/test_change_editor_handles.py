"""Turning and resizing a change's box with the mouse (#47) in a real browser: the annotator's named object
selected, its turn handle (the ring beyond its front edge) dragged a quarter turn about the box's centre
gives the edit a rotation of about 90°, its scale handle (the knob at a corner) dragged half as far again
from the centre a scale of 1.5; each drag is one step, and undo takes back the resize alone."""

import math
import re

import pytest
from playwright.sync_api import expect

from .conftest import stack_json
from .test_change_editor import SETUP, drag, edit_of, screen

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def handle(page, kind):
    """The handle's place on the page and in the scene, and the centre it turns and resizes about."""
    return page.evaluate("""(kind) => {
        const root = document.getElementById('change-editor');
        return {screen: root.handleOf(kind), point: root.handlePointOf(kind), centre: root.handlePointOf('centre')};
    }""", kind)


def about(centre, point, turn=0.0, ratio=1.0):
    """`point` turned by `turn` radians and its distance scaled by `ratio` about `centre` (on its plane)."""
    dx, dy = point[0] - centre[0], point[1] - centre[1]
    c, s = math.cos(turn), math.sin(turn)
    return [centre[0] + ratio * (c * dx - s * dy), centre[1] + ratio * (s * dx + c * dy), point[2]]


def entry_of(page):
    (entry,) = edit_of(page)["objects"]
    return entry


def test_annotator_turns_and_resizes_the_box_by_its_handles_and_undoes_one(stacks, new_page):
    stack = stacks("embedded")
    plan = stack_json(stack, SETUP)
    base, key = stack["base"], f"o{plan['instance_id']}"
    page = new_page()
    page.goto(f"{base}/crowd/campaigns/{plan['campaign']}/?PROLIFIC_PID=worker-handles&STUDY_ID=st-h&SESSION_ID=se-h")
    page.wait_for_url(re.compile(r".*/annotate/\d+/$"))
    page.wait_for_selector("#scene-pointcloud[data-loaded=true]")
    page.wait_for_selector("#change-editor[data-ready=true]")

    page.fill("#change-text", plan["text"])
    expect(page.locator("#change-editor")).to_have_attribute("data-selected", key)
    page.click("#scene-pointcloud .hl-viewer-button:text-is('Top view')")
    expect(page.locator("#scene-pointcloud")).to_have_attribute("data-camera", "top")

    turn = handle(page, "turn")
    assert turn["screen"] is not None  # the selected box shows its handles
    assert turn["centre"][:2] == pytest.approx(plan["center"][:2], abs=1e-6)
    drag(page, turn["screen"], screen(page, about(turn["centre"], turn["point"], turn=math.pi / 2)))
    entry = entry_of(page)
    assert entry["instance_id"] == plan["instance_id"]
    assert entry["rotation"] == pytest.approx(math.pi / 2, abs=0.05)
    assert "translation" not in entry and "scale" not in entry  # a handle turns the box in place
    expect(page.locator("#edit-summary")).to_contain_text(re.compile(rf"{plan['label']} {plan['instance_id']} turned (89|90|91)°"))
    assert page.locator("#change-editor").get_attribute("data-steps") == "1"  # a drag is one step
    rotation = entry["rotation"]

    scale = handle(page, "scale")  # the handles followed the turned box
    assert about(scale["centre"], turn["point"], turn=rotation)[:2] == pytest.approx(handle(page, "turn")["point"][:2], abs=1e-3)
    drag(page, scale["screen"], screen(page, about(scale["centre"], scale["point"], ratio=1.5)))
    entry = entry_of(page)
    assert entry["scale"] == pytest.approx(1.5, abs=0.03)
    assert entry["rotation"] == pytest.approx(rotation, abs=1e-6)
    expect(page.locator("#edit-summary")).to_contain_text("scaled ×1.5")
    assert page.locator("#change-editor").get_attribute("data-steps") == "2"

    page.focus("#scene-pointcloud")
    page.keyboard.press("Control+z")  # the resize goes, the turn stays
    entry = entry_of(page)
    assert "scale" not in entry
    assert entry["rotation"] == pytest.approx(rotation, abs=1e-6)
    assert page.locator("#change-editor").get_attribute("data-steps") == "1"
    expect(page.locator("#change-editor")).to_have_attribute("data-selected", key)
