"""Campaign kinds beyond context changes: world-frame anchors, questions on approved changes,
multiple-choice items on images and on paired videos, and independent answers for consensus."""

import pytest

from annotation import progress, services
from annotation.models import Assignment, CrowdAnswer
from benchmarks.models import Item, WorldFrame
from core import roles
from crowd import services as crowd_services
from tests.factories import ChangeFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


def campaign_of(kind, scenes, **options):
    return services.create_campaign(scenes[0].benchmark, kind, "movement", scenes, kind=kind, **options)


def enter(client, campaign, pid="PID1"):
    response = client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "S", "SESSION_ID": "X"})
    assert response.status_code == 302, response.content
    return Assignment.objects.get(campaign=campaign, worker__crowd_worker__worker_id=pid, status="leased")


def submit(client, assignment, answer):
    return client.post(f"/api/v1/assignments/{assignment.pk}/submit/", {"answer": answer},
                       content_type="application/json")


# --- World frame --------------------------------------------------------------------------------


@pytest.fixture
def frame_campaign():
    scene = SceneFactory(object_labels=["desk", "chair", "chair", "window"])
    return campaign_of("world_frame", [scene])


def test_world_frame_pick_generates_the_hypo3d_sentence(client, frame_campaign):
    assignment = enter(client, frame_campaign)
    task = client.get(f"/api/v1/assignments/{assignment.pk}/").json()["task"]
    assert [a["label"] for a in task["anchors"]] == ["desk", "window"]  # 'chair' occurs twice
    assert client.get(f"/annotate/{assignment.pk}/").status_code == 200
    response = submit(client, assignment, {"anchor": 1, "side": "left", "text": ""})
    assert response.status_code == 201, response.json()
    frame = WorldFrame.objects.get()
    assert frame.text == "The desk was located at the left of the scene." and frame.anchor.label == "desk"
    assert Assignment.objects.get().result == {"world_frame": frame.pk}


def test_world_frame_text_may_be_edited_but_must_keep_anchor_and_side(client, frame_campaign):
    assignment = enter(client, frame_campaign)
    wrong = submit(client, assignment, {"anchor": 1, "side": "left", "text": "The window is on the right."})
    assert wrong.status_code == 400 and wrong.json()["text"] == ["The frame text must name the desk and the left side."]
    ambiguous = submit(client, assignment, {"anchor": 2, "side": "back"})
    assert ambiguous.status_code == 400 and "pick an anchor whose label occurs once" in ambiguous.json()["anchor"][0]
    bad_side = submit(client, assignment, {"anchor": 1, "side": "up"})
    assert bad_side.status_code == 400 and "side" in bad_side.json()
    assert not WorldFrame.objects.exists()
    edited = submit(client, assignment, {"anchor": 4, "side": "front", "text": "The window marks the front side."})
    assert edited.status_code == 201


# --- Questions on approved changes --------------------------------------------------------------


def test_question_campaign_leases_approved_changes_never_the_workers_own_and_tags_the_type(client):
    scene = SceneFactory()
    approved = ChangeFactory(scene=scene, status="approved")
    ChangeFactory(scene=scene, status="submitted")
    campaign = campaign_of("question_answer", [scene])
    assignment = enter(client, campaign)
    assert assignment.change == approved
    task = client.get(f"/api/v1/assignments/{assignment.pk}/").json()["task"]
    assert task["change"] == approved.text and "Relative Position" in task["question_types"]
    assert client.get(f"/annotate/{assignment.pk}/").status_code == 200
    question = {"question": "What is directly to the left of the chair now?", "answer": "window",
                "question_type": "Nearly Everything"}
    bad = submit(client, assignment, question)
    assert bad.status_code == 400 and bad.json()["question_type"][0].startswith("Pick a question type from:")
    long_answer = {**question, "question_type": "Relative Position", "answer": " ".join(["word"] * 11)}
    assert "at most 10 words" in submit(client, assignment, long_answer).json()["answer"][0]
    assert submit(client, assignment, {**question, "question_type": "Relative Position"}).status_code == 201
    item = Item.objects.get()
    assert item.change == approved and item.status == "draft" and item.answers == ["window"]
    assert item.tags == {"change_type": "movement", "question_type": ["Direction"],
                         "fine_question_type": "Relative Position"}
    assert item.provenance["campaign"] == campaign.pk
    author, _ = crowd_services.enter_from_crowd_link({"worker_id": "AUTHOR", "assignmentId": "A1"}, roles.ANNOTATOR)
    approved.author = author
    approved.save()
    with pytest.raises(Exception, match="all the assignments it needs"):
        services.lease_assignment(campaign, author)


# --- Multiple choice on images and on paired videos ---------------------------------------------


