"""A built item of each image and video family, followed through the browser (issue #42): an annotator
writes it through the crowd page (the family's form: no Hypo3D question type, the family's tags, marks
drawn on the image or the frame-locked paired player), a reviewer opens it and sees its stimulus (the
image with the drawn marks, the synced paired videos), edits a choice and a tag, approves; the item then
lands in its paper table's cells. Each authoring and review page passes the crawl's checks (axe: no
critical or serious violation)."""

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.clips import make_clip
from tests.needs import need

from .conftest import CHROMIUM, login, stack_json
from .test_crawl_roles import AXE, page_problems
from .test_overlay_tool import drag

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]  # the first test of a run starts the stack

# Runs in the stack: a benchmark of the family, a scene with its image (or before/after pair), a campaign
# made with the family's defaults, an author holding a lease and a reviewer.
SETUP = """
import io, json
from PIL import Image
from django.contrib.auth import get_user_model
from annotation import services
from benchmarks.services import store_asset
from core import roles
from tests.factories import BenchmarkFactory, SceneFactory

family, kind, n = FAMILY, KIND, NUMBER
benchmark = BenchmarkFactory(family=family, name=f"Built {family}", slug=f"built-{family}-{n}")
scene = SceneFactory(benchmark=benchmark, object_labels=[])
if kind == "choice_image":
    out = io.BytesIO()
    Image.new("RGB", (400, 240), (235, 235, 235)).save(out, format="PNG")
    store_asset(scene, "image", "photo.png", out.getvalue(), {})
else:
    paths = json.loads(open(PATHS).read())
    for which in ("before", "after"):
        store_asset(scene, "video", f"{which}.mp4", open(paths[which], "rb").read(), {"which": which, "fps": 10})
campaign = services.create_campaign(benchmark, f"Built {family}", "", [scene], kind=kind)
users = {}
for name, role in (("author", roles.ANNOTATOR), ("reviewer", roles.REVIEWER)):
    user = get_user_model().objects.create_user(f"{family}-{name}-{n}", password="hypolab-demo")
    roles.grant_role(user, role)
    users[name] = user.username
print(json.dumps({"assignment": services.lease_assignment(campaign, get_user_model().objects.get(
    username=users["author"])).pk, "benchmark": benchmark.slug, "change_type": campaign.change_type, **users}))
"""

# The item as stored, and whether it lands in the cell of each tag its paper's table groups by.
WRITTEN = """
import json
import scoring
from benchmarks.models import Item
from benchmarks.services import gold_row

item = Item.objects.get(benchmark__slug=SLUG)
cells = {}
if item.status == "approved":
    row = gold_row(item)
    answer = item.answers[0]
    for key in KEYS:
        result = scoring.score(item.benchmark.family, [row], [{"id": row["id"], "output": answer}], by=[key])
        value = item.tags[key]
        cells[key] = f"{key}={'+'.join(value) if isinstance(value, list) else value}" in result["by"]
print(json.dumps({"id": item.pk, "version": item.version, "choices": item.choices, "answers": item.answers,
                  "tags": item.tags, "overlays": item.overlays, "status": item.status, "cells": cells}))
"""

# family: (kind, the question, the tags picked on the authoring page, the tag edited on review, cell keys)
FAMILIES = {
    "causalspatial": ("choice_image", "If the ball rolls along the arrow, will it hit the vase?",
                      {"level": "L1", "task": "collision"}, ("level", "L2"), ("level", "task")),
    "3dsrbench": ("choice_image", "Is the red car closer to the camera than the blue bus?",
                  {"subtype": "location_closer_to_camera"}, ("subtype", "location_next_to"),
                  ("category", "subtype")),
    "spatial457": ("choice_image", "How many red cubes are left of the sphere?",
                   {"level": "L2_objects"}, ("level", "L3_2d_spatial"), ("level",)),
    "m3verse": ("choice_video", "Which object was moved between the two videos?",
                {"state_type": "inter-states", "capabilities": ["spatial understanding"]},
                ("state_type", "intra-state"), ("state_type",)),
}


def clean(page) -> None:
    problems = page_problems(page, None)
    assert not problems, "\n".join(problems)


def author_item(page, base, ids, family) -> None:
    kind, question, tags, _, _ = FAMILIES[family]
    login(page, base, ids["author"])
    page.goto(f"{base}/annotate/{ids['assignment']}/")
    assert page.locator("#question-type").count() == 0  # no Hypo3D question types on this family
    if kind == "choice_image":
        area = page.locator("#media svg[data-image='0']")
        page.wait_for_function("document.querySelector(\"#media svg[data-image='0']\").getAttribute('viewBox')")
        drag(page, area, (0.2, 0.5), (0.8, 0.5))  # a mark the reviewer must see
    else:
        page.wait_for_selector("#videos[data-loaded=true]", timeout=30_000)
        assert page.locator("#videos video").count() == 2 and page.locator("#videos [data-role=step-forward]").count()
    clean(page)
    page.fill("#question", question)
    choices = page.locator("#choices .choice")
    choices.nth(0).fill("the first one")
    choices.nth(1).fill("the second one")
    page.locator("#choices .correct").nth(0).check()
    if family == "3dsrbench":
        page.select_option("#flip", "swap")  # its flip decision
    else:
        assert page.locator("#flip").count() == 0  # never scored on mirrored images: not asked
    for key, value in tags.items():
        page.select_option(f"#tag-{key}", value)
    page.click("#submit-task")
    try:
        page.wait_for_url(re.compile(r".*/done/$"), timeout=60_000)
    except Exception:
        raise AssertionError(f"not submitted: {page.locator('#task-error').text_content()!r}") from None


