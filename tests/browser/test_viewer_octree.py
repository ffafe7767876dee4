"""The octree viewer file (HLPC v3) in a real browser: a scene larger than the viewer's point
budget is read node by node with range requests through the checked media view, and the viewer
never holds more points than its budget, whichever way the camera turns."""

import pytest

from .conftest import login, stack_shell

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(600)]

POINTS = 400_000
NODE_POINTS = 20_000
BUDGET = 100_000

# A scene whose viewer file is an octree of 400k points in nodes of 20k; prints the scene's id.
MAKE_SCENE = f"""
from demo.rooms import generate_room
from scenes.pointcloud import encode_octree
from benchmarks.models import Benchmark, Scene
from benchmarks.services import store_asset
scene = Scene.objects.filter(external_id="octree_room").first()
if scene is None:
    room = generate_room(1, points_per_room={POINTS})
    scene = Scene.objects.create(benchmark=Benchmark.objects.get(slug="hypo3d-demo"), external_id="octree_room")
    content = encode_octree(room.xyz, room.rgb, room.instance, node_points={NODE_POINTS})
    store_asset(scene, "viewer_points", "octree_room.hlpc", content, {{"format": "HLPC", "version": 3}})
print(scene.pk)
"""
# Mounts a viewer with a budget of BUDGET points over the page's file; moves its camera on request.
MOUNT = f"""async () => {{
  const {{ mountPointCloudViewer }} = await import("/static/vendor/hypolab/pointcloud-viewer.js");
  const data = JSON.parse(document.getElementById("scene-viewer-data").textContent);
  const element = document.createElement("div");
  element.id = "budget-viewer";
  element.style.cssText = "position: fixed; left: 0; top: 0; width: 640px; height: 480px; z-index: 10";
  document.body.append(element);
  window.budgetViewer = await mountPointCloudViewer(element, data.points_url, {{ ...data, pointBudget: {BUDGET} }});
}}"""
HELD = """() => {
  const element = document.getElementById("budget-viewer");
  return {count: Number(element.dataset.pointCount), held: Number(element.dataset.pointsDrawn),
          nodes: Number(element.dataset.nodes), budget: Number(element.dataset.pointBudget),
          ranges: performance.getEntriesByType("resource").filter((e) => e.name.includes("octree_room")).length};
}"""


def test_a_scene_over_the_budget_is_drawn_within_it_node_by_node(stack, new_page):
    if stack["mode"] != "services":
        pytest.skip("one stack is enough: the embedded one serves the same files")
    scene_id = stack_shell(stack, MAKE_SCENE)
    page = new_page()
    login(page, stack["base"], "reviewer")
    page.goto(f"{stack['base']}/scenes/{scene_id}/")
    page.wait_for_selector("#scene-pointcloud[data-complete=true]", timeout=60_000)
    page.evaluate(MOUNT)
    page.wait_for_selector("#budget-viewer[data-complete=true]", timeout=60_000)
    first = page.evaluate(HELD)
    assert first["count"] == POINTS and first["budget"] == BUDGET
    assert NODE_POINTS < first["held"] <= BUDGET and first["nodes"] > 1, first
    assert first["ranges"] > 2, "nodes came by range requests"

    # Close to a corner of the room: other nodes, finer ones, still within the budget.
    for step in range(3):
        page.evaluate("""(step) => {
          const { camera, controls } = window.budgetViewer;
          camera.position.lerp(controls.target, 0.5);
          camera.position.x += step * 0.3;
          controls.update();
        }""", step)
        page.wait_for_function("() => document.getElementById('budget-viewer').dataset.complete === 'false'",
                               timeout=10_000)
        page.wait_for_selector("#budget-viewer[data-complete=true]", timeout=60_000)
        held = page.evaluate(HELD)
        assert 0 < held["held"] <= BUDGET, held
    assert held["ranges"] > first["ranges"], "the closer views fetched more nodes"
    screen = page.locator("#scene-pointcloud").get_attribute("data-points-drawn")
    assert int(screen) <= POINTS
