"""The reviewer toggles before/after: on an approved removal with its edit in 3D, the review page offers the
scene after the change (its after-state, built from the scan), shows it in a viewer of its own with fewer
points than the scene's, and goes back to the scene before it; a change whose after-state is not made yet
offers to make it."""

import pytest
from playwright.sync_api import expect

from .conftest import login, stack_json
from .test_crawl_roles import page_problems

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# Runs inside the stack: a removal of an object of a unique label on a scanned demo room, its edit checked
# against its text as a crowd write is, approved, and its after-state built; and the same change's twin
# whose after-state is not made.
SETUP = """
import json
from annotation import change_edits, change_geometry as geo
from benchmarks.models import Benchmark, ContextChange
from scenes.tasks import make_after_state

made = {}
for scene in Benchmark.objects.get(slug="hypo3d-finished").scenes.order_by("pk"):
    geometry = change_edits.SceneGeometry(scene)
    labels = [b.label for b in geometry.boxes]
    box = next((b for b in geometry.boxes if b.label not in geo.STRUCTURE and labels.count(b.label) == 1), None)
    if geometry.room is None or box is None:
        continue
    text = f"The {box.label} has been removed from the room."
    edit = change_edits.checked_edit(scene, text, "removal",
                                     {"objects": [{"instance_id": box.instance_id, "removed": True}], "added": []})
    for key in ("built", "not_built"):
        change = ContextChange.objects.create(scene=scene, change_type="removal", raw_text=text, status="approved",
                                              edit=edit)
        made[key] = change.pk
    make_after_state(made["built"])
    break
print(json.dumps(made))
"""


def test_the_reviewer_toggles_the_scene_before_and_after_the_change(stacks, new_page):
    stack = stacks("embedded")
    made = stack_json(stack, SETUP)
    base = stack["base"]
    page = new_page()
    login(page, base, "reviewer")
    page.goto(f"{base}/review/changes/{made['built']}/")
    expect(page.locator("#scene-pointcloud")).to_have_attribute("data-loaded", "true")
    before_points = int(page.locator("#scene-pointcloud").get_attribute("data-point-count"))

    toggle = page.locator("#toggle-after-state")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    toggle.click()
    expect(page.locator("#after-state-viewer")).to_be_visible()
    expect(page.locator("#scene-pointcloud")).to_be_hidden()
    expect(page.locator("#after-pointcloud")).to_have_attribute("data-loaded", "true")
    expect(page.locator("#after-topview")).to_have_attribute("data-ready", "true")
    after_points = int(page.locator("#after-pointcloud").get_attribute("data-point-count"))
    assert 0 < after_points < before_points  # the removed object's points are gone
    expect(toggle).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#after-state-shown")).to_have_text("Showing the scene after the change.")
    assert page_problems(page, 200) == []

    toggle.click()
    expect(page.locator("#scene-pointcloud")).to_be_visible()
    expect(page.locator("#after-state-viewer")).to_be_hidden()
    expect(toggle).to_have_text("Show the scene after the change")

    page.goto(f"{base}/review/changes/{made['not_built']}/")
    expect(page.locator("#toggle-after-state")).to_have_count(0)
    page.click("#make-after-state")
    expect(page.locator("#after-state-made")).to_contain_text("Being made")
    expect(page.locator("#after-state-error")).to_have_text("")
