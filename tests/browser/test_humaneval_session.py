"""Issue 7 in a real browser: an evaluator from a crowd link practises with feedback, then takes a
timed session on a 3D item, an image multiple-choice item and a paired-video item, reloads mid-item
and resumes with the clock running, lets one item time out, and leaves with a completion code; the
admin's study results page then shows the human row. A Hypo3D evaluator sees what models see: the
world-frame sentence of the prompt and the compass of the world frame on the point cloud."""

import json
import re
import shutil
import time

import pytest

from tests.clips import make_clip
from tests.needs import need

from .conftest import login, shot, stack_json, stack_shell

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(420)]

SECONDS_PER_ITEM = 45

# Runs inside the live stack (manage.py shell): an M3-Verse benchmark whose session mixes a 3D item
# (the demo scene's point cloud), an image item with an arrow overlay and a before/after video pair.
SETUP = """
import io, json
from PIL import Image, ImageDraw
from benchmarks.models import Benchmark, Item, Scene
from benchmarks.services import store_asset
from humaneval.services.design import StudyDesign, create_study

paths = json.loads(open(PATHS).read())
demo_scene = Scene.objects.filter(benchmark__slug="hypo3d-demo").first()
bench = Benchmark.objects.create(name="Mixed stimuli", slug="mixed-stimuli", family="m3verse")
room = Scene.objects.create(benchmark=bench, external_id="room-3d", caption=demo_scene.caption)
for a in demo_scene.assets.all():  # files of its own: a scene's files are served to its evaluators
    store_asset(room, a.role, a.file.name.rsplit("/", 1)[-1], a.file.open("rb").read(), a.meta)
picture = Scene.objects.create(benchmark=bench, external_id="picture")
png = io.BytesIO()
image = Image.new("RGB", (320, 200), (235, 235, 235))
ImageDraw.Draw(image).rectangle((40, 60, 120, 150), fill=(200, 30, 30))
ImageDraw.Draw(image).ellipse((200, 60, 280, 140), fill=(30, 60, 200))
image.save(png, format="PNG")
store_asset(picture, "image", "stimulus.png", png.getvalue(),
            {"overlays": [{"type": "arrow", "from": [80, 170], "to": [230, 110], "colour": "#111", "label": "1"}]})
clips = Scene.objects.create(benchmark=bench, external_id="clips")
for which in ("before", "after"):
    store_asset(clips, "video", f"{which}.mp4", open(paths[which], "rb").read(), {"which": which})
tags = {"state_type": "inter-states", "capabilities": ["spatial understanding"]}
def item(scene, question, choices, answers, fmt="single"):
    return Item.objects.create(benchmark=bench, scene=scene, question=question, answer_format=fmt,
                               choices=choices, answers=answers, tags=tags, status="approved")
scored = [
    item(room, "Which kind of room is this scan?", ["a bedroom", "a garden", "a car park"], ["A"]),
    item(picture, "What does the arrow point at?", ["the red square", "the blue circle"], ["B"]),
    item(clips, "What changed between the two videos?", ["the colours", "nothing", "the pattern moved"],
         ["A", "C"], fmt="multi"),
]
item(picture, "Which shape is red?", ["the square", "the circle"], ["A"])  # drawn for familiarisation
design = StudyDesign("Mixed baseline", [i.pk for i in scored], SECONDS, 1800, familiarisation_count=1, seed=1,
                     shuffle_choices=True)
study = create_study(bench, design, None)
print(json.dumps({"study": study.pk, "items": [i.pk for i in scored]}))
"""


