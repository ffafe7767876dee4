"""Reviewers see and edit what each family's item is (issue #42): the review page shows the item's
stimulus (its image with the annotator's marks, the paired videos for the frame-locked player, the 3D
viewer only for a scan), offers the family's tags and reject criteria rather than Hypo3D's, and an edit
of choices, answers and tags is held to the annotators' rules. The drafted-question filter shows the
image and the options."""

import json
import re

import pytest

from annotation import services as annotation_services
from benchmarks.models import Item
from benchmarks.services import store_asset
from core import roles
from tests.annotation.test_annotation_kinds import enter, submit
from tests.annotation.test_overlay_authoring import ARROW, START_BOX, png
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

QUESTION = "The red ball rolls along the arrow. Will it hit the blue box?"


def crowd_item(client, family: str, kind: str, answer: dict, media: str = "image") -> Item:
    """An item written through the crowd path on a scene with an image (or a before/after pair)."""
    benchmark = BenchmarkFactory(family=family)
    scene = SceneFactory(benchmark=benchmark, object_labels=[])
    if media == "image":
        store_asset(scene, "image", "table.png", png(), {})
    else:
        for which in ("before", "after"):
            store_asset(scene, "video", f"{which}.mp4", b"\x00" * 64, {"which": which, "fps": 25})
    campaign = annotation_services.create_campaign(benchmark, "Items", "", [scene], kind=kind)
    response = submit(client, enter(client, campaign), answer)
    assert response.status_code == 201, response.json()
    client.logout()
    return Item.objects.get(benchmark=benchmark)


def causal_item(client) -> Item:
    return crowd_item(client, "causalspatial", "choice_image", {
        "question": QUESTION, "choices": ["Yes", "No"], "not_sure": True, "correct": ["A"],
        "tags": {"level": "L1", "task": "collision"}, "overlays": [ARROW, START_BOX]})


def page_json(html: str, element_id: str):
    found = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(found.group(1))


def reviewer(client):
    user = UserFactory(role=roles.REVIEWER)
    client.force_login(user)
    return user


def edit(client, item, **body):
    return client.post(f"/api/v1/items/{item.pk}/edit/", {"version": item.version, "question": item.question,
                                                          "answers": item.answers, **body},
                       content_type="application/json")


def test_a_causalspatial_item_shows_its_image_with_the_marks_and_the_familys_form(client):
    item = causal_item(client)
    assert item.tags["question_type"] == ["collision"] and "fine_question_type" not in item.tags
    reviewer(client)
    html = client.get(f"/review/items/{item.pk}/").content.decode()
    stimulus = page_json(html, "stimulus-data")
    assert len(stimulus["images"]) == 1 and stimulus["videos"] is None
    marks = stimulus["images"][0]["overlays"]
    assert [m["type"] for m in marks] == ["arrow", "start_box"]
    assert marks[0]["from"] == [20.0, 30.0] and marks[0]["to"] == [80.0, 30.0]  # the image's pixels (100 x 60)
    assert 'id="stimulus-images"' in html and "pointcloud" not in html  # no empty 3D box
    assert 'value="Scale"' not in html and 'value="needs_scene_and_change"' not in html  # not Hypo3D's
    assert 'value="causal"' in html and 'value="marks_match"' in html
    assert 'id="item-choice-C" class="item-choice" value="Not sure"' in html
    assert re.search(r'<option value="collision" selected>', html) and re.search(r'<option value="L1" selected>', html)


def test_a_reviewer_edits_choices_and_tags_by_the_annotators_rules(client):
    item = causal_item(client)
    reviewer(client)
    refused = edit(client, item, choices=["Yes"], answers=["A"])
    assert refused.status_code == 400 and "2 to 7 choices" in refused.json()["choices"][0]
    refused = edit(client, item, choices=["Yes", "No", "Not sure"], answers=["C"])
    assert refused.status_code == 400 and "Not sure" in refused.json()["correct"][0]
    refused = edit(client, item, choices=["Yes", "yes"], answers=["A"])
    assert refused.status_code == 400 and "same thing" in refused.json()["choices"][0]
    refused = edit(client, item, tags={"level": "L9", "task": "collision"})
    assert refused.status_code == 400 and "level" in refused.json()["tags"][0]
    done = edit(client, item, choices=["It hits the box", "It misses the box", "Not sure"], answers=["B"],
                tags={"level": "L2", "task": "occlusion"})
    assert done.status_code == 200, done.json()
    item.refresh_from_db()
    assert item.choices == ["It hits the box", "It misses the box", "Not sure"] and item.answers == ["B"]
    assert (item.tags["level"], item.tags["task"], item.tags["question_type"]) == ("L2", "occlusion", ["occlusion"])
    assert item.tags["not_sure"] == "C"
    assert item.revisions.last().note.startswith("choices: It hits the box")


