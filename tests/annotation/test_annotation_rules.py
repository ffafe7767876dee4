"""The rules every crowd description must pass, through the API a worker's page uses: each broken
rule is a 400 on `text` (or `descriptions`) that names the rule, and nothing is written."""

import pytest

from annotation import services
from annotation.checks import changed_object, check_movement, check_replacement
from annotation.models import AssignmentDraft
from benchmarks.models import ContextChange
from core.errors import DomainError
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

LABELS = ["desk", "chair", "window", "bookshelf", "bed", "lamp", "sofa", "door"]
FIVE_MOVES = [
    "The chair has been moved from the desk to the window next to the bookshelf.",
    "The lamp that stood on the desk has been moved to the floor beside the bed.",
    "The sofa has been moved from the wall by the door to the middle of the room.",
    "The bookshelf was pushed from the corner near the window to the wall next to the door.",
    "The bed has been moved from under the window to the space between the desk and the door.",
]


@pytest.fixture
def campaign():
    benchmark = BenchmarkFactory()
    scene = SceneFactory(benchmark=benchmark, object_labels=LABELS)
    return services.create_campaign(benchmark, "Moves", "movement", [scene], descriptions_per_assignment=5)


@pytest.fixture
def worker_client(client, campaign):
    client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": "W1", "STUDY_ID": "S", "SESSION_ID": "X"})
    client.assignment = campaign.assignments.get()
    return client


def add(client, text):
    return client.post(f"/api/v1/assignments/{client.assignment.pk}/descriptions/", {"text": text},
                       content_type="application/json")


def submit(client, text=""):
    return client.post(f"/api/v1/assignments/{client.assignment.pk}/submit/", {"text": text},
                       content_type="application/json")


def draft_texts(client):
    draft = AssignmentDraft.objects.filter(assignment=client.assignment).first()
    return [d["text"] for d in draft.descriptions] if draft else []


def test_five_checked_descriptions_submit_as_five_raw_changes(worker_client):
    for text in FIVE_MOVES[:4]:
        assert add(worker_client, text).status_code == 201
    response = submit(worker_client, FIVE_MOVES[4])
    assert response.status_code == 201, response.json()
    changes = ContextChange.objects.order_by("id")
    assert [c.raw_text for c in changes] == FIVE_MOVES
    assert [c.provenance["changed_object"] for c in changes] == ["chair", "lamp", "sofa", "bookshelf", "bed"]
    assert not AssignmentDraft.objects.exists()


def test_submitting_fewer_descriptions_than_the_campaign_asks_gets_400(worker_client):
    add(worker_client, FIVE_MOVES[0])
    response = submit(worker_client, FIVE_MOVES[1])
    assert response.status_code == 400
    assert response.json()["text"] == ["This assignment takes 5 descriptions; you have 2."]
    assert not ContextChange.objects.exists()


def test_a_sixth_description_is_refused_and_the_full_draft_submits_alone(worker_client):
    for text in FIVE_MOVES:
        assert add(worker_client, text).status_code == 201
    response = add(worker_client, "The door has been moved from the wall by the bed to the wall by the desk.")
    assert response.status_code == 400
    assert response.json()["descriptions"] == ["This assignment takes 5 descriptions; submit it."]
    assert submit(worker_client).status_code == 201
    assert ContextChange.objects.count() == 5


def test_two_descriptions_changing_the_same_object_get_400_naming_the_rule(worker_client):
    add(worker_client, FIVE_MOVES[0])
    response = add(worker_client, "The chair has been moved from the window to the bed next to the door.")
    assert response.status_code == 400
    assert "already changes the chair" in response.json()["text"][0]
    assert "different object" in response.json()["text"][0]
    assert draft_texts(worker_client) == [FIVE_MOVES[0]]


def test_a_description_naming_no_scene_object_is_refused_and_not_drafted(worker_client):
    response = add(worker_client, "The grand piano has been moved from the hallway to the garden by the gate.")
    assert response.status_code == 400
    assert "names no object of this scene" in response.json()["text"][0]
    assert draft_texts(worker_client) == []


def test_a_movement_without_an_origin_is_refused(worker_client):
    response = add(worker_client, "The chair has been moved onto the bed in the far corner of the room.")
    assert response.status_code == 400
    message = response.json()["text"][0]
    assert "must name an origin and a destination" in message and "where the object was" in message


