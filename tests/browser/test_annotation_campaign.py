"""A five-description crowd assignment in a real browser: arrive from a Prolific-style link, read
the guidelines, write five movements (one refused for naming no scene object), reload mid-way and
find the draft, submit, get the completion code, while the admin's dashboard updates by itself."""

import json
import re

import pytest

from .conftest import login, shot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

GUIDELINES = """Describe five **different** movements in this room.

- Good: "The chair has been moved from the desk to the window next to the bookshelf."
- Bad: "Move it over there." (which object? where?)
"""


def create_campaign(admin, base, **fields) -> int:
    demo = admin.request.get(base + "/api/v1/campaigns/").json()[0]
    csrf = next(c["value"] for c in admin.context.cookies() if c["name"] == "csrftoken")
    response = admin.request.post(base + "/api/v1/campaigns/", headers={"X-CSRFToken": csrf}, data={
        "benchmark": demo["benchmark"], "change_type": "movement", "scenes": demo["scenes"][:1], **fields,
    })
    assert response.status == 201, response.text()
    return response.json()["id"]


def movements(labels: list[str]) -> list[str]:
    """Five movements of five different objects, worded differently (no near-duplicates)."""
    a, b, c, d, e = labels[:5]
    place, other = labels[5], labels[6]
    return [
        f"The {a} has been moved from beside the {place} to the spot right next to the {other}.",
        f"Someone carried the {b} away from the {other} and put it down close to the {place} instead.",
        f"The {c} that was near the {place} now stands in front of the {other}.",
        f"We pushed the {d} from its place by the {other} all the way over to the {place}.",
        f"The {e} has been relocated from the {place} so that it now rests on top of the {other}.",
    ]


def test_worker_writes_five_movements_with_a_reload_and_the_dashboard_follows(stack, new_page):
    base = stack["base"]
    admin = new_page()
    login(admin, base, "admin")
    campaign_id = create_campaign(admin, base, name="Five movements", guidelines=GUIDELINES)
    admin.goto(f"{base}/campaigns/{campaign_id}/dashboard/")
    admin.wait_for_selector("#assignment-counts td[data-status=submitted]:text-is('0')")

    worker = new_page()
    worker.goto(f"{base}/crowd/campaigns/{campaign_id}/?PROLIFIC_PID=worker-five&STUDY_ID=st-5&SESSION_ID=se-5")
    worker.wait_for_url(re.compile(r".*/annotate/\d+/$"))
    assert worker.locator("#guidelines").get_attribute("open") is not None
    assert "five different movements" in worker.locator("#guidelines").inner_text()
    data = json.loads(worker.locator("#scene-viewer-data").text_content())
    labels = sorted({o["label"] for o in data["objects"]}, key=len, reverse=True)
    texts = movements(labels)

    for number, text in enumerate(texts[:2], start=1):
        worker.fill("#change-text", text)
        worker.click("#submit-change")
        worker.wait_for_selector(f"#description-list li:nth-child({number})")
    worker.fill("#change-text", "The grand piano has been moved from the hallway to the garden outside the gate.")
    worker.click("#submit-change")
    worker.wait_for_selector("#change-error:has-text('names no object')")
    assert worker.locator("#description-list li").count() == 2

    half = texts[2][: len(texts[2]) // 2]
    worker.fill("#change-text", half)
    worker.wait_for_selector("#draft-status:has-text('draft saved')", timeout=15_000)
    worker.reload()
    worker.wait_for_selector("#description-list li:nth-child(2)")
    assert worker.locator("#change-text").input_value() == half
    assert worker.locator("#description-number").text_content() == "3"

    for number, text in enumerate(texts[2:4], start=3):
        worker.fill("#change-text", text)
        worker.click("#submit-change")
        worker.wait_for_selector(f"#description-list li:nth-child({number})")
    assert worker.locator("#submit-change").text_content() == "Submit"
    worker.fill("#change-text", texts[4])
    shot(worker, "7-annotator-five-descriptions", stack)
    worker.click("#submit-change")
    worker.wait_for_url(re.compile(r".*/done/$"))
    code = worker.locator("#completion-code").text_content()
    assert code.startswith("CQA_")
    assert "cc=CQA_" in worker.locator("#completion-link").get_attribute("href")
    worker.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    worker.click("#copy-completion-code")
    worker.wait_for_selector("#copy-completion-code:text-is('Copied')")
    assert worker.evaluate("navigator.clipboard.readText()") == code

    admin.wait_for_selector("#assignment-counts td[data-status=submitted]:text-is('1')", timeout=15_000)
    admin.wait_for_selector("#description-counts td[data-status=submitted]:text-is('5')")
    assert admin.locator("#worker-table tbody tr td").first.text_content() == "worker-five"
    shot(admin, "8-admin-campaign-dashboard", stack)


def test_world_frame_pick_writes_the_sentence_and_survives_a_reload(stack, new_page):
    base = stack["base"]
    admin = new_page()
    login(admin, base, "admin")
    campaign_id = create_campaign(admin, base, name="Anchors", kind="world_frame")
    worker = new_page()
    worker.goto(f"{base}/crowd/campaigns/{campaign_id}/?PROLIFIC_PID=worker-frame&STUDY_ID=st-6&SESSION_ID=se-6")
    worker.wait_for_url(re.compile(r".*/annotate/\d+/$"))
    label = worker.locator("#anchor option").nth(1).text_content()
    worker.select_option("#anchor", label=label)
    worker.check("input[name=side][value=left]")
    assert worker.locator("#frame-text").input_value() == f"The {label} was located at the left of the scene."
    worker.wait_for_selector("#draft-status:has-text('draft saved')", timeout=15_000)
    worker.reload()
    assert worker.locator("#anchor").evaluate("s => s.selectedOptions[0].textContent") == label
    assert worker.locator("input[name=side][value=left]").is_checked()
    worker.fill("#frame-text", "Nothing useful here.")
    worker.click("#submit-task")
    worker.wait_for_selector(f"#task-error:has-text('must name the {label}')")
    worker.fill("#frame-text", f"The {label} stands at the left of the scene.")
    worker.click("#submit-task")
    worker.wait_for_url(re.compile(r".*/done/$"))
    assert worker.locator("#completion-code").text_content().startswith("CQA_")