def test_the_familys_criteria_reject_and_hypo3ds_do_not(client):
    item = causal_item(client)
    reviewer(client)
    url = f"/api/v1/items/{item.pk}/reject/"
    refused = client.post(url, {"version": item.version, "criteria": ["needs_scene_and_change"]},
                          content_type="application/json")
    assert refused.status_code == 400 and "marks_match" in refused.json()["allowed_criteria"]
    done = client.post(url, {"version": item.version, "criteria": ["marks_match"], "note": "The arrow misses."},
                       content_type="application/json")
    assert done.status_code == 200
    assert "The arrow and boxes drawn match" in client.get(f"/review/items/{item.pk}/").content.decode()


def test_an_m3verse_item_shows_the_paired_videos_and_takes_its_capabilities(client):
    item = crowd_item(client, "m3verse", "choice_video", {
        "question": "Which object was moved between the videos?", "choices": ["The lamp", "The chair"],
        "correct": ["A"], "tags": {"state_type": "inter-states", "capabilities": ["spatial understanding"]}},
        media="videos")
    reviewer(client)
    html = client.get(f"/review/items/{item.pk}/").content.decode()
    videos = page_json(html, "stimulus-data")["videos"]
    assert videos["before"].endswith("before.mp4") and videos["after"].endswith("after.mp4") and videos["fps"] == 25
    assert 'id="stimulus-videos"' in html and "pointcloud" not in html
    assert 'value="hallucination_right"' in html
    done = edit(client, item, answers=["A", "B"],
                choices=["The lamp", "The chair"], tags={"state_type": "inter-states",
                                                         "capabilities": ["reasoning", "temporal understanding"]})
    assert done.status_code == 200, done.json()
    item.refresh_from_db()
    assert item.answer_format == "multi" and item.tags["capabilities"] == ["reasoning", "temporal understanding"]


def test_a_hypo3d_item_keeps_its_question_types_criteria_and_scan_viewer(client):
    item = ItemFactory()
    reviewer(client)
    html = client.get(f"/review/items/{item.pk}/").content.decode()
    assert 'value="Scale"' in html and 'value="needs_scene_and_change"' in html
    assert 'id="item-family-tags"' not in html
    refused = edit(client, item, question_type=["Spatial"])
    assert refused.status_code == 400 and "Scale" in refused.json()["question_type"][0]


def test_the_filter_page_shows_the_drafts_image_marks_and_options(client):
    item = causal_item(client)
    reviewer(client)
    html = client.get("/review/filtering/").content.decode()
    stimuli = page_json(html, "stimuli-data")
    assert [m["type"] for m in stimuli[str(item.pk)]["images"][0]["overlays"]] == ["arrow", "start_box"]
    assert '<ol type="A" class="draft-options"><li>Yes</li><li>No</li><li>Not sure</li></ol>' in html


def test_the_item_analysis_shows_each_items_image_with_its_marks(client):
    from tests.results.test_human_row_comparisons import bench_and_run

    bench, items, _ = bench_and_run(n_items=2, right=range(1))
    store_asset(items[0].scene, "image", "view.png", png(), {})
    Item.objects.filter(pk=items[0].pk).update(overlays=[ARROW])
    reviewer(client)
    html = client.get(f"/review/item-analysis/{bench.slug}/", {"flag": ""}).content.decode()
    stimuli = page_json(html, "stimuli-data")
    assert [m["type"] for m in stimuli[str(items[0].pk)]["images"][0]["overlays"]] == ["arrow"]
    assert stimuli[str(items[1].pk)]["images"][0]["overlays"] == []  # same scene, no marks of its own
    assert f'<td class="draft-stimulus" data-item="{items[0].pk}">' in html


def test_a_reviewer_sets_a_3dsrbench_items_flip_decision(client):
    item = crowd_item(client, "3dsrbench", "choice_image", {
        "question": "Is the car to the left of the lamp post?", "choices": ["yes", "no"], "correct": ["A"],
        "flip": "swap", "tags": {"subtype": "location_next_to"}})
    assert item.tags["flip"] == "swap"
    reviewer(client)
    html = client.get(f"/review/items/{item.pk}/").content.decode()
    assert '<option value="swap" selected>' in html and 'id="item-flip"' in html
    tags = {"subtype": "location_next_to"}
    refused = edit(client, item, tags={**tags, "flip": "maybe"})
    assert refused.status_code == 400 and "swap, same, none" in refused.json()["tags"][0]
    assert edit(client, item, tags={**tags, "flip": "none"}).status_code == 200
    item.refresh_from_db()
    assert item.tags["flip"] == "none"


def test_the_authoring_page_asks_the_flip_decision_only_where_the_family_is_mirrored(client):
    flipped = crowd_item(client, "spatial457", "choice_image", {
        "question": "How many cubes are there?", "choices": ["two", "three"], "correct": ["A"],
        "tags": {"level": "L2_objects"}})
    assert "flip" not in flipped.tags
    benchmark = BenchmarkFactory(family="3dsrbench")
    scene = SceneFactory(benchmark=benchmark, object_labels=[])
    store_asset(scene, "image", "street.png", png(), {})
    campaign = annotation_services.create_campaign(benchmark, "Items", "", [scene], kind="choice_image")
    assignment = enter(client, campaign, "PID7")
    page = client.get(f"/annotate/{assignment.pk}/").content.decode()
    assert '<select id="flip">' in page and '<option value="none">' in page
