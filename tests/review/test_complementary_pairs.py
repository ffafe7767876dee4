"""3DSRBench's complementary image pairs (#29): the same question on another image with the opposite
answer, written as a draft beside the original and linked to it; once reviewed, each is its own
question in the paper's tables (its own CircularEval group, in the same category cell)."""

import io

import pytest
from PIL import Image

import scoring
from benchmarks.models import Item
from benchmarks.services import gold_row, store_asset
from core import roles
from review import services as review_services
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


def png(colour=(200, 100, 50)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 12), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def picture_scene(benchmark, name):
    scene = SceneFactory(benchmark=benchmark, external_id=name, object_labels=[])
    store_asset(scene, "image", f"{name}.png", png())
    return scene


@pytest.fixture
def original():
    benchmark = BenchmarkFactory(family="3dsrbench")
    return Item.objects.create(
        benchmark=benchmark, scene=picture_scene(benchmark, "VIN6MS3J"), question="Is the lamp higher than the man?",
        choices=["yes", "no"], answers=["A"], answer_format="single", status="approved",
        tags={"category": "height", "subtype": "height_higher", "flip": "same", "viewpoint": "common"})


@pytest.fixture
def reviewer(client):
    user = UserFactory(role=roles.REVIEWER)
    client.force_login(user)
    client.user = user
    return client


def test_an_uploaded_complementary_image_becomes_a_draft_beside_the_original(reviewer, original):
    response = reviewer.post(f"/api/v1/items/{original.pk}/complement/",
                             {"image": io.BytesIO(png((10, 10, 10))), "answers": '["B"]'})
    assert response.status_code == 201, response.json()
    pair = Item.objects.get(pk=response.json()["id"])
    original.refresh_from_db()
    assert original.status == "approved" and Item.objects.count() == 2  # beside, not instead of
    assert pair.status == "draft" and pair.complement_of == original and list(original.complements.all()) == [pair]
    assert (pair.question, pair.choices, pair.answers) == (original.question, original.choices, ["B"])
    assert pair.scene != original.scene and pair.scene.assets.get().role == "image"
    assert pair.tags == {"category": "height", "subtype": "height_higher", "flip": "same"}  # the image's own tags go
    assert pair.provenance == {"source": "authored", "pair": "image", "complement_of": original.pk,
                               "author": reviewer.user.pk}
    again = reviewer.post(f"/api/v1/items/{original.pk}/complement/", {"image": io.BytesIO(png()), "answers": "B"})
    assert again.status_code == 409 and "already has a complementary image" in again.json()["item"][0]


def test_a_scene_holding_the_image_may_be_named_and_the_opposite_answer_is_inferred(reviewer, original):
    other = picture_scene(original.benchmark, "Q2PAIR01")
    response = reviewer.post(f"/api/v1/items/{original.pk}/complement/", {"scene": other.pk},
                             content_type="application/json")
    assert response.status_code == 201, response.json()
    assert response.json()["answers"] == ["B"] and response.json()["scene"] == "Q2PAIR01"


@pytest.mark.parametrize("body, field, words", [
    ({"scene": "same"}, "scene", "another image"),
    ({"scene": 999999}, "scene", "Pick a scene"),
    ({"scene": "other", "answers": ["A"]}, "answers", "different answer"),
    ({"scene": "other", "answers": ["E"]}, "answers", "by letter"),
    ({}, "scene", "either the scene"),
])
def test_bad_requests_name_the_field(reviewer, original, body, field, words):
    other = picture_scene(original.benchmark, "OTHER001")
    body = {**body, **({"scene": {"same": original.scene.pk, "other": other.pk}.get(body.get("scene"),
                                                                                    body.get("scene"))}
                       if "scene" in body else {})}
    response = reviewer.post(f"/api/v1/items/{original.pk}/complement/", body, content_type="application/json")
    assert response.status_code == 400 and words in response.json()[field][0], response.json()
    assert Item.objects.count() == 1


def test_a_four_option_item_needs_its_answer_and_a_bad_image_is_refused(reviewer, original):
    original.choices, original.answers = ["front", "back", "left", "right"], ["C"]
    original.save()
    other = picture_scene(original.benchmark, "OTHER002")
    needs = reviewer.post(f"/api/v1/items/{original.pk}/complement/", {"scene": other.pk},
                          content_type="application/json")
    assert needs.status_code == 400 and "answers" in needs.json()
    bad = reviewer.post(f"/api/v1/items/{original.pk}/complement/",
                        {"image": io.BytesIO(b"not a picture"), "answers": '["D"]'})
    assert bad.status_code == 400 and "image" in bad.json()


def test_both_images_count_as_questions_in_the_category_cell(reviewer, original):
    pair_id = reviewer.post(f"/api/v1/items/{original.pk}/complement/",
                            {"image": io.BytesIO(png()), "answers": '["B"]'}).json()["id"]
    pair = Item.objects.get(pk=pair_id)
    review_services.approve_item(pair.pk, UserFactory(role=roles.REVIEWER), pair.version)  # another reviewer
    gold = [gold_row(item) for item in Item.objects.filter(status="approved").order_by("pk")]
    assert len({row["id"] for row in gold}) == 2
    # a model that always says "yes" (the prior the pair removes) is right on one image only
    result = scoring.score("3dsrbench", gold, [{"id": row["id"], "output": "A"} for row in gold], by=["category"])
    assert result["overall"]["circular"] == 50.0, result["overall"]
    assert result["by"]["category=height"]["circular"] == 50.0


def test_the_review_page_adds_the_complementary_image_from_a_form(reviewer, original):
    page = reviewer.get(f"/review/items/{original.pk}/").content.decode()
    assert 'id="complement-image"' in page and '<option value="A" disabled>' in page
    response = reviewer.post(f"/review/items/{original.pk}/complement/",
                             {"image": io.BytesIO(png()), "answers": "B"})
    pair = Item.objects.get(complement_of=original)
    assert response.status_code == 302 and response["Location"] == f"/review/items/{pair.pk}/"
    assert pair.status == "draft" and pair.answers == ["B"]
    assert f"item #{original.pk}" in reviewer.get(response["Location"]).content.decode()
    refused = reviewer.post(f"/review/items/{original.pk}/complement/", {"answers": "B"})
    assert refused.status_code == 409  # one complementary image per item
    assert reviewer.get(f"/review/items/{original.pk}/complement/").status_code == 405
