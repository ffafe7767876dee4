"""#28 in a real browser: a 3D item's clock starts when its point cloud appears, not when the item is
served. The point cloud is held back for 3 s; the item's deadline moves by the wait, the recorded
response time leaves the 3 s out and the load time is stored beside it. (An onset claimed outside
the bound after serving is refused: tests/humaneval/test_stimulus_onset.py.)"""

import re

import pytest

from .conftest import stack_json
from .test_humaneval_session import HYPO3D_SETUP

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(300)]

HOLD_MS = 3000

# the Hypo3D parity setup on a benchmark of its own: the world-frame test builds "Hypo3D parity" on the same stack
ONSET_SETUP = HYPO3D_SETUP.replace("Hypo3D parity", "Hypo3D onset").replace("hypo3d-parity", "hypo3d-onset")

POINTS_URL = """
import json
from benchmarks.models import Scene
scene = Scene.objects.get(benchmark__slug="hypo3d-onset", external_id="room-parity")
print(json.dumps({"url": scene.assets.get(role="viewer_points").file.url}))
"""

TIMES = """
import json
from humaneval.models import Response
r = Response.objects.get(session__study_id=STUDY)
print(json.dumps({"load_ms": r.load_ms, "latency_ms": r.latency_ms, "onset": r.onset_at is not None,
                  "served_to_answer_ms": int((r.answered_at - r.shown_at).total_seconds() * 1000),
                  "item_ms": r.session.study.seconds_per_item * 1000,
                  "deadline_ms": int((r.deadline - r.shown_at).total_seconds() * 1000)}))
"""


def test_a_3d_items_clock_starts_when_its_point_cloud_appears(stack, new_page):
    assert ONSET_SETUP.count("hypo3d-onset") == 1
    setup = stack_json(stack, ONSET_SETUP)
    points = stack_json(stack, POINTS_URL)["url"].split("?")[0]
    evaluator = new_page()
    held, released = [], []

    def hold(route):
        if not released and route.request.url.split("?")[0].endswith(points):
            held.append(route)
        else:
            route.continue_()

    evaluator.route("**/*", hold)
    evaluator.goto(f"{stack['base']}/crowd/studies/{setup['study']}/?PROLIFIC_PID=eval-onset&STUDY_ID=s&SESSION_ID=x")
    evaluator.wait_for_url(re.compile(r".*/eval/sessions/\d+/$"))
    evaluator.check("#agree")
    evaluator.click("#start-session")
    evaluator.wait_for_selector("#progress:has-text('Question 1 of 1')")
    for _ in range(100):
        if held:
            break
        evaluator.wait_for_timeout(100)
    assert held, "the point cloud was never asked for"
    evaluator.wait_for_timeout(HOLD_MS)
    assert evaluator.locator("#pointcloud").get_attribute("data-loaded") == "false"
    released.append(True)
    for route in held:
        route.continue_()
    evaluator.wait_for_selector("#pointcloud[data-loaded=true]", timeout=60_000)
    with evaluator.expect_response(lambda r: r.url.endswith("/answer/")):
        evaluator.wait_for_timeout(500)  # the onset report goes out once the first frame is drawn
        evaluator.fill("#answer", "chair")
        evaluator.click("#submit-answer")
    evaluator.wait_for_selector("#finished:not([hidden])", timeout=30_000)

    times = stack_json(stack, TIMES.replace("STUDY", str(setup["study"])))
    assert times["onset"] and times["load_ms"] >= HOLD_MS, times
    assert times["served_to_answer_ms"] >= HOLD_MS
    assert times["latency_ms"] <= times["served_to_answer_ms"] - HOLD_MS, times  # the wait is not in it
    assert times["deadline_ms"] >= times["item_ms"] + HOLD_MS, times  # the item's time limit runs from onset
