"""Issue 4 in a real browser: the paired before/after player keeps both videos on the same frame
after playing, seeking with the shared scrubber and stepping frame by frame (buttons and keys),
side by side and in the A/B view. Both `currentTime`s are read from the page."""

import json
import shutil

import pytest

from tests.clips import make_clip
from tests.needs import need

from .conftest import login, shot, stack_json

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(300)]

FPS = 25
FRAME = 1 / FPS

# Runs inside the live stack (manage.py shell): one scene with a before/after pair, fps as probed.
SETUP = """
import json
from benchmarks.models import Benchmark, Scene
from benchmarks.services import store_asset

paths = json.loads(open(PATHS).read())
bench, _ = Benchmark.objects.get_or_create(slug="paired-video-sync", defaults={"name": "Paired video sync",
                                                                                 "family": "m3verse"})
scene = Scene.objects.create(benchmark=bench, external_id=f"clips-{Scene.objects.count()}")
for which in ("before", "after"):
    store_asset(scene, "video", f"{which}.mp4", open(paths[which], "rb").read(), {"which": which, "fps": FPS})
print(json.dumps({"scene": scene.pk}))
"""

TIMES = "() => [...document.querySelectorAll('#videos video')].map((v) => v.currentTime)"
SETTLED = """() => [...document.querySelectorAll('#videos video')]
    .every((v) => !v.seeking && v.readyState >= 2)"""


def create_scene(stack, tmp_path) -> int:
    need(bool(shutil.which("ffmpeg")), "ffmpeg (it makes the two test videos)")
    paths = {"before": tmp_path / "before.mp4", "after": tmp_path / "after.mp4"}
    make_clip(paths["before"], "testsrc", size="320x240", fps=FPS, seconds=4)
    make_clip(paths["after"], "testsrc2", size="320x240", fps=FPS, seconds=4)
    paths_file = tmp_path / "paths.json"
    paths_file.write_text(json.dumps({k: str(v) for k, v in paths.items()}))
    script = SETUP.replace("PATHS", repr(str(paths_file))).replace("FPS", str(FPS))
    return stack_json(stack, script)["scene"]


def settled_times(page) -> tuple[float, float]:
    page.wait_for_function(SETTLED)
    before, after = page.evaluate(TIMES)
    return before, after


def assert_same_frame(page) -> float:
    before, after = settled_times(page)
    assert abs(before - after) <= FRAME, (before, after)
    return before


def test_paired_videos_stay_on_the_same_frame(stack, new_page, tmp_path):
    base = stack["base"]
    scene_id = create_scene(stack, tmp_path)
    page = new_page()
    login(page, base, "admin")
    page.goto(f"{base}/manage/scenes/{scene_id}/")
    page.wait_for_selector("#videos[data-loaded=true]", timeout=30_000)
    controls = page.locator("#videos")

    # Play: sampled while both run, then paused on the same frame.
    controls.locator("[data-role=play]").click()
    page.wait_for_function("() => document.querySelector('#videos video').currentTime > 0.3")
    drifts = []
    for _ in range(10):
        before, after = page.evaluate(TIMES)
        drifts.append(abs(before - after))
        page.wait_for_timeout(100)
    controls.locator("[data-role=play]").click()
    paused_at = assert_same_frame(page)
    assert paused_at > 0.3
    # While playing, a read can fall between the two videos' frame updates: at most one frame apart
    # most of the time, never more than two (the follower is re-seeked at half a frame) but for two reads
    # in ten, which a busy machine can starve of CPU between the two videos' updates (CI saw two).
    drifts.sort()
    assert drifts[len(drifts) // 2] <= FRAME and drifts[-3] <= 2 * FRAME, drifts

    # Seek with the shared scrubber to the middle.
    page.evaluate("""() => { const s = document.querySelector('#videos [data-role=scrubber]');
                             s.value = 500; s.dispatchEvent(new Event('input')); }""")
    middle = assert_same_frame(page)
    assert abs(middle - 2.0) <= 2 * FRAME

    # Frame steps: three forward with the button, one back with the key.
    for _ in range(3):
        controls.locator("[data-role=step-forward]").click()
        assert_same_frame(page)
    stepped = assert_same_frame(page)
    assert abs((stepped - middle) - 3 * FRAME) < 0.01, (middle, stepped)
    controls.focus()
    page.keyboard.press("ArrowLeft")
    back = assert_same_frame(page)
    assert abs((stepped - back) - FRAME) < 0.01, (stepped, back)

    # A/B view: one canvas, the other state hidden but still locked; play a little and pause again.
    controls.locator("[data-role=view]").click()
    controls.locator("[data-role=flip]").click()
    figures = page.locator("#videos figure")
    assert figures.nth(0).evaluate("f => getComputedStyle(f).visibility") == "hidden"
    assert figures.nth(1).evaluate("f => getComputedStyle(f).visibility") == "visible"
    controls.focus()
    page.keyboard.press(" ")
    page.wait_for_function(f"() => document.querySelector('#videos video').currentTime > {back + 0.3}")
    page.keyboard.press(" ")
    assert assert_same_frame(page) > back + 0.3
    shot(page, "paired-video-ab-view", stack)

    # The upload widget on the same page: straight to storage, checked, listed after a reload.
    (tmp_path / "notes.txt").write_bytes(b"object states\n" * 1000)
    uploader = page.locator("#uploader")
    uploader.locator("select[name=role]").select_option("export")
    uploader.locator("input[name=file]").set_input_files(str(tmp_path / "notes.txt"))
    uploader.locator("button[type=submit]").click()
    page.wait_for_selector("#uploader[data-state=done]")
    asset_id = uploader.get_attribute("data-asset-id")
    page.reload()
    assert page.locator(f"#asset-list tr[data-asset='{asset_id}']").count() == 1
