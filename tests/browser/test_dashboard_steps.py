"""A benchmark's steps as a dashboard (issue #46) in a real browser: from an empty benchmark to a release,
the admin clicks only the button the manage page's steps highlight next (Generate items, Review N waiting
items, Design a study, Invite participants, Run models, Export a release), doing on each page it opens what
that page asks; every create says so in a success message, the study's crowd link is absolute with a Copy
button, and a stage that ran offers Run again, not Run."""

import json
import re

import pytest

from tests.construction.test_generators import _scene

from .conftest import login, shot, stack_json, stack_shell

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(400)]

SLUG = "steps-e2e"
MAKE_BENCHMARK = f"""
from benchmarks.models import Benchmark
Benchmark.objects.get_or_create(slug="{SLUG}", defaults={{"name": "Steps e2e", "family": "spatial457"}})
print("ok")
"""
DRAFTS = f"""
import json
from benchmarks.models import Item
print(json.dumps(list(Item.objects.filter(benchmark__slug="{SLUG}", status="draft").values_list("pk", flat=True))))
"""


def next_action(page):
    """The one highlighted button of the steps: (its label, the step it moves on)."""
    page.wait_for_selector("#steps")
    assert page.locator("#steps .step-action.primary").count() == 1
    step = page.locator("#steps li.next-step")
    return step.locator(".step-action").inner_text(), step.get_attribute("data-step")


def follow_next(page, label: str) -> None:
    """Clicks the highlighted button, which must read `label`."""
    assert next_action(page)[0] == label
    page.locator("#steps .step-action.primary").click()


def test_the_dashboard_leads_from_an_empty_benchmark_to_a_release(stack, new_page):
    base = stack["base"]
    stack_shell(stack, MAKE_BENCHMARK)
    manage = f"{base}/manage/{SLUG}/"
    page = new_page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    login(page, base, "admin")
    page.goto(manage)
    assert page.locator("#steps li[data-step=items]").get_attribute("data-status") == "todo"
    shot(page, "13-admin-steps-empty", stack)

    # 1. Items: the generator, as a pipeline stage run from the page
    follow_next(page, "Generate items")
    page.wait_for_url(re.compile(r".*#pipeline$"))
    page.select_option("#stage-form select[name=kind]", "generate")
    page.fill("#stage-form input[name=name]", "questions")
    page.fill("#stage-form textarea[name=params]",
              json.dumps({"level": "L1_single", "per_template": 1, "scenes": _scene()}))
    page.click("#stage-form button[type=submit]")
    row = page.locator("#stage-list tr[data-stage]").first
    row.wait_for()
    assert row.locator("button[data-action=run]").inner_text() == "Run"  # not run yet: Run only
    row.locator("button[data-action=run]").click()
    row.locator(".job-progress[data-status=done]").wait_for(timeout=120_000)
    assert row.locator("button[data-action=run]").all_inner_texts() == ["Run again"]
    page.reload()
    assert page.locator("#stage-list tr[data-stage]").first.locator(
        "button[data-action=run]").all_inner_texts() == ["Run again"]

    # 2. Review: the generated drafts kept from the filtering page's keyboard
    drafts = json.loads(stack_shell(stack, DRAFTS))
    assert drafts
    follow_next(page, f"Review {len(drafts)} waiting item{'s' if len(drafts) > 1 else ''}")
    page.wait_for_url(re.compile(r".*/review/filtering/$"))
    for pk in drafts:  # only this benchmark's: the queue holds the demo's drafts too
        draft = page.locator(f"tr.draft[data-id='{pk}']")
        draft.focus()
        page.keyboard.press("y")
        draft.locator(".draft-decision:has-text('kept')").wait_for()

    # 3. Human study: designed, then participants invited with its absolute crowd link
    page.goto(manage)
    follow_next(page, "Design a study")
    page.wait_for_selector("#design-form")
    page.fill("#design-form input[name=name]", "Steps study")
    page.locator("#design-form button[type=submit]").click()
    page.wait_for_selector("#messages:has-text('Study “Steps study” created')")
    page.goto(manage)
    follow_next(page, "Invite participants")
    page.wait_for_url(re.compile(r".*#studies$"))
    study_row = page.locator("#study-list tr", has_text="Steps study")
    link = study_row.locator("input.crowd-link").input_value()
    assert link.startswith(f"{base}/crowd/studies/") and "PROLIFIC_PID={{%PROLIFIC_PID%}}" in link
    study_row.locator("button.copy-link").click()
    study_row.locator("button.copy-link:has-text('Copied')").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == link
    participant = new_page()
    participant.goto(link.replace("{{%PROLIFIC_PID%}}", "steps-p1").replace("{{%STUDY_ID%}}", "steps")
                     .replace("{{%SESSION_ID%}}", "steps-s1"))
    participant.wait_for_url(re.compile(r".*/eval/sessions/\d+/$"))
    participant.check("#agree")
    participant.click("#start-session")
    participant.wait_for_selector("#progress:has-text('Question 1 of')")

    # 4. Model runs: the study's participants are under way, so the next step is the models'
    page.goto(manage)
    assert page.locator("#steps li[data-step=study]").get_attribute("data-status") == "waiting"
    follow_next(page, "Run models")
    page.wait_for_url(re.compile(r".*#runs$"))
    page.select_option("#run-form select[name=model]", label="Random baseline (seed 0)")
    page.click("#run-form button[type=submit]")
    page.wait_for_selector("#run-status:has-text('finished')", timeout=120_000)

    # 5. Release
    page.goto(manage)
    follow_next(page, "Export a release")
    page.wait_for_url(re.compile(r".*#releases$"))
    page.fill("#release-form input[name=version]", "1.0.0")
    page.click("#release-form button[type=submit]")
    page.wait_for_selector("#messages:has-text('Release v1.0.0 created')")
    for _ in range(60):  # the export runs on the workers (services) or in a thread (embedded)
        if page.locator("#steps li[data-step=release]").get_attribute("data-status") == "done":
            break
        page.wait_for_timeout(1000)
        page.reload()
    steps = {li.get_attribute("data-step"): li.get_attribute("data-status")
             for li in page.locator("#steps li.benchmark-step").all()}
    assert steps == {"material": "optional", "items": "done", "review": "done", "study": "waiting",
                     "runs": "done", "release": "done"}
    assert page.locator("#steps .step-action").count() == 0 and page.locator("#steps li.next-step").count() == 0
    shot(page, "14-admin-steps-released", stack)
    released = stack_json(stack, f"""
import json
from benchmarks.models import Release
r = Release.objects.get(benchmark__slug="{SLUG}")
print(json.dumps({{"version": r.version, "status": r.status, "items": r.items.count()}}))
""")
    assert released == {"version": "1.0.0", "status": "ready", "items": len(drafts)}
