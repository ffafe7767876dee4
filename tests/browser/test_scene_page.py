"""The scene page in a real browser: an imported (aligned) scan shown to a reviewer and an admin
with the 3D viewer, both top views (hover follows a turned object's footprint), the objects table
with yaw and the alignment record; an annotator gets 403."""

import json
import math
import time

import pytest

from .conftest import login, shot, stack_shell

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(600)]

# Imports the synthetic room of tests/benchmarks/test_scan_alignment.py (turned 20 degrees, tilted, with a
# sofa turned 30 degrees) into the demo benchmark once per stack; prints the scene's id.
IMPORT_ROOM = """
from scenes.services import import_scan
from benchmarks.models import Benchmark, Scene
from tests.benchmarks.test_scan_alignment import Scan
scene = Scene.objects.filter(external_id="scene0707_00").first()
if scene is None:
    scene = import_scan(Benchmark.objects.get(slug="hypo3d-demo"), "scene0707_00", caption="A synthetic room.",
                        world_frame="The cabinet was located at the left of the scene.",
                        **Scan(scene_id="scene0707_00").inputs())
print(scene.pk)
"""
VIEWER_READY = """
from benchmarks.models import AssetRole, Scene
print(Scene.objects.get(pk={pk}).assets.filter(role=AssetRole.TOPVIEW_PLAIN).exists())
"""


def test_reviewer_and_admin_see_any_scene_an_annotator_gets_403(stack, new_page):
    base = stack["base"]
    scene_id = stack_shell(stack, IMPORT_ROOM)
    deadline = time.monotonic() + 120
    while stack_shell(stack, VIEWER_READY.format(pk=scene_id)) != "True":  # process_scene on the worker
        assert time.monotonic() < deadline, "the viewer assets were not made"
        time.sleep(1)
    url = f"{base}/scenes/{scene_id}/"

    annotator = new_page()
    login(annotator, base, "annotator")
    assert annotator.goto(url).status == 403

    reviewer = new_page()
    login(reviewer, base, "reviewer")
    assert reviewer.goto(url).status == 200
    reviewer.wait_for_selector("#scene-pointcloud[data-complete=true]", timeout=60_000)
    reviewer.wait_for_selector("#scene-topview[data-ready=true]")
    assert reviewer.locator("#alignment-source").text_content() == "estimated"
    assert reviewer.locator("#alignment-matrix tr").count() == 4
    rows = reviewer.locator("#object-table tbody tr")
    assert rows.count() == 8
    sofa_yaw = float(reviewer.locator("#object-table tr:has(td:text-is('sofa')) td.yaw").text_content())
    assert abs(math.remainder(sofa_yaw - 30, 90)) < 1.5

    # Hover on the plain top view at the sofa's centroid, then just off its turned footprint's corner
    # (inside the box around it, outside the footprint): only the first names the sofa.
    data = json.loads(reviewer.locator("#scene-viewer-data").text_content())
    sofa = next(e for e in data["map"]["labels"] if e["label"] == "sofa")
    image = reviewer.locator("[data-topview] img").first.bounding_box()
    scale = image["width"] / data["map"]["width"], image["height"] / data["map"]["height"]

    def hover(x, y):
        reviewer.mouse.move(image["x"] + x * scale[0], image["y"] + y * scale[1])
        reviewer.wait_for_timeout(150)
        return reviewer.locator("[data-topview]").get_attribute("data-hover-label")

    assert hover(sofa["x"], sofa["y"]) == "sofa"
    assert reviewer.locator(".hl-topview-polygon").is_visible()
    left, top, right, bottom = sofa["box"]
    corner = min(((left + 2, top + 2), (right - 2, top + 2), (left + 2, bottom - 2), (right - 2, bottom - 2)),
                 key=lambda p: min((p[0] - c[0]) ** 2 + (p[1] - c[1]) ** 2 for c in sofa["corners"]) * -1)
    assert hover(*corner) != "sofa"
    reviewer.get_by_role("button", name="Show labels").click()
    reviewer.wait_for_selector("#scene-topview[data-mode=semantic][data-ready=true]")
    shot(reviewer, "scene-page-reviewer", stack)

    admin = new_page()
    login(admin, base, "admin")
    assert admin.goto(url).status == 200
    admin.wait_for_selector("#scene-pointcloud[data-complete=true]", timeout=60_000)
    assert admin.locator(f"a[href='/manage/scenes/{scene_id}/']").count() == 1
    assert admin.locator("#alignment-source").text_content() == "estimated"