def review_item(page, base, ids, item, family) -> None:
    kind, _, _, (tag, value), _ = FAMILIES[family]
    login(page, base, ids["reviewer"])
    page.goto(f"{base}/review/items/{item['id']}/")
    assert page.locator("#pointcloud, .pointcloud-panel").count() == 0  # no empty 3D box on an image or video
    if kind == "choice_image":
        viewer = page.locator("#stimulus-images .hl-image-viewer")
        page.wait_for_selector("#stimulus-images .hl-image-viewer[data-loaded=true] svg line", state="attached")
        assert viewer.locator("svg line").count() == 1  # the annotator's arrow, drawn over the image
    else:
        page.wait_for_selector("#stimulus-videos[data-loaded=true]", timeout=30_000)
        page.click("#stimulus-videos [data-role=step-forward]")
        page.wait_for_function("""() => { const [a, b] = document.querySelectorAll('#stimulus-videos video');
            return a.currentTime > 0 && !a.seeking && !b.seeking && Math.abs(a.currentTime - b.currentTime) < 0.1; }""")
    assert page.locator("input[name=item_question_type]").count() == 0
    clean(page)
    if family == "spatial457":  # an open answer (its paper asks without options): the answer is edited
        page.fill("#item-answers", "the other one")
    else:
        page.fill("#item-choice-B", "the other one")
    page.select_option(f"#item-tag-{tag}", value)
    if family == "3dsrbench":
        assert page.locator("#item-flip").input_value() == "swap"
        page.select_option("#item-flip", "same")
    with page.expect_navigation():
        page.click("#save-item")
    assert page.locator("#item-error").text_content() == ""
    with page.expect_navigation():
        page.click("#approve-item")
    assert page.locator("#item-status").text_content().strip() == "Approved"


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_built_item_is_written_seen_edited_approved_and_tabled(stacks, new_page, tmp_path, family):
    need(Path(CHROMIUM).exists(), CHROMIUM)
    need(AXE.exists(), "axe-core in frontend/static/vendor (scripts/install_static.sh)")
    stack = stacks("embedded")
    base = stack["base"]
    kind, _, _, (tag, value), keys = FAMILIES[family]
    paths = tmp_path / "paths.json"
    if kind == "choice_video":
        need(bool(shutil.which("ffmpeg")), "ffmpeg (it makes the two test videos)")
        clips = {w: make_clip(tmp_path / f"{w}.mp4", p, size="160x120", fps=10, seconds=2)
                 for w, p in (("before", "testsrc"), ("after", "testsrc2"))}
        paths.write_text(json.dumps({k: str(v) for k, v in clips.items()}))
    # the number names the users, whose names the pages show: hyphens, not a code name's underscores
    script = (SETUP.replace("FAMILY", repr(family)).replace("KIND", repr(kind))
              .replace("NUMBER", repr(tmp_path.name.replace("_", "-"))).replace("PATHS", repr(str(paths))))
    ids = stack_json(stack, script)
    assert ids["change_type"] == ""  # a choice campaign takes no change type
    written = lambda: stack_json(stack, WRITTEN.replace("SLUG", repr(ids["benchmark"])).replace("KEYS", repr(keys)))  # noqa: E731

    author_item(new_page(), base, ids, family)
    item = written()
    if kind == "choice_image":
        assert [o["type"] for o in item["overlays"]] == ["arrow"]
    if family == "spatial457":
        assert item["answers"] == ["the first one"]

    review_item(new_page(), base, ids, item, family)
    item = written()
    assert item["status"] == "approved"
    assert item["tags"][tag] == value
    if family == "3dsrbench":
        assert item["tags"]["flip"] == "same"  # the reviewer's flip decision
    else:
        assert "flip" not in item["tags"]
    if family == "spatial457":  # an open answer: the correct choice's text, then the reviewer's
        assert item["answers"] == ["the other one"] and item["choices"] == []
    else:
        assert item["choices"][1] == "the other one" and item["answers"] == ["A"]
    assert item["cells"] and all(item["cells"].values()), item["cells"]


def test_the_seeded_demo_reaches_every_authoring_page_and_each_reads_clean(stacks, new_page):
    """The demo holds one campaign of every kind with the demo annotator's lease (demo/campaigns.py):
    from the annotator's home, every kind's authoring page opens and passes the crawl's checks (axe: no
    critical or serious violation). The crawl itself visits one page per address shape."""
    need(Path(CHROMIUM).exists(), CHROMIUM)
    need(AXE.exists(), "axe-core in frontend/static/vendor (scripts/install_static.sh)")
    stack = stacks("demo")
    base = stack["base"]
    page = new_page()
    login(page, base, "annotator")
    links = page.eval_on_selector_all("a[href*='/annotate/'], a.button[href*='/next']",
                                      "links => [...new Set(links.map((a) => a.getAttribute('href')))]")
    kinds, problems = set(), []
    for link in links:
        page.goto(base + link, wait_until="load")
        try:  # a Start link's page posts itself, and leases
            page.wait_for_url(re.compile(r".*/annotate/\d+/$"), timeout=15_000)
        except Exception:
            continue  # a campaign with nothing left to lease: not an authoring page
        page.wait_for_timeout(300)  # module scripts fill in the form
        heading = page.locator("h1").first.text_content().strip()
        kinds.add("Context change" if heading.startswith("Describe") else heading)
        problems += [f"{link} ({page.url}): {p}" for p in page_problems(page, None)]
    expected = {"Context change", "World-frame anchor",
                "Question and answer on an approved change", "Multiple-choice item on an image",
                "Multiple-choice item on paired before/after videos", "Independent answer to an existing question"}
    assert expected <= kinds, kinds
    assert not problems, "\n".join(problems)
