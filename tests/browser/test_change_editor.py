"""Editing a change in 3D (#47) in a real browser: a crowd annotator on the demo's Hypo3D benchmark writes a
movement, finds the object it names selected, drags its box in the top view next to the destination, sees it
move, undoes and drags again, reloads (the draft keeps the edit), is refused with the server's message in view
when the text names another destination, and submits; the stored change carries the translation."""

import json
import re

import pytest
from playwright.sync_api import expect

from .conftest import login, stack_json
from .test_crawl_roles import page_problems

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# Runs inside the stack, before each test's own plan: the objects a drag in the top view can move, each an
# object resting on the floor, alone under the sky (the top view's press finds it), of a label no other
# object has, with the object nearest to it (where it was moved from) and the server's check of an edit.
MOVABLE = """
import json
from annotation import change_edits, change_geometry as geo
from annotation import services as annotation_services
from benchmarks.models import Benchmark
from core.errors import DomainError

demo = Benchmark.objects.get(slug="hypo3d-demo")

def movable(scene, geometry):
    boxes = [b for b in geometry.boxes if b.label not in geo.STRUCTURE]
    counts = {}
    for b in boxes:
        counts[b.label] = counts.get(b.label, 0) + 1
    def alone(box, x, y):
        return not any(o is not box and geo.contains_xy(o, x, y, 0.05) for o in boxes)
    def checked(text, box, t):
        raw = {"objects": [{"instance_id": box.instance_id, "translation": t}], "added": []}
        try:
            change_edits.checked_edit(scene, text, "movement", raw, geometry)
            return None
        except DomainError as exc:
            return exc.message
    for box in sorted(boxes, key=lambda b: b.size[0] * b.size[1]):
        if box.label in ("door", "window") or counts[box.label] > 1 or abs(box.bottom - geometry.room.floor_z) > 0.05 or not alone(box, *box.center[:2]):
            continue
        origin = min((o for o in boxes if o.label != box.label),
                     key=lambda o: (o.center[0] - box.center[0]) ** 2 + (o.center[1] - box.center[1]) ** 2)
        yield box, origin, boxes, counts, alone, checked
"""

# Runs inside the stack: a movement campaign on one of the demo's scanned rooms, and a plan the server's own
# checks accept: an object resting on the floor, alone under the sky (the top view's press finds it), of a
# label no other object has, moved next to another object; and a destination the same move disagrees with.
SETUP = MOVABLE + """
plan = None
for scene in demo.scenes.order_by("pk"):
    geometry = change_edits.SceneGeometry(scene)
    if geometry.room is None:
        continue
    for box, origin, boxes, counts, alone, checked in movable(scene, geometry):
        for dest in boxes:
            if dest.label in (box.label, origin.label) or counts[dest.label] > 1:
                continue
            for ux, uy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                gap = max(dest.size[:2]) / 2 + max(box.size[:2]) / 2 + 0.25
                x, y = dest.center[0] + ux * gap, dest.center[1] + uy * gap
                if not alone(box, x, y):
                    continue
                t = [round(x - box.center[0], 3), round(y - box.center[1], 3), 0]
                text = f"The {box.label} has been moved from the {origin.label} over to the spot right next to the {dest.label}."
                if checked(text, box, t) is not None:
                    continue
                wrong = next((w for w in boxes if w.label not in (box.label, origin.label, dest.label)
                              and counts[w.label] == 1 and "nearest object" in (checked(
                                  text.replace("the " + dest.label + ".", "the " + w.label + "."), box, t) or "")), None)
                if wrong is not None:
                    plan = {"scene": scene.pk, "instance_id": box.instance_id, "label": box.label,
                            "center": list(box.center), "translation": t, "text": text,
                            "wrong": text.replace("the " + dest.label + ".", "the " + wrong.label + ".")}
                    break
            if plan: break
        if plan: break
    if plan: break
campaign = annotation_services.create_campaign(demo, "Edit in 3D", "movement", [demo.scenes.get(pk=plan["scene"])])
print(json.dumps({**plan, "campaign": campaign.pk}))
"""

STORED = """
import json
from benchmarks.models import ContextChange
change = ContextChange.objects.filter(raw_text=%r).order_by("-pk").first()
print(json.dumps({"edit": change.edit, "change": change.pk}))
"""


def edit_of(page) -> dict | None:
    return json.loads(page.locator("#change-editor").get_attribute("data-edit"))


def screen(page, point):
    return page.evaluate("(p) => document.getElementById('change-editor').screenOf(p)", point)


def drag(page, start, end):
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, steps=4)
    page.mouse.move(*end, steps=4)
    page.mouse.up()


def moved_by(page):
    (entry,) = edit_of(page)["objects"]
    return entry["translation"]


