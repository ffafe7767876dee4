"""The whole thin path in a real browser, as the four roles: write a change, review it, write a
question, evaluate people on it, run the baseline model on the gpu queue, compare, export."""

import json
import re

import pytest

from .conftest import login, shot

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(300)]

SLUG = "hypo3d-demo"


def scene_labels(page) -> list[str]:
    data = json.loads(page.locator("#scene-viewer-data").text_content())
    return sorted({o["label"] for o in data["objects"]})


def hover_first_label(page) -> str:
    data = json.loads(page.locator("#scene-viewer-data").text_content())
    label = data["map"]["labels"][0]
    box = page.locator("[data-topview] img").first.bounding_box()
    scale_x = box["width"] / data["map"]["width"]
    scale_y = box["height"] / data["map"]["height"]
    page.mouse.move(box["x"] + label["x"] * scale_x, box["y"] + label["y"] * scale_y)
    page.wait_for_function("() => document.querySelector('[data-topview]').dataset.hoverLabel")
    return page.locator("[data-topview]").get_attribute("data-hover-label")


def send(page, field, value, button, then):
    """Fill one field, press the form's button, and wait for `then`, the selector of what must follow. Each
    time the page's module scripts must have run (`then` may be in a page that reloaded), or the next click
    finds a button with nothing listening yet."""
    page.wait_for_load_state("domcontentloaded")
    page.fill(field, value)
    page.click(button)
    page.wait_for_selector(then)
    page.wait_for_load_state("domcontentloaded")


