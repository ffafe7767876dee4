"""The point-cloud viewer in a real browser: a 1,000,000-point scene loads level by level (timed
with the viewer's performance marks, as bench/viewer_load.py does), and on the demo scene the
still frame shows the points, and hover, click, the top view, colour by instance, red boxes and
the compass work."""

import io

import numpy as np
import pytest
from PIL import Image

from bench.viewer_load import SETUP, measure_viewer

from .conftest import login, stack_shell
from .test_review_history import MAKE_CHANGES

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(600)]

BACKGROUND = (0x1D, 0x1F, 0x24)


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def drawn_fraction(png: bytes) -> float:
    """The share of a screenshot's pixels that are not the viewer's background."""
    return float((np.abs(pixels(png) - BACKGROUND).sum(axis=-1) > 6).mean())


def test_a_million_points_load_level_by_level_within_six_bytes_per_point(stack, new_page):
    if stack["mode"] != "services":
        pytest.skip("one stack is enough for the timing; the embedded one serves the same files")
    change_id = stack_shell(stack, SETUP)
    page = new_page()
    login(page, stack["base"], "viewer-load", "viewer-load")

    result = measure_viewer(page, f"{stack['base']}/review/changes/{change_id}/")

    print("viewer load:", result)
    assert result["points"] == 1_000_000 and result["requests"] == 1
    assert 0 < result["first_frame_ms"] < result["full_frame_ms"]
    assert result["bytes_per_point"] <= 6
    assert result["orbit_fps"] > 0
    steps = result["steps"]  # where the bench says the first frame's time went, in order
    assert steps["data_asked"] <= steps["data_first_byte"] <= steps["data_received"]
    assert steps["page"] <= steps["decoded"] <= result["first_frame_ms"]
    viewer = page.locator("[data-pointcloud]")
    assert viewer.get_attribute("data-points-drawn") == "1000000"


def test_hover_click_top_view_instance_colours_red_boxes_and_compass(stack, new_page):
    first_change = stack_shell(stack, MAKE_CHANGES).split()[0]
    page = new_page()
    login(page, stack["base"], "reviewer")
    page.goto(f"{stack['base']}/review/changes/{first_change}/")
    page.wait_for_selector("#scene-pointcloud[data-complete=true]", timeout=60_000)
    assert page.locator("#scene-pointcloud .hl-viewer-compass").is_visible()

    # A second viewer mounted from the module, to reach its handle: red boxes and the camera.
    screen = page.evaluate("""async () => {
      const { mountPointCloudViewer } = await import("/static/vendor/hypolab/pointcloud-viewer.js");
      const data = JSON.parse(document.getElementById("scene-viewer-data").textContent);
      const bed = data.objects.find((o) => o.label === "bed");
      const element = document.createElement("div");
      element.id = "probe-viewer";
      element.style.cssText = "position: fixed; left: 0; top: 0; width: 640px; height: 480px; z-index: 10";
      document.body.append(element);
      const handle = await mountPointCloudViewer(element, data.points_url, { ...data, redBoxes: [bed.instance_id] });
      await handle.loaded;
      // A Vector3 of the bundle's own three.js (the page has no "three" module of its own).
      const p = handle.camera.position.clone().set(...bed.center).project(handle.camera);
      return { x: (p.x + 1) * 320, y: (1 - p.y) * 240, redBoxes: element.dataset.redBoxes };
    }""")
    probe = page.locator("#probe-viewer")
    assert screen["redBoxes"] == "1"
    # The still frame is splatted on the CPU and shown by WebGL as a texture: the room fills it.
    rgb_shot = probe.screenshot()
    assert drawn_fraction(rgb_shot) > 0.3

    page.mouse.move(screen["x"], screen["y"])
    page.wait_for_function("() => document.getElementById('probe-viewer').dataset.hoverLabel === 'bed'")
    assert probe.locator(".hl-topview-tooltip").text_content() == "bed"
    page.mouse.click(screen["x"], screen["y"])
    assert probe.get_attribute("data-selected-label") == "bed"

    probe.get_by_role("button", name="Colour by instance").click()
    assert probe.get_attribute("data-colour") == "instance"
    # The splat is made again in the instances' colours.
    assert (pixels(probe.screenshot()) != pixels(rgb_shot)).any(axis=-1).mean() > 0.2
    frames = int(probe.get_attribute("data-frames"))
    probe.get_by_role("button", name="Top view").click()
    assert probe.get_attribute("data-camera") == "top"
    page.wait_for_function(f"() => Number(document.getElementById('probe-viewer').dataset.frames) > {frames}")
    labels = probe.locator(".hl-viewer-compass span")
    assert sorted(labels.all_text_contents()) == ["back", "front", "left", "right"]
