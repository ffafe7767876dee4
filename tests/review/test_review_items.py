"""Item review: edits are revisions with a diff, stale saves get 409, rejections go back to the
author with their criteria, and everyone sees who wrote and changed what."""

import pytest

from benchmarks.models import ContextChange, Item
from core import roles
from review.models import ItemRevision
from review.services import word_diff
from tests.factories import ChangeFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def post(client, url, data):
    return client.post(url, data, content_type="application/json")


@pytest.fixture
def reviewer_client(client):
    client.user = UserFactory(role=roles.REVIEWER)
    client.force_login(client.user)
    return client


def test_item_edit_is_a_revision_and_the_history_shows_original_and_diff(reviewer_client):
    item = ItemFactory(author=UserFactory(username="writer"))
    response = post(reviewer_client, f"/api/v1/items/{item.pk}/edit/", {
        "version": 1, "question": "What is directly to the right of the chair now?", "answers": ["bookshelf"],
        "question_type": ["Direction", "Semantic"]})
    assert response.status_code == 200, response.json()
    assert response.json()["version"] == 2
    item.refresh_from_db()
    assert item.answers == ["bookshelf"] and item.tags["question_type"] == ["Direction", "Semantic"]
    history = reviewer_client.get(f"/api/v1/items/{item.pk}/history/").json()
    original, edit = history
    assert original["author"] == "writer" and original["question"] == "What is directly to the left of the chair now?"
    assert edit["author"] == reviewer_client.user.username and edit["answers_before"] == ["window"]
    assert "[-left-] {+right+}" in edit["diff"]


def test_stale_item_save_gets_409_with_the_current_item_and_nothing_lost(reviewer_client):
    item = ItemFactory()
    first = {"version": 1, "question": "Which object is now closest to the chair?", "answers": ["window"]}
    assert post(reviewer_client, f"/api/v1/items/{item.pk}/edit/", first).status_code == 200
    stale = post(reviewer_client, f"/api/v1/items/{item.pk}/edit/",
                 {"version": 1, "question": "A rewrite from an older copy of the item?", "answers": ["desk"]})
    assert stale.status_code == 409
    body = stale.json()
    assert body["current"]["version"] == 2 and body["current"]["question"] == first["question"]
    item.refresh_from_db()
    assert item.question == first["question"] and ItemRevision.objects.filter(item=item).count() == 2


@pytest.mark.parametrize(("payload", "field"), [
    ({"version": 1, "question": "Where?", "answers": ["window"]}, "question"),
    ({"version": 1, "question": "What is left of the chair now?", "answers": [""]}, "answers"),
    ({"version": 1, "question": "What is left of the chair now?", "answers": ["w"], "question_type": ["Colour"]},
     "question_type"),
    ({"version": "one", "question": "What is left of the chair now?", "answers": ["window"]}, "version"),
])
def test_bad_item_edits_name_the_field_and_write_nothing(reviewer_client, payload, field):
    item = ItemFactory()
    response = post(reviewer_client, f"/api/v1/items/{item.pk}/edit/", payload)
    assert response.status_code == 400 and field in response.json()
    assert Item.objects.get().version == 1 and not ItemRevision.objects.exists()


def test_choice_items_take_letters(reviewer_client):
    item = ItemFactory(answer_format="single", choices=["left", "right"], answers=["A"])
    bad = post(reviewer_client, f"/api/v1/items/{item.pk}/edit/",
               {"version": 1, "question": "Which side is the chair on now?", "answers": ["C"]})
    assert bad.status_code == 400 and "answers" in bad.json()
    ok = post(reviewer_client, f"/api/v1/items/{item.pk}/edit/",
              {"version": 1, "question": "Which side is the chair on now?", "answers": ["B"]})
    assert ok.status_code == 200


def test_self_review_of_items_is_refused(client):
    author = UserFactory(role=roles.REVIEWER)
    item = ItemFactory(author=author, status="draft")
    client.force_login(author)
    assert post(client, f"/api/v1/items/{item.pk}/approve/", {"version": 1}).status_code == 403
    assert Item.objects.get().status == "draft"


