"""A campaign's kinds, question types and change type come from its benchmark's family (issue #42): a
CausalSpatial campaign is a choice campaign with no Hypo3D change type or question types, its items
placed by their family tags; M3-Verse annotators get the evaluators' frame-locked paired player; the
choice pages' inputs are labelled."""

import json
import re

import pytest

from annotation import families, services
from annotation.models import Campaign
from benchmarks.models import Item
from benchmarks.services import store_asset
from core import roles
from core.errors import DomainError
from tests.annotation.test_annotation_kinds import enter, submit
from tests.annotation.test_overlay_authoring import png
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


def form_of(scene, **fields):
    return {"name": "Built items", "change_type": "", "min_words": "10", "descriptions_per_assignment": "5",
            "lease_minutes": "30", "pay_cents": "150", "pay_unit": "3", "quiz_max_attempts": "2",
            "is_active": "on", "scenes": [str(scene.pk)], "quiz-rows": "0", "type-rows": "0", **fields}


@pytest.mark.parametrize("family, kind", [("causalspatial", "choice_image"), ("3dsrbench", "choice_image"),
                                          ("spatial457", "choice_image"), ("m3verse", "choice_video")])
def test_a_new_campaign_on_a_choice_family_is_its_choice_kind_without_hypo3ds_vocabulary(client, family, kind):
    benchmark = BenchmarkFactory(family=family)
    scene = SceneFactory(benchmark=benchmark)
    client.force_login(UserFactory(role=roles.ADMIN))
    url = f"/manage/{benchmark.slug}/campaigns/new/"
    page = client.get(url).content.decode()
    kinds = re.findall(r'<option value="(\w+)"( selected)?>', page.split('name="kind"')[1].split("</select>")[0])
    assert [k for k, _ in kinds] == [kind, "answer_only"] and kinds[0][1] == " selected"
    assert "Proximity" not in page and "context_change" not in page.split('name="kind"')[1].split("</select>")[0]
    assert '<option value="" selected>None (not a context-change campaign)</option>' in page
    created = client.post(url, form_of(scene, kind=kind))
    assert created.status_code == 302, created.content.decode()[:2000]
    campaign = Campaign.objects.get()
    assert (campaign.kind, campaign.change_type, campaign.question_types) == (kind, "", {})


def test_hypo3d_keeps_its_kinds_change_type_and_question_types(client):
    benchmark = BenchmarkFactory(family="hypo3d")
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/manage/{benchmark.slug}/campaigns/new/").content.decode()
    assert 'value="context_change" selected' in page and "choice_image" not in page and "Proximity" in page
    assert '<option value="movement" selected>' in page
    with pytest.raises(DomainError, match="Change type"):
        services.create_campaign(benchmark, "No type", "", [SceneFactory(benchmark=benchmark)])


def test_the_form_refuses_a_kind_the_familys_material_cannot_hold(client):
    benchmark = BenchmarkFactory(family="causalspatial")
    scene = SceneFactory(benchmark=benchmark)
    client.force_login(UserFactory(role=roles.ADMIN))
    refused = client.post(f"/manage/{benchmark.slug}/campaigns/new/", form_of(scene, kind="context_change",
                                                                            change_type="movement"))
    assert refused.status_code == 400 and "A causalspatial campaign is one of" in refused.content.decode()
    assert not Campaign.objects.exists()
    # the services' callers name a change type for a context-change campaign; without one, the family's kind
    campaign = services.create_campaign(benchmark, "Default", "", [scene])
    assert (campaign.kind, campaign.change_type, campaign.question_types) == ("choice_image", "", {})
    assert services.create_campaign(benchmark, "Named", "movement", [scene]).kind == "context_change"
    with pytest.raises(DomainError, match="Change type"):
        services.update_campaign(campaign.pk, kind="context_change")
    assert families.kind_choices("m3verse")[0][0] == "choice_video"


def test_a_choice_item_without_a_taxonomy_takes_its_question_type_from_its_tags(client):
    benchmark = BenchmarkFactory(family="3dsrbench")
    scene = SceneFactory(benchmark=benchmark, object_labels=[])
    store_asset(scene, "image", "street.png", png(), {})
    campaign = services.create_campaign(benchmark, "Items", "", [scene], kind="choice_image")
    assignment = enter(client, campaign)
    page = client.get(f"/annotate/{assignment.pk}/").content.decode()
    assert 'id="question-type"' not in page
    response = submit(client, assignment, {
        "question": "Is the car to the left of the lamp post?", "choices": ["yes", "no"], "correct": ["A"],
        "flip_swaps": True, "tags": {"subtype": "location_next_to"}, "question_type": "ignored"})
    assert response.status_code == 201, response.json()
    item = Item.objects.get()
    assert item.tags["question_type"] == ["location"] and item.tags["category"] == "location"


def test_an_m3verse_annotator_gets_the_frame_locked_paired_player(client):
    benchmark = BenchmarkFactory(family="m3verse")
    scene = SceneFactory(benchmark=benchmark, object_labels=[])
    for which in ("before", "after"):
        store_asset(scene, "video", f"{which}.mp4", b"\x00" * 64, {"which": which, "fps": 30})
    campaign = services.create_campaign(benchmark, "Videos", "", [scene], kind="choice_video")
    assignment = enter(client, campaign)
    page = client.get(f"/annotate/{assignment.pk}/").content.decode()
    task = json.loads(re.search(r'<script id="task-data" type="application/json">(.*?)</script>', page, re.S).group(1))
    assert task["videos"]["before"].endswith("before.mp4") and task["videos"]["after"].endswith("after.mp4")
    assert task["videos"]["fps"] == 30
    assert 'id="videos"' in page and "<video " not in page  # the player, not two plain stacked videos


def test_the_api_makes_a_campaign_of_the_familys_kind_when_none_is_named(client):
    client.force_login(UserFactory(role=roles.ADMIN))
    for family, kind, change_type in (("causalspatial", "choice_image", ""), ("m3verse", "choice_video", ""),
                                      ("hypo3d", "context_change", "movement")):
        benchmark = BenchmarkFactory(family=family)
        scene = SceneFactory(benchmark=benchmark)
        response = client.post("/api/v1/campaigns/", {"benchmark": benchmark.slug, "name": f"API {family}",
                                                      "scenes": [scene.pk]}, content_type="application/json")
        assert response.status_code == 201, response.json()
        assert (response.json()["kind"], response.json()["change_type"]) == (kind, change_type)
