"""Step 2: a reviewer refines (raw kept), approves, and writes a question with its answer."""

import pytest

from benchmarks.models import ContextChange, Item
from core import roles
from review.models import ChangeRevision
from tests.factories import ChangeFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer_client(client):
    reviewer = UserFactory(role=roles.REVIEWER)
    client.force_login(reviewer)
    client.user = reviewer
    return client


def post(client, url, data):
    return client.post(url, data, content_type="application/json")


def test_refine_keeps_raw_text_and_records_a_revision(reviewer_client):
    change = ChangeFactory()
    refined = "The chair has been moved from the desk to the window beside the bookshelf."
    response = post(reviewer_client, f"/api/v1/changes/{change.pk}/refine/", {"text": refined, "version": 1})
    assert response.status_code == 200, response.json()
    change.refresh_from_db()
    assert change.raw_text.startswith("The chair has been moved from the desk to the window next")
    assert change.refined_text == refined and change.version == 2
    assert ChangeRevision.objects.get().author == reviewer_client.user


def test_stale_edit_gets_409_and_keeps_both_versions(reviewer_client):
    change = ChangeFactory()
    first = "The chair has been moved from the desk to the window by the shelf."
    assert post(reviewer_client, f"/api/v1/changes/{change.pk}/refine/", {"text": first, "version": 1}).status_code == 200
    stale = post(reviewer_client, f"/api/v1/changes/{change.pk}/refine/",
                 {"text": "A different rewrite of the whole change text here.", "version": 1})
    assert stale.status_code == 409
    assert stale.json()["current"]["text"] == first
    change.refresh_from_db()
    assert change.refined_text == first and change.revisions.count() == 1


def test_approve_then_question_creates_an_item_awaiting_a_second_reviewer(reviewer_client):
    change = ChangeFactory()
    assert post(reviewer_client, f"/api/v1/changes/{change.pk}/approve/", {"version": 1}).status_code == 200
    response = post(reviewer_client, f"/api/v1/changes/{change.pk}/questions/",
                    {"question": "What is now directly left of the chair?", "answer": "window",
                     "question_type": ["Direction"]})
    assert response.status_code == 201, response.json()
    item = Item.objects.get()
    assert item.status == "draft" and item.answers == ["window"]  # approved by another reviewer
    assert item.tags == {"change_type": "movement", "question_type": ["Direction"]}


def test_question_on_unapproved_change_is_refused(reviewer_client):
    change = ChangeFactory()
    response = post(reviewer_client, f"/api/v1/changes/{change.pk}/questions/",
                    {"question": "What is left of the chair?", "answer": "window", "question_type": ["Direction"]})
    assert response.status_code == 400 and "approved" in response.json()["change"][0]
    assert not Item.objects.exists()


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"question": "Where?", "answer": "window", "question_type": ["Direction"]}, "question"),
        ({"question": "What is left of the chair now?", "answer": "", "question_type": ["Direction"]}, "answer"),
        ({"question": "What is left of the chair now?", "answer": "window", "question_type": ["Colour"]},
         "question_type"),
    ],
)
def test_bad_question_input_names_the_field(reviewer_client, payload, field):
    change = ChangeFactory(status="approved")
    response = post(reviewer_client, f"/api/v1/changes/{change.pk}/questions/", payload)
    assert response.status_code == 400 and field in response.json()
    assert not Item.objects.exists()


def test_nobody_reviews_their_own_work(client):
    change = ChangeFactory()
    change.author.groups.add(*UserFactory(role=roles.REVIEWER).groups.all())
    client.force_login(change.author)
    response = post(client, f"/api/v1/changes/{change.pk}/approve/", {"version": 1})
    assert response.status_code == 403
    assert ContextChange.objects.get().status == "submitted"


def test_reject_needs_known_criteria(reviewer_client):
    change = ChangeFactory()
    bad = post(reviewer_client, f"/api/v1/changes/{change.pk}/reject/", {"version": 1, "criteria": ["boring"]})
    assert bad.status_code == 400 and "criteria" in bad.json()
    ok = post(reviewer_client, f"/api/v1/changes/{change.pk}/reject/",
              {"version": 1, "criteria": ["unambiguous"], "note": "Which chair?"})
    assert ok.status_code == 200 and ok.json()["status"] == "rejected"


def test_annotators_cannot_use_review_endpoints(client):
    change = ChangeFactory()
    client.force_login(UserFactory(role=roles.ANNOTATOR))
    assert post(client, f"/api/v1/changes/{change.pk}/approve/", {"version": 1}).status_code == 403