def test_image_choice_item_has_2_to_7_choices_and_says_how_it_flips(client):
    campaign = campaign_of("choice_image", [SceneFactory()], question_types={"location": ["Location"]})
    assignment = enter(client, campaign)
    item = {"question": "Is the mug to the left of the laptop?", "choices": [f"c{n}" for n in range(8)],
            "correct": ["A"], "flip_swaps": True, "question_type": "location"}
    assert "has 2 to 7 choices; this one has 8" in submit(client, assignment, item).json()["choices"][0]
    no_flip = {**item, "choices": ["yes", "no"], "flip_swaps": None}
    assert "mirrored image" in submit(client, assignment, no_flip).json()["flip_swaps"][0]
    assert not Item.objects.exists()
    assert submit(client, assignment, {**item, "choices": ["yes", "no"]}).status_code == 201
    created = Item.objects.get()
    assert created.answer_format == "single" and created.answers == ["A"] and created.tags["flip"] == "swap"


def test_video_choice_items_take_several_correct_and_a_hallucination_form(client):
    campaign = campaign_of("choice_video", [SceneFactory()], question_types={"object_changes": ["Change"]})
    assignment = enter(client, campaign)
    item = {"question": "Which objects newly appear?", "choices": ["Apple", "Mug", "Laptop"], "correct": ["A", "C"],
            "hallucination": False, "question_type": "object_changes"}
    hallucination = {**item, "hallucination": True}
    assert "only correct choice is 'No correct option is listed.'" in submit(client, assignment,
                                                                            hallucination).json()["correct"][0]
    assert submit(client, assignment, item).status_code == 201
    assert Item.objects.get().answer_format == "multi"
    second = enter(client, campaign, "PID2")
    listed = {**hallucination, "choices": ["Apple", "No correct option is listed.", "Mug"], "correct": ["B"]}
    assert submit(client, second, listed).status_code == 201
    assert Item.objects.last().tags["hallucination"] is True


# --- Answer-only --------------------------------------------------------------------------------


def test_answer_only_campaign_shows_no_gold_and_stores_independent_answers(client):
    gold = ItemFactory(answers=["north-east corner"])
    campaign = campaign_of("answer_only", [gold.scene], assignments_per_scene=2)
    assignment = enter(client, campaign)
    body = client.get(f"/api/v1/assignments/{assignment.pk}/").json()
    assert body["task"]["question"] == gold.question and "north-east" not in str(body)
    page = client.get(f"/annotate/{assignment.pk}/")
    assert page.status_code == 200 and b"north-east" not in page.content
    assert "at most 10 words" in submit(client, assignment, {"answer": "w " * 11}).json()["answer"][0]
    assert submit(client, assignment, {"answer": "the window"}).status_code == 201
    assert CrowdAnswer.objects.get().answer == "the window"
    other = enter(client, campaign, "PID2")
    assert other.item == gold
    with pytest.raises(Exception, match="all the assignments it needs"):
        services.lease_assignment(campaign, UserFactory())


def test_answer_only_on_a_choice_item_takes_letters(client):
    gold = ItemFactory(choices=["left", "right"], answers=["B"], answer_format="single")
    campaign = campaign_of("answer_only", [gold.scene])
    assignment = enter(client, campaign)
    assert "Pick exactly one choice." in submit(client, assignment, {"answer": ["A", "B"]}).json()["answer"][0]
    assert submit(client, assignment, {"answer": ["A"]}).status_code == 201


def test_autosaved_form_is_submitted_when_no_answer_is_sent(client):
    scene = SceneFactory(object_labels=["desk", "window"])
    campaign = campaign_of("world_frame", [scene])
    assignment = enter(client, campaign)
    saved = client.put(f"/api/v1/assignments/{assignment.pk}/draft/",
                       {"content": {"anchor": 2, "side": "right", "text": ""}}, content_type="application/json")
    assert saved.status_code == 200
    response = client.post(f"/api/v1/assignments/{assignment.pk}/submit/", {}, content_type="application/json")
    assert response.status_code == 201 and WorldFrame.objects.get().side == "right"


def test_a_frame_campaign_takes_no_descriptions(client, frame_campaign):
    assignment = enter(client, frame_campaign)
    response = client.post(f"/api/v1/assignments/{assignment.pk}/descriptions/", {"text": "The desk moved."},
                           content_type="application/json")
    assert response.status_code == 400 and response.json()["text"] == ["This campaign's assignments take no descriptions."]


def test_payment_for_reviewed_items_counts_approved_ones(client):
    scene = SceneFactory()
    ChangeFactory(scene=scene, status="approved")
    campaign = campaign_of("question_answer", [scene], pay_cents=50, pay_unit=1)
    assignment = enter(client, campaign)
    submit(client, assignment, {"question": "What is left of the chair now?", "answer": "desk",
                                "question_type": "Proximity"})
    assert progress.payment_report(campaign)[0]["amount_usd"] == "0.00"
    Item.objects.update(status="approved")
    assert progress.payment_report(campaign)[0]["amount_usd"] == "0.50"
