"""The pipeline in a real browser: an admin composes two stages on the manage page (generate Spatial457
questions from a scene given inline, drafts for review, then export a release of the reviewed items),
sees a bad param named, runs the whole
pipeline and watches both jobs' progress widgets reach "done" live, without reloading the page."""

import json

import pytest

from tests.construction.test_generators import _scene

from .conftest import login, shot, stack_shell

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(300)]

SLUG = "pipeline-e2e"
# one reviewed item to release: generated questions wait in the review queue as drafts
MAKE_BENCHMARK = f"""
from benchmarks.models import Benchmark, Item
benchmark, _ = Benchmark.objects.get_or_create(slug="{SLUG}", defaults={{"name": "Pipeline e2e", "family": "spatial457"}})
Item.objects.get_or_create(benchmark=benchmark, external_id="L1_single/reviewed", defaults={{
    "question": "How many cubes are there?", "answers": ["3"], "answer_format": "open", "status": "approved",
    "tags": {{"level": "L1_single"}}}})
print("ok")
"""


def add_stage(page, kind: str, name: str, params: dict) -> None:
    rows = page.locator("#stage-list tr[data-stage]").count()
    page.select_option("#stage-form select[name=kind]", kind)
    page.fill("#stage-form input[name=name]", name)
    page.fill("#stage-form textarea[name=params]", json.dumps(params))
    page.click("#stage-form button[type=submit]")
    page.wait_for_function(f"() => document.querySelectorAll('#stage-list tr[data-stage]').length === {rows + 1}")


def test_admin_composes_and_runs_a_pipeline_with_live_progress(stack, new_page):
    base = stack["base"]
    stack_shell(stack, MAKE_BENCHMARK)
    page = new_page()
    login(page, base, "admin")
    page.goto(f"{base}/manage/{SLUG}/")

    page.select_option("#stage-form select[name=kind]", "generate")
    example = json.loads(page.input_value("#stage-form textarea[name=params]"))
    assert example["family"] == "spatial457"  # the kind's example fills the box

    page.fill("#stage-form textarea[name=params]", json.dumps({"level": "L9"}))
    page.click("#stage-form button[type=submit]")
    page.wait_for_selector("#stage-error:has-text('One of L1_single')")  # the level's own message

    add_stage(page, "generate", "questions", {"level": "L1_single", "per_template": 2, "scenes": _scene()})
    add_stage(page, "release", "release", {"version": "1.0.0"})
    assert page.locator("#stage-list tr[data-stage] td:first-child").all_text_contents() == ["1.", "2."]

    page.evaluate("window.stillThisPage = true")
    page.click("#run-pipeline")
    rows = page.locator("#stage-list tr[data-stage]")
    for row in (rows.nth(0), rows.nth(1)):
        row.locator(".job-progress[data-status=done]").wait_for(timeout=120_000)
    assert page.evaluate("window.stillThisPage") is True  # followed live, not by reloading
    generated = rows.nth(0).locator(".job-report").inner_text()
    released = rows.nth(1).locator(".job-report").inner_text()
    assert "Created:" in generated and "Templates:" in generated and "{" not in generated
    assert "Version: 1.0.0" in released and "Exported: yes" in released
    assert rows.nth(1).locator(".job-status").inner_text() == "done"
    shot(page, "12-admin-pipeline", stack)

    page.reload()  # the page shows each stage's latest job
    assert page.locator("#stage-list .job-progress[data-status=done]").count() == 2
