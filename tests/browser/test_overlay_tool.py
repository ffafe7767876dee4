"""The overlay tool as an author uses it: on a CausalSpatial choice item's image, drag a motion arrow,
a start box and a bounding box, find them again after a reload (the draft keeps them), submit; the item
stores them normalised to the image, and the image a model is sent has them printed in."""

import json
import re
from pathlib import Path

import pytest

from tests.needs import need

from .conftest import CHROMIUM, login, stack_json

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]  # the first test of a run starts the stack

SETUP = """
import io, json
from PIL import Image
from django.contrib.auth import get_user_model
from annotation import services
from benchmarks.services import store_asset
from core import roles
from tests.factories import BenchmarkFactory, SceneFactory

benchmark = BenchmarkFactory(family="causalspatial", name="Overlay tool", slug="overlay-tool")
scene = SceneFactory(benchmark=benchmark, object_labels=[])
out = io.BytesIO()
Image.new("RGB", (400, 240), (235, 235, 235)).save(out, format="PNG")
store_asset(scene, "image", "table.png", out.getvalue(), {})
campaign = services.create_campaign(benchmark, "Arrows", "movement", [scene], kind="choice_image",
                                    question_types={"collision": ["Collision"]})
author = get_user_model().objects.create_user("overlay-author", password="hypolab-demo")
roles.grant_role(author, roles.ANNOTATOR)
print(json.dumps({"assignment": services.lease_assignment(campaign, author).pk}))
"""

WRITTEN = """
import json
from benchmarks.models import Item
from modeleval.models import ModelSpec
from modeleval.prompting.prompts import build_request, latest_template
from PIL import Image
import io

item = Item.objects.get(benchmark__slug="overlay-tool")
model = ModelSpec(name="sees", adapter=ModelSpec.Adapter.RANDOM_BASELINE, modality="image")
[sent] = build_request(model, latest_template("causalspatial"), item).images
with Image.open(io.BytesIO(sent)) as image:
    middle = image.convert("RGB").getpixel((200, 120))
print(json.dumps({"overlays": item.overlays, "choices": item.choices, "arrow_pixel": list(middle), "tags": item.tags}))
"""


def drag(page, area, start, end):
    """Drags over the drawing area from `start` to `end` (fractions of its width and height)."""
    box = area.bounding_box()
    page.mouse.move(box["x"] + start[0] * box["width"], box["y"] + start[1] * box["height"])
    page.mouse.down()
    page.mouse.move(box["x"] + end[0] * box["width"], box["y"] + end[1] * box["height"], steps=6)
    page.mouse.up()


def test_author_draws_an_arrow_a_start_box_and_a_bounding_box_and_the_model_sees_them(stacks, new_page):
    need(Path(CHROMIUM).exists(), CHROMIUM)
    stack = stacks("embedded")
    base = stack["base"]
    assignment = stack_json(stack, SETUP)["assignment"]
    page = new_page()
    login(page, base, "overlay-author")
    page.goto(f"{base}/annotate/{assignment}/")
    area = page.locator("#media svg[data-image='0']")
    page.wait_for_function("document.querySelector(\"#media svg[data-image='0']\").getAttribute('viewBox')")

    drag(page, area, (0.2, 0.5), (0.8, 0.5))  # the motion arrow, left to right
    page.check("#overlay-type-start_box")
    drag(page, area, (0.05, 0.1), (0.25, 0.4))
    page.check("#overlay-type-box")
    drag(page, area, (0.6, 0.6), (0.9, 0.9))
    assert page.locator("#overlay-list li").all_text_contents() == [
        "Motion arrow on image 1", "Start box on image 1", "Bounding box on image 1"]
    assert area.locator("line").count() == 1 and area.locator("rect").count() == 2

    page.fill("#question", "If the ball rolls along the arrow, will it hit the vase?")
    choices = page.locator("#choices .choice")
    choices.nth(0).fill("Yes")
    choices.nth(1).fill("No")
    page.locator("#choices .correct").nth(0).check()
    page.check("#not-sure")
    # the family's tags, picked from lists; the reload below waits for the draft save that carries them
    # (an earlier save may already say "draft saved")
    # (the tags themselves: the draft's question_type may say "collision" before the task is picked)
    with page.expect_request(lambda r: r.method == "PUT" and r.post_data and json.loads(r.post_data).get(
            "content", {}).get("tags") == {"level": "L1", "task": "collision"}, timeout=30_000) as saved:
        page.select_option("#tag-level", "L1")
        page.select_option("#tag-task", "collision")
    saved.value.response()
    page.reload()  # the marks are in the draft
    page.wait_for_function("document.querySelector(\"#media svg[data-image='0']\").getAttribute('viewBox')")
    assert page.locator("#overlay-list li").count() == 3
    page.click("#overlay-undo")  # the last mark goes; draw it again
    assert page.locator("#overlay-list li").count() == 2
    page.check("#overlay-type-box")
    drag(page, area, (0.6, 0.6), (0.9, 0.9))
    page.click("#submit-task")
    try:
        page.wait_for_url(re.compile(r".*/done/$"), timeout=60_000)
    except Exception:
        raise AssertionError(f"not submitted: {page.locator('#task-error').text_content()!r}") from None

    written = stack_json(stack, WRITTEN)
    assert written["choices"] == ["Yes", "No", "Not sure"]
    assert (written["tags"]["level"], written["tags"]["task"]) == ("L1", "collision")  # from the tag picker
    arrow, start_box, box = written["overlays"]
    assert (arrow["type"], start_box["type"], box["type"]) == ("arrow", "start_box", "box")
    assert arrow["from"] == pytest.approx([0.2, 0.5], abs=0.02) and arrow["to"] == pytest.approx([0.8, 0.5], abs=0.02)
    assert [start_box[k] for k in ("x", "y", "width", "height")] == pytest.approx([0.05, 0.1, 0.2, 0.3], abs=0.02)
    assert [box[k] for k in ("x", "y", "width", "height")] == pytest.approx([0.6, 0.6, 0.3, 0.3], abs=0.02)
    assert (arrow["colour"], start_box["colour"], box["colour"]) == ("#ff3b30", "#34c759", "#ff3b30")
    assert written["arrow_pixel"] == [255, 59, 48]  # the model's image, on the arrow