def test_a_movement_without_a_destination_is_refused(worker_client):
    response = add(worker_client, "The chair has been moved away from the desk and the bookshelf today.")
    assert response.status_code == 400
    assert "where it is now" in response.json()["text"][0]


def test_near_duplicate_of_the_workers_own_earlier_text_is_refused_but_not_someone_elses(worker_client, campaign):
    ContextChange.objects.create(scene=campaign.scenes.get(), change_type="movement", raw_text=FIVE_MOVES[0],
                                 author=worker_client.assignment.worker)
    response = add(worker_client, "A chair has been moved from the desk to the window next to a bookshelf.")
    assert response.status_code == 400
    assert "nearly repeats a description you wrote before" in response.json()["text"][0]
    ContextChange.objects.update(author=UserFactory())
    assert add(worker_client, FIVE_MOVES[0]).status_code == 201


def test_a_label_that_occurs_twice_gets_a_warning_unless_the_text_locates_it(client):
    benchmark = BenchmarkFactory()
    scene = SceneFactory(benchmark=benchmark, object_labels=["chair", "chair", "desk", "window"])
    campaign = services.create_campaign(benchmark, "Moves", "movement", [scene], descriptions_per_assignment=2)
    client.post(f"/crowd/campaigns/{campaign.pk}/", {"worker_id": "W9", "assignment_id": "A9"})
    client.assignment = campaign.assignments.get()
    vague = add(client, "The chair has been moved from the desk to the window at the back.")
    assert vague.status_code == 201
    assert vague.json()["warnings"] == [
        "There are 2 objects labelled 'chair' in this scene; say which chair you mean "
        "(e.g. by colour or by what it is next to)."
    ]
    client.delete(f"/api/v1/assignments/{client.assignment.pk}/descriptions/1/")
    located = add(client, "The chair next to the desk has been moved from there to the window.")
    assert located.status_code == 201 and located.json()["warnings"] == []


def test_replacement_must_name_what_is_removed_and_what_is_added(client):
    benchmark = BenchmarkFactory()
    scene = SceneFactory(benchmark=benchmark)
    campaign = services.create_campaign(benchmark, "Swaps", "replacement", [scene])
    client.post(f"/crowd/campaigns/{campaign.pk}/", {"worker_id": "W2", "assignment_id": "A2"})
    client.assignment = campaign.assignments.get()
    response = submit(client, "The desk by the window has been taken away and something else is there.")
    assert response.status_code == 400
    assert "must name what is removed" in response.json()["text"][0]
    assert submit(client, "The desk by the window has been replaced with a large wooden dining table.").status_code == 201


def test_with_several_descriptions_a_failing_one_is_named_by_its_number(worker_client, campaign):
    for text in FIVE_MOVES[:4]:
        add(worker_client, text)
    # A scene object renamed after the drafts were accepted: submit checks everything again.
    campaign.scenes.get().scene_objects.filter(label="lamp").update(label="vase")
    response = submit(worker_client, FIVE_MOVES[4])
    assert response.status_code == 400
    assert response.json()["descriptions"][0].startswith("Description 2: ")
    assert not ContextChange.objects.exists()


@pytest.mark.parametrize("text, ok", [
    ("The table near the columns has been moved in front of the door.", True),
    ("The brown pillow, originally on the bed, has been moved to the gray couch.", True),
    ("The backpack that was to the left of the table is now on the couch.", True),
    ("The guitar has been moved onto the bed.", False),
    ("The yellow table has been moved to the middle of the room.", False),
])
def test_movement_rule_on_hypo3d_style_texts(text, ok):
    labels = ["table", "columns", "door", "pillow", "bed", "couch", "backpack", "guitar"]
    if ok:
        check_movement(labels, text)
    else:
        with pytest.raises(DomainError):
            check_movement(labels, text)


def test_replacement_rule_and_changed_object_of_an_addition():
    check_replacement(["trash can", "sink"], "Two trash cans are replaced with the cans the colour of the sink.")
    with pytest.raises(DomainError):
        check_replacement(["bed", "dresser"], "The positions of the bed and the dresser have been swapped.")
    assert changed_object(["room"], "A new armchair has just been placed in the center of the room.") == "armchair"
    assert changed_object(["table", "backpack"], "The backpack that was on the table is now on the bed.") == "backpack"