def test_thin_path_from_scene_to_release(stack, new_page):
    base = stack["base"]

    # 1. An annotator arrives from Prolific and writes a movement change.
    annotator = new_page()
    annotator.goto(base + "/crowd/campaigns/1/?PROLIFIC_PID=worker-e2e-1&STUDY_ID=study-1&SESSION_ID=sess-1")
    annotator.wait_for_url(re.compile(r".*/annotate/\d+/$"))
    annotator.wait_for_selector("[data-loaded=true]", timeout=60_000)
    assert int(annotator.locator("[data-loaded=true]").get_attribute("data-point-count")) >= 200_000
    assert hover_first_label(annotator) in scene_labels(annotator)
    labels = scene_labels(annotator)
    send(annotator, "#change-text", "Move the chair over there.", "#submit-change",
         "#change-error:has-text('at least 10 words')")
    send(annotator, "#change-text", "The grand piano has been moved from the hallway to the garden outside the gate.",
         "#submit-change", "#change-error:has-text('names no object')")
    moved, origin, target = labels[0], labels[1], labels[2]
    text = f"The {moved} has been moved from beside the {origin} to the spot right next to the {target}."
    annotator.fill("#change-text", text)
    shot(annotator, "1-annotator-writes-change", stack)
    annotator.click("#submit-change")
    annotator.wait_for_url(re.compile(r".*/done/$"))
    assert annotator.locator("#completion-code").text_content().startswith("CQA_")
    shot(annotator, "1b-annotator-completion-code", stack)

    # 2. A reviewer refines the change (the raw text is kept), approves it, writes a question.
    reviewer = new_page()
    login(reviewer, base, "reviewer")
    reviewer.goto(base + "/review/")
    # Other browser tests share the stack: open this annotator's change, not the first in the queue.
    reviewer.locator("#review-queue tr", has_text=text).get_by_role("link", name="Review").click()
    refined = f"The {moved} has been moved from the {origin} to the space right next to the {target}."
    send(reviewer, "#refined", refined, "#save-edit", f"#refined-text:has-text('{refined}')")
    assert reviewer.locator("#raw-text").text_content() == text
    reviewer.click("#approve")
    reviewer.wait_for_selector("#question-form")
    reviewer.fill("#question", f"What object is now directly next to the {moved}?")
    reviewer.fill("#answer", target)
    reviewer.check("input[name=question_type][value=Direction]")
    reviewer.click("#add-question")
    reviewer.wait_for_selector(f"#item-list:has-text('{target}')")
    shot(reviewer, "2-reviewer-refines-and-asks", stack)

    # 3. The question waits for a second reviewer: the admin (a reviewer too) approves it, creates a study;
    # an evaluator from a crowd link reads the instructions, agrees, and answers in a timed session.
    admin = new_page()
    login(admin, base, "admin")
    item_url = reviewer.locator("#item-list a", has_text=f"directly next to the {moved}").first.get_attribute("href")
    admin.goto(base + item_url)
    admin.click("#approve-item")
    admin.wait_for_selector("#item-status:has-text('Approved')")
    admin.goto(f"{base}/manage/{SLUG}/")
    send(admin, "#study-form input[name=name]", "Pilot human baseline", "#study-form button[type=submit]",
         "text=Pilot human baseline")
    study_link = admin.locator(".crowd-link").first.input_value().split("?")[0]  # absolute
    assert study_link.startswith(base + "/crowd/studies/")
    evaluator = new_page()
    evaluator.goto(f"{study_link}?PROLIFIC_PID=eval-e2e-1&STUDY_ID=study-2&SESSION_ID=sess-2")
    evaluator.check("#agree")
    evaluator.click("#start-session")
    evaluator.wait_for_selector("#question:has-text('directly next to')")
    evaluator.wait_for_function("() => /\\d+:\\d\\d/.test(document.getElementById('item-countdown').textContent)")
    evaluator.wait_for_selector("[data-loaded=true]", timeout=60_000)
    evaluator.fill("#answer", target.upper())
    shot(evaluator, "3-evaluator-timed-session", stack)
    evaluator.click("#submit-answer")
    # A refused answer shows its reason on the page: say it rather than time out waiting for the end.
    evaluator.wait_for_selector("#finished:not([hidden]), #answer-error:not(:empty)")
    assert evaluator.locator("#answer-error").text_content() == ""
    assert evaluator.locator("#completion-code").text_content().startswith("CQA_")

    # 4. The admin launches the random baseline; it runs on the gpu queue, progress arrives live.
    admin.goto(f"{base}/manage/{SLUG}/")
    admin.click("#run-form button[type=submit]")
    # The form posts to its own #run-form (a refused launch comes back scrolled to its message); the
    # redirect to the run names no fragment, so the browser keeps that one on the run's address.
    admin.wait_for_url(re.compile(r".*/runs/\d+/(#run-form)?$"))
    admin.wait_for_selector("#run-status:has-text('finished')", timeout=60_000)
    assert int(admin.locator("#run-done").text_content()) >= 1
    # Each metric with its interval, as the tables show it; the intervals (`ci`) are no metric of their own.
    assert re.fullmatch(r"EM [\d.]+ ± [\d.]+ · PM [\d.]+ ± [\d.]+", admin.locator("#run-scores").text_content())
    shot(admin, "4-admin-model-run", stack)
    if stack["mode"] == "services":
        assert "Task modeleval.tasks.infer_batch[" in (stack["logs"] / "worker.log").read_text()

    # 5. Results: the human row and the model row, graded by the same scorer.
    admin.goto(f"{base}/results/{SLUG}/")
    human = admin.locator("#results-table .human-row", has_text="Pilot human baseline")
    model = admin.locator("#results-table .model-row")
    assert human.count() == 1 and model.count() >= 1
    # Every number with its interval (over participants for people): one participant gives no interval,
    # and the cell says so rather than "± 0.00".
    score = human.locator("td").nth(2)
    assert score.text_content().startswith("100.0") and "n=1 participant" in score.locator(".ci").text_content()
    shot(admin, "5-admin-results", stack)

    # 6. Export a release: JSONL plus an asset manifest.
    admin.goto(f"{base}/manage/{SLUG}/")
    version, release = "#release-form input[name=version]", "#release-form button[type=submit]"
    send(admin, version, "not-a-version", release, "#release-form .error:has-text('version')")
    send(admin, version, "1.0.0", release, "#release-list >> text=v1.0.0")
    # The export is the release's job: its page follows it and lists the files once it has ended.
    admin.click("#release-list >> text=v1.0.0")
    admin.wait_for_selector("#release-status:text-is('Ready')")
    shot(admin, "6-admin-release", stack)
    items_url = admin.locator("#release-files a:text-is('jsonl')").get_attribute("href")
    lines = [json.loads(line) for line in admin.request.get(base + items_url).text().splitlines()]
    ours = [line for line in lines if line["context_change"] == refined]
    assert len(ours) == 1 and ours[0]["answers"] == [target]
    manifest_url = admin.locator("#release-files a:text-is('manifest')").get_attribute("href")
    manifest = admin.request.get(base + manifest_url).json()
    assert {a["role"] for a in manifest["assets"]} >= {"viewer_points", "topview_plain", "topview_semantic"}