# A Hypo3D benchmark on a copy of the demo scene (its files, objects and world frame), one item with a
# refined context change, and a study on it.
HYPO3D_SETUP = """
import json
from benchmarks.models import Benchmark, ContextChange, Item, Scene, WorldFrame
from benchmarks.services import store_asset
from humaneval.services.design import StudyDesign, create_study

demo_scene = Scene.objects.filter(benchmark__slug="hypo3d-demo").first()
bench = Benchmark.objects.create(name="Hypo3D parity", slug="hypo3d-parity", family="hypo3d")
room = Scene.objects.create(benchmark=bench, external_id="room-parity", caption=demo_scene.caption)
for a in demo_scene.assets.all():  # files of its own: a scene's files are served to its evaluators
    store_asset(room, a.role, a.file.name.rsplit("/", 1)[-1], a.file.open("rb").read(), a.meta)
for obj in demo_scene.scene_objects.all():
    obj.pk, obj.scene = None, room
    obj.save()
frame = demo_scene.world_frames.select_related("anchor").first()
WorldFrame.objects.create(scene=room, anchor=room.scene_objects.get(instance_id=frame.anchor.instance_id),
                          side=frame.side, text=frame.text)
change = ContextChange.objects.create(scene=room, change_type="movement", status="approved",
                                      raw_text="chair to window",
                                      refined_text="The chair has been moved next to the window.")
item = Item.objects.create(benchmark=bench, scene=room, change=change, question="What is in front of the chair now?",
                           answer_format="open", answers=["the window"], status="approved")
study = create_study(bench, StudyDesign("Hypo3D baseline", [item.pk], 120, 1800, seed=1), None)
print(json.dumps({"study": study.pk, "world_frame": frame.text}))
"""


# Runs inside the live stack: the open item of the study's session has only a few seconds left, as if
# the participant had sat through most of its clock (waiting out SECONDS_PER_ITEM would cost the suite 45 s).
ALMOST_UP = """
from datetime import timedelta
from django.utils import timezone
from humaneval.models import Response
open_items = Response.objects.filter(session__study_id=STUDY, answered_at=None, timed_out=False)
assert open_items.update(deadline=timezone.now() + timedelta(seconds=LEFT)) == 1
"""



def create_study(stack, tmp_path) -> dict:
    need(bool(shutil.which("ffmpeg")), "ffmpeg (it makes the two test videos)")
    paths = {"before": tmp_path / "before.mp4", "after": tmp_path / "after.mp4"}
    make_clip(paths["before"], "testsrc", size="160x120", seconds=2)
    make_clip(paths["after"], "testsrc2", size="160x120", seconds=2)
    paths_file = tmp_path / "paths.json"
    paths_file.write_text(json.dumps({k: str(v) for k, v in paths.items()}))
    script = SETUP.replace("PATHS", repr(str(paths_file))).replace("SECONDS", str(SECONDS_PER_ITEM))
    return stack_json(stack, script)


def seconds_left(page) -> int:
    minutes, seconds = page.locator("#item-countdown").text_content().split(":")
    return int(minutes) * 60 + int(seconds)


def pick(page, text: str) -> None:
    page.locator("#choices label", has_text=text).locator("input").check()


def wait_for_item(page, number: int) -> None:
    page.wait_for_selector(f"#progress:has-text('Question {number} of 4')")
    page.wait_for_function("() => /\\d+:\\d\\d/.test(document.getElementById('item-countdown').textContent)")