def test_item_reject_needs_criteria_and_records_the_decision(reviewer_client):
    item = ItemFactory()
    assert post(reviewer_client, f"/api/v1/items/{item.pk}/reject/", {"version": 1, "criteria": []}).status_code == 400
    ok = post(reviewer_client, f"/api/v1/items/{item.pk}/reject/",
              {"version": 1, "criteria": ["unambiguous", "not_common_sense"], "note": "Two chairs."})
    assert ok.status_code == 200 and ok.json()["status"] == "rejected"
    decision = reviewer_client.get(f"/api/v1/items/{item.pk}/history/").json()[-1]
    assert decision["kind"] == "decision" and decision["criteria"] == ["unambiguous", "not_common_sense"]


def test_rejected_change_goes_back_to_its_author_who_resubmits_it(reviewer_client, client):
    change = ChangeFactory()
    post(reviewer_client, f"/api/v1/changes/{change.pk}/reject/",
         {"version": 1, "criteria": ["unambiguous", "plausible"], "note": "Which chair?"})
    author_client = client.__class__()
    author_client.force_login(change.author)
    returned = author_client.get("/api/v1/review/returned/").json()
    assert returned[0]["id"] == change.pk and returned[0]["note"] == "Which chair?"
    assert len(returned[0]["criteria"]) == 2
    revised = "The black office chair has been moved from the desk to the window."
    assert post(reviewer_client, f"/api/v1/changes/{change.pk}/resubmit/",
                {"version": 2, "text": revised}).status_code == 403
    response = post(author_client, f"/api/v1/changes/{change.pk}/resubmit/", {"version": 2, "text": revised})
    assert response.status_code == 200, response.json()
    change.refresh_from_db()
    assert change.status == "submitted" and change.text == revised
    assert change.raw_text.startswith("The chair has been moved")
    assert ContextChange.objects.filter(pk=change.pk, status="submitted").exists()


def test_change_history_has_raw_revisions_with_diffs_and_decisions(reviewer_client):
    change = ChangeFactory()
    refined = "The chair has been moved from the desk to the window beside the bookshelf."
    post(reviewer_client, f"/api/v1/changes/{change.pk}/refine/", {"version": 1, "text": refined})
    post(reviewer_client, f"/api/v1/changes/{change.pk}/approve/", {"version": 2})
    history = reviewer_client.get(f"/api/v1/changes/{change.pk}/history/").json()
    assert [e["kind"] for e in history] == ["raw", "revision", "decision"]
    assert history[0]["text"] == change.raw_text and history[1]["text"] == refined
    assert history[1]["diff"] == "The chair has been moved from the desk to the window [-next to-] {+beside+} the bookshelf."
    assert history[2]["action"] == "approve"


def test_word_diff_marks_removed_and_added_words():
    assert word_diff("a b c", "a x c") == "a [-b-] {+x+} c"
    assert word_diff("", "new text") == "{+new text+}"


def test_item_page_shows_history_and_the_edit_form(reviewer_client):
    item = ItemFactory()
    post(reviewer_client, f"/api/v1/items/{item.pk}/edit/",
         {"version": 1, "question": "Which object is now closest to the chair?", "answers": ["window"]})
    page = reviewer_client.get(f"/review/items/{item.pk}/").content.decode()
    assert 'id="item-history"' in page and "What is directly to the left of the chair now?" in page
    assert 'id="save-item"' in page and "Which object is now closest to the chair?" in page


def test_review_queue_per_campaign_never_shows_own_work(reviewer_client):
    in_campaign = ChangeFactory(provenance={"campaign": 7})
    ChangeFactory(scene=in_campaign.scene, provenance={"campaign": 8})
    ChangeFactory(scene=in_campaign.scene, author=reviewer_client.user)
    assert len(reviewer_client.get("/api/v1/review/queue/").json()) == 2
    assert [c["id"] for c in reviewer_client.get("/api/v1/review/queue/?campaign=7").json()] == [in_campaign.pk]
    bad = reviewer_client.get("/api/v1/review/queue/?campaign=seven")
    assert bad.status_code == 400 and "campaign" in bad.json()