def test_annotator_drags_the_named_object_undoes_reloads_and_submits(stacks, new_page):
    stack = stacks("embedded")
    plan = stack_json(stack, SETUP)
    base, key = stack["base"], f"o{plan['instance_id']}"
    page = new_page()
    page.goto(f"{base}/crowd/campaigns/{plan['campaign']}/?PROLIFIC_PID=worker-3d&STUDY_ID=st-3d&SESSION_ID=se-3d")
    page.wait_for_url(re.compile(r".*/annotate/\d+/$"))
    page.wait_for_selector("#scene-pointcloud[data-loaded=true]")
    page.wait_for_selector("#change-editor[data-ready=true]")

    page.fill("#change-text", plan["text"])
    expect(page.locator("#change-editor")).to_have_attribute("data-selected", key)  # the object the text names
    page.click("#scene-pointcloud .hl-viewer-button:text-is('Top view')")
    expect(page.locator("#scene-pointcloud")).to_have_attribute("data-camera", "top")
    centre = plan["center"]
    target = [centre[0] + plan["translation"][0], centre[1] + plan["translation"][1], centre[2]]

    drag(page, screen(page, centre), screen(page, target))
    assert moved_by(page) == pytest.approx(plan["translation"], abs=0.04)
    expect(page.locator("#edit-summary")).to_contain_text(f"{plan['label']} {plan['instance_id']} moved")
    page.focus("#scene-pointcloud")
    page.keyboard.press("Control+z")
    assert edit_of(page) is None
    expect(page.locator("#edit-summary")).to_have_text("No edit yet.")
    drag(page, screen(page, centre), screen(page, target))
    translation = moved_by(page)
    assert translation == pytest.approx(plan["translation"], abs=0.04)
    assert page.locator("#change-editor").get_attribute("data-steps") == "1"  # a drag is one step
    assert page_problems(page, None) == []  # axe, code names, width: as the crawl checks every page

    # "editing…" lasts only until the next save (every 3 s), which the page checks above can outlast;
    # what counts is what the server kept, which the reload shows.
    page.wait_for_selector("#draft-status:has-text('draft saved')", timeout=15_000)
    page.reload()
    page.wait_for_selector("#change-editor[data-ready=true]")
    assert page.locator("#change-text").input_value() == plan["text"]
    assert moved_by(page) == pytest.approx(translation, abs=1e-6)

    page.fill("#change-text", plan["wrong"])
    page.click("#submit-change")
    error = page.locator("#change-error")
    expect(error).to_contain_text("nearest object to its new place is the")
    expect(error).to_be_in_viewport()
    assert error.get_attribute("role") == "alert"

    page.fill("#change-text", plan["text"])
    page.click("#submit-change")
    page.wait_for_url(re.compile(r".*/done/$"))
    stored = stack_json(stack, STORED % plan["text"])
    (entry,) = stored["edit"]["objects"]
    assert entry["instance_id"] == plan["instance_id"]
    assert entry["translation"][:2] == pytest.approx(translation[:2], abs=1e-3)

    # The reviewer's page: the stored edit drawn, a replaced one checked against the text by the server.
    reviewer = new_page()
    login(reviewer, base, "reviewer")
    reviewer.goto(f"{base}/review/changes/{stored['change']}/")
    reviewer.wait_for_selector("#change-editor[data-ready=true]")
    assert moved_by(reviewer) == pytest.approx(translation, abs=1e-3)
    expect(reviewer.locator("#change-editor")).to_have_attribute("data-selected", key)
    expect(reviewer.locator("#derived-answers-none")).to_be_visible()  # no questions yet
    assert page_problems(reviewer, None) == []
    reviewer.click("#change-editor [data-edit-action=remove]")
    assert edit_of(reviewer)["objects"] == [{"instance_id": plan["instance_id"], "removed": True}]
    reviewer.click("#save-geometry")
    expect(reviewer.locator("#geometry-error")).to_contain_text("must move an object")
    reviewer.click("#change-editor [data-edit-action=undo]")
    reviewer.click("#save-geometry")
    expect(reviewer.locator("#change-version")).to_have_text("2")


REMOVAL = """
import json
from benchmarks.models import ContextChange
change = ContextChange.objects.get(scene__benchmark__slug="hypo3d-finished",
                                   raw_text__startswith="The nightstand has been removed")
nightstand = change.scene.scene_objects.get(label="nightstand")
print(json.dumps({"change": change.pk, "instance_id": nightstand.instance_id, "version": change.version}))
"""


def test_reviewer_sees_derived_answers_flagged_and_saves_a_removal_from_the_keyboard(stacks, new_page):
    stack = stacks("embedded")
    found = stack_json(stack, REMOVAL)
    base = stack["base"]
    reviewer = new_page()
    login(reviewer, base, "reviewer")
    reviewer.goto(f"{base}/review/changes/{found['change']}/")
    reviewer.wait_for_selector("#change-editor[data-ready=true]")
    expect(reviewer.locator("#change-editor")).to_have_attribute("data-selected", f"o{found['instance_id']}")
    disagreeing = reviewer.locator("#derived-answers tbody tr[data-agrees=false]")
    expect(disagreeing.first).to_contain_text("disagrees")  # the written "wardrobe" beside the geometry's answer
    expect(disagreeing.first).to_be_visible()

    reviewer.focus("#scene-pointcloud")
    reviewer.keyboard.press("Delete")
    assert edit_of(reviewer)["objects"] == [{"instance_id": found["instance_id"], "removed": True}]
    expect(reviewer.locator("#edit-summary")).to_contain_text(f"nightstand {found['instance_id']} removed")
    reviewer.click("#save-geometry")
    expect(reviewer.locator("#change-version")).to_have_text(str(found["version"] + 1))
    reviewer.wait_for_selector("#change-editor[data-ready=true]")
    assert edit_of(reviewer)["objects"] == [{"instance_id": found["instance_id"], "removed": True}]
    expect(reviewer.locator("#derived-answers tbody tr").first).to_be_visible()