def test_evaluator_practises_then_answers_3d_image_and_video_items_with_a_timeout(stack, new_page, tmp_path):
    base = stack["base"]
    setup = create_study(stack, tmp_path)
    evaluator = new_page()
    gold_seen = []
    evaluator.on("response", lambda r: gold_seen.append(r.url) if "/api/v1/items/" in r.url else None)
    evaluator.goto(f"{base}/crowd/studies/{setup['study']}/?PROLIFIC_PID=eval-mixed&STUDY_ID=s&SESSION_ID=x")
    evaluator.wait_for_url(re.compile(r".*/eval/sessions/\d+/$"))
    evaluator.check("#agree")  # instructions and consent first: the clock starts after them
    evaluator.click("#start-session")

    # Familiarisation: a practice item, feedback after the answer, then the timed items.
    wait_for_item(evaluator, 1)
    assert evaluator.locator("#practice-badge").is_visible()
    evaluator.wait_for_selector("#image[data-loaded=true] svg line", state="attached")
    pick(evaluator, "the circle")
    evaluator.click("#submit-answer")
    evaluator.wait_for_selector("#feedback:not([hidden])")
    assert evaluator.locator("#feedback-verdict").text_content() == "Not quite."
    assert "the square" in evaluator.locator("#feedback-answer").text_content()
    evaluator.click("#continue")

    # 3D item: the point cloud and the top view of the demo scene.
    wait_for_item(evaluator, 2)
    assert not evaluator.locator("#practice-badge").is_visible()
    evaluator.wait_for_selector("#pointcloud[data-loaded=true]", timeout=60_000)
    pick(evaluator, "a bedroom")
    shot(evaluator, "humaneval-1-3d-choice-item", stack)
    evaluator.click("#submit-answer")

    # Image item: reload mid-item; the same item comes back with its clock still running.
    wait_for_item(evaluator, 3)
    evaluator.wait_for_selector("#image[data-loaded=true]")
    item_id = evaluator.evaluate("document.body.dataset.itemId")
    before_reload = seconds_left(evaluator)
    time.sleep(2.5)
    evaluator.reload()
    wait_for_item(evaluator, 3)
    assert evaluator.evaluate("document.body.dataset.itemId") == item_id
    assert seconds_left(evaluator) <= before_reload - 2
    pick(evaluator, "the blue circle")
    evaluator.click("#submit-answer")

    # Paired-video item: both videos load, locked together; the participant lets it time out: its
    # server-owned clock is nearly spent, and the reloaded page counts down the rest and moves on.
    wait_for_item(evaluator, 4)
    evaluator.wait_for_selector("#videos[data-loaded=true]", timeout=30_000)
    shot(evaluator, "humaneval-2-paired-video-item", stack)
    almost_up = ALMOST_UP.replace("STUDY", str(setup["study"])).replace("LEFT", "3")
    stack_shell(stack, almost_up)
    evaluator.reload()
    evaluator.wait_for_selector("#finished:not([hidden])", timeout=30_000)
    code = evaluator.locator("#completion-code").text_content()
    assert code.startswith("CQA_")
    # No question is left: its number and clocks ("Question 4 of 4 · 0:00") are gone; Copy takes the code.
    assert not evaluator.locator("#progress").is_visible() and not evaluator.locator("#item-countdown").is_visible()
    evaluator.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    evaluator.click("#copy-completion-code")
    evaluator.wait_for_selector("#copy-completion-code:text-is('Copied')")
    assert evaluator.evaluate("navigator.clipboard.readText()") == code
    assert gold_seen == []

    # The admin's study results: the human row in M3-Verse's layout, the timeout counted.
    admin = new_page()
    login(admin, base, "admin")
    admin.goto(f"{base}/studies/{setup['study']}/results/")
    human = admin.locator("#study-results-table .human-row")
    assert human.count() == 1
    # 3D and image right (100 each), the timed-out video item 0: overall score 66.67, its interval over
    # participants beside it (one participant: no spread to measure, said in words, not "± 0.00").
    assert human.locator("td").nth(2).text_content() == "66.67 not available (n=1 participant)"
    assert admin.locator("#n-timed-out").text_content() == "1"
    shot(admin, "humaneval-3-study-results", stack)
    csv_text = admin.request.get(f"{base}/studies/{setup['study']}/results.csv").text()
    assert len(csv_text.strip().splitlines()) == 1 + 4


def test_hypo3d_evaluator_sees_the_world_frame_sentence_and_the_compass(stack, new_page):
    """Humans see what models see: the orientation sentence of the model's prompt, the refined change,
    and the compass of the world frame on the point cloud (perspective and top-down)."""
    setup = stack_json(stack, HYPO3D_SETUP)
    evaluator = new_page()
    evaluator.goto(f"{stack['base']}/crowd/studies/{setup['study']}/?PROLIFIC_PID=eval-hypo3d&STUDY_ID=s&SESSION_ID=x")
    evaluator.wait_for_url(re.compile(r".*/eval/sessions/\d+/$"))
    evaluator.check("#agree")
    evaluator.click("#start-session")
    evaluator.wait_for_selector("#progress:has-text('Question 1 of 1')")

    world_frame = evaluator.locator("#world-frame")
    assert world_frame.is_visible()
    assert setup["world_frame"] in world_frame.text_content()
    assert "Scene orientation" in world_frame.text_content()
    change = evaluator.locator("#context-change").text_content()
    assert "The chair has been moved next to the window." in change and "chair to window" not in change
    assert "a single word or a short phrase" in evaluator.locator("label[for=answer]").text_content()

    evaluator.wait_for_selector("#pointcloud[data-loaded=true]", timeout=60_000)
    compass = evaluator.locator("#pointcloud .hl-viewer-compass")
    compass.wait_for(state="visible")
    assert compass.locator("span[data-side=front]").is_visible()
    shot(evaluator, "humaneval-4-hypo3d-world-frame-and-compass", stack)
    evaluator.locator("#pointcloud .hl-viewer-button", has_text="Top view").click()
    assert compass.is_visible()
