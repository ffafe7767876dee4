"""A change's geometry in review (#47): the reviewer sees each question's derived answer beside the written one
(agreeing as Hypo3D's normalisation says), drafts questions the geometry answers (saved only when asked),
replaces the edit (checked against the text) and cannot refine the text into disagreeing with it; an
annotator gets 403 on each of these operations."""

import pytest

from annotation import services as annotation_services
from benchmarks.models import Item
from core import roles
from review import geometry
from tests.annotation.geometry_rooms import CHAIR, approve_frame, create_objects, move
from tests.factories import ChangeFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

LEFT_OF_BED = "The chair has been moved from the desk to the left of the bed."


@pytest.fixture
def change():
    scene = SceneFactory(object_labels=[])
    create_objects(scene)
    approve_frame(scene)
    edit = annotation_services.checked_edit(scene, LEFT_OF_BED, "movement", move(CHAIR, -3.0, 2.7))
    change = ChangeFactory(scene=scene, raw_text=LEFT_OF_BED, status="approved", edit=edit)
    ItemFactory(change=change, question="What is the direction of the chair relative to the bed?",
                answers=["to the left"])
    ItemFactory(change=change, question="Which is larger, the bed or the desk?", answers=["desk"])
    ItemFactory(change=change, question="What colour is the bed?", answers=["white"])
    return change


@pytest.fixture
def reviewer(client):
    client.force_login(UserFactory(role=roles.REVIEWER))
    return client


@pytest.fixture
def annotator(client):
    client.force_login(UserFactory(role=roles.ANNOTATOR))
    return client


def test_each_question_shows_its_derived_answer_and_whether_it_agrees(change):
    rows = geometry.derived_answers(change)
    assert [(r["question"], r["derived"], r["agrees"]) for r in rows] == [
        ("What is the direction of the chair relative to the bed?", "left", True),  # "to the left" normalises
        ("Which is larger, the bed or the desk?", "bed", False),
        ("What colour is the bed?", None, None),
    ]
    assert rows[1]["answers"] == ["desk"]


def test_the_reviewer_reads_derived_answers_through_the_api(reviewer, change):
    response = reviewer.get(f"/api/v1/changes/{change.pk}/derived-answers/")
    assert response.status_code == 200
    assert [r["agrees"] for r in response.json()] == [True, False, None]


def test_generated_questions_are_drafts_until_saved(reviewer, change):
    items = Item.objects.count()
    drafted = reviewer.post(f"/api/v1/changes/{change.pk}/generated-questions/", {}, content_type="application/json")
    assert drafted.status_code == 200
    drafts = {d["question"]: d for d in drafted.json()}
    assert drafts["What is the direction of the chair relative to the bed?"]["answer"] == "left"
    assert all(d["item"] is None for d in drafts.values()) and Item.objects.count() == items

    saved = reviewer.post(f"/api/v1/changes/{change.pk}/generated-questions/", {"save": True, "limit": 3},
                          content_type="application/json")
    assert saved.status_code == 201
    new = [d for d in saved.json() if d["item"] is not None]
    assert len(new) == 3
    direction = next(d for d in new if "direction" in d["question"])
    assert Item.objects.get(pk=direction["item"]).pk == change.items.get(question__startswith="What is the dir").pk
    written = [Item.objects.get(pk=d["item"]) for d in new if "direction" not in d["question"]]
    assert all(item.answers == [d["answer"]] for item, d in zip(written, [d for d in new if "direction" not in
                                                                          d["question"]], strict=True))
    assert Item.objects.count() == items + 2  # the direction question existed: it is not written twice


def test_the_reviewer_replaces_the_edit_checked_against_the_text(reviewer, change):
    url = f"/api/v1/changes/{change.pk}/geometry/"
    wrong = reviewer.post(url, {"version": change.version, "edit": move(CHAIR, -3.0, -0.1)},
                          content_type="application/json")
    assert wrong.status_code == 400
    assert wrong.json()["problems"] == [
        "The text puts the chair left of the bed, but the move puts it to the bed's right (world frame)."]
    malformed = reviewer.post(url, {"version": change.version, "edit": {"objects": [{"instance_id": CHAIR}]}},
                              content_type="application/json")
    assert malformed.status_code == 400 and malformed.json()["path"] == "edit.objects[0]"
    ok = reviewer.post(url, {"version": change.version, "edit": move(CHAIR, -3.2, 2.6)},
                       content_type="application/json")
    assert ok.status_code == 200, ok.json()
    assert ok.json()["edit"]["objects"][0]["translation"] == [-3.2, 2.6, 0.0]
    assert ok.json()["version"] == change.version + 1
    stale = reviewer.post(url, {"version": change.version, "edit": None}, content_type="application/json")
    assert stale.status_code == 409


def test_a_refinement_must_still_agree_with_the_edit(reviewer, change):
    refused = reviewer.post(f"/api/v1/changes/{change.pk}/refine/", {
        "version": change.version, "text": "The chair has been moved from the desk to the right of the bed."},
        content_type="application/json")
    assert refused.status_code == 400
    assert "puts it to the bed's left (world frame)" in refused.json()["text"][0]
    agreed = reviewer.post(f"/api/v1/changes/{change.pk}/refine/", {
        "version": change.version, "text": "The chair has been moved from the desk to the left side of the bed."},
        content_type="application/json")
    assert agreed.status_code == 200


@pytest.mark.parametrize(("method", "path"), [
    ("get", "derived-answers/"), ("post", "generated-questions/"), ("post", "geometry/"),
])
def test_an_annotator_gets_403(annotator, change, method, path):
    url = f"/api/v1/changes/{change.pk}/{path}"
    response = (annotator.get(url) if method == "get" else
                annotator.post(url, {"version": change.version, "edit": None}, content_type="application/json"))
    assert response.status_code == 403


def test_the_authors_resubmission_must_agree_with_the_edit(client, change):
    change.status = "rejected"
    change.save(update_fields=["status"])
    client.force_login(change.author)
    url = f"/api/v1/changes/{change.pk}/resubmit/"
    refused = client.post(url, {"version": change.version, "text": LEFT_OF_BED.replace("left", "right")},
                          content_type="application/json")
    assert refused.status_code == 400 and "(world frame)" in refused.json()["text"][0]
    assert client.post(url, {"version": change.version, "text": LEFT_OF_BED + " It faces the bed."},
                       content_type="application/json").status_code == 200
