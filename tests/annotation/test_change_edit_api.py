"""A crowd change saved with its geometric edit (#47) through the worker's API: stored in the scene's aligned
coordinates and its approved world frame; a malformed edit is a 400 naming the field at fault, an edit the
text disagrees with a 400 naming the disagreement, and neither writes a row."""

import pytest

from annotation import services
from benchmarks.models import ContextChange
from tests.annotation.geometry_rooms import CHAIR, approve_frame, create_objects, move
from tests.factories import BenchmarkFactory, SceneFactory

pytestmark = pytest.mark.django_db

LEFT_OF_BED = "The chair has been moved from the desk to the left of the bed."


def leased(client, framed=True):
    benchmark = BenchmarkFactory()
    scene = SceneFactory(benchmark=benchmark, object_labels=[])
    create_objects(scene)
    if framed:
        approve_frame(scene)
    campaign = services.create_campaign(benchmark, "Geometry", "movement", [scene])
    client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": "W47", "STUDY_ID": "S", "SESSION_ID": "X"})
    return campaign.assignments.get()


def submit(client, assignment, text, edit):
    return client.post(f"/api/v1/assignments/{assignment.pk}/submit/", {"text": text, "edit": edit},
                       content_type="application/json")


def refused_and_unwritten(response, assignment):
    assert response.status_code == 400, response.json()
    assert not ContextChange.objects.exists()
    assignment.refresh_from_db()
    assert assignment.status == assignment.Status.LEASED and not assignment.completion_code
    return response.json()


def test_a_change_saved_with_its_edit_keeps_it_in_both_frames(client):
    assignment = leased(client)
    response = submit(client, assignment, LEFT_OF_BED, move(CHAIR, -3.0, 2.7))
    assert response.status_code == 201, response.json()
    edit = ContextChange.objects.get().edit
    assert edit["objects"] == [{"instance_id": CHAIR, "translation": [-3.0, 2.7, 0.0], "rotation": 0.0,
                                "scale": 1.0, "removed": False}]
    world = edit["world"]
    assert (world["anchor"], world["side"]) == (7, "left")
    # world front is +x, world right is -y: the move is 2.7 m to the left and 3 m back
    assert world["objects"][0]["translation"] == pytest.approx([-2.7, -3.0, 0.0])
    assert world["front"] == pytest.approx([1.0, 0.0]) and world["right"] == pytest.approx([0.0, -1.0])


def test_an_edit_sent_in_the_world_frame_is_stored_aligned(client):
    assignment = leased(client)
    edit = {"frame": "world", "objects": [{"instance_id": CHAIR, "translation": [-2.7, -3.0, 0.0]}]}
    assert submit(client, assignment, LEFT_OF_BED, edit).status_code == 201
    stored = ContextChange.objects.get().edit
    assert stored["objects"][0]["translation"] == pytest.approx([-3.0, 2.7, 0.0])


def test_a_description_keeps_its_edit_in_the_draft_until_submitted(client):
    assignment = leased(client)
    added = client.post(f"/api/v1/assignments/{assignment.pk}/descriptions/",
                        {"text": LEFT_OF_BED, "edit": move(CHAIR, -3.0, 2.7)}, content_type="application/json")
    assert added.status_code == 201, added.json()
    assert added.json()["descriptions"][0]["edit"] == move(CHAIR, -3.0, 2.7)
    assert submit(client, assignment, "", None).status_code == 201
    assert ContextChange.objects.get().edit["objects"][0]["translation"] == [-3.0, 2.7, 0.0]


@pytest.mark.parametrize(("edit", "path"), [
    ({"objects": [{"instance_id": CHAIR, "scale": -1}]}, "edit.objects[0].scale"),
    ({"objects": [{"instance_id": 99, "translation": [1, 0, 0]}]}, "edit.objects[0].instance_id"),
    ({"objects": [{"instance_id": CHAIR, "translation": [1, 0]}]}, "edit.objects[0].translation"),
    ({"objects": [{"instance_id": CHAIR, "turn": 1}]}, "edit.objects[0].turn"),
    ("left", "edit"),
])
def test_a_malformed_edit_is_a_400_naming_the_field(client, edit, path):
    assignment = leased(client)
    body = refused_and_unwritten(submit(client, assignment, LEFT_OF_BED, edit), assignment)
    assert body["path"] == path and body["edit"][0].startswith(path)


def test_a_world_frame_edit_needs_an_approved_frame(client):
    assignment = leased(client, framed=False)
    edit = {"frame": "world", "objects": [{"instance_id": CHAIR, "translation": [-2.7, -3.0, 0.0]}]}
    body = refused_and_unwritten(submit(client, assignment, LEFT_OF_BED, edit), assignment)
    assert body["path"] == "edit.frame"


def test_a_move_to_the_right_said_left_is_refused_with_the_disagreement(client):
    assignment = leased(client)
    body = refused_and_unwritten(submit(client, assignment, LEFT_OF_BED, move(CHAIR, -3.0, -0.1)), assignment)
    assert body["problems"] == [
        "The text puts the chair left of the bed, but the move puts it to the bed's right (world frame)."]
    assert body["edit"] == [body["problems"][0]]


def test_a_chair_moved_into_the_wardrobe_is_refused_at_the_description(client):
    assignment = leased(client)
    response = client.post(f"/api/v1/assignments/{assignment.pk}/descriptions/",
                           {"text": "The chair has been moved from the desk to the wardrobe by the window.",
                            "edit": move(CHAIR, 1.1, 3.0)}, content_type="application/json")
    assert response.status_code == 400
    assert "overlaps the wardrobe" in response.json()["edit"][0]
    assert services.draft_of(assignment).descriptions == []


def test_a_change_without_an_edit_is_checked_as_before(client):
    assignment = leased(client)
    assert submit(client, assignment, LEFT_OF_BED, None).status_code == 201
    assert ContextChange.objects.get().edit is None
