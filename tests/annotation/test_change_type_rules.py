"""Crowd rules per change type (issue #42): a movement names where to, a removal what is removed, a
replacement both objects; each refusal is a 400 on `text` through the worker's API and writes nothing."""

import pytest

from annotation import services
from annotation.checks import check_movement, check_removal, check_replacement
from core.errors import DomainError
from tests.factories import BenchmarkFactory, SceneFactory

pytestmark = pytest.mark.django_db

LABELS = ["desk", "chair", "window", "bookshelf", "bed", "lamp", "sofa", "door"]


def worker(client, change_type: str):
    benchmark = BenchmarkFactory()
    scene = SceneFactory(benchmark=benchmark, object_labels=LABELS)
    campaign = services.create_campaign(benchmark, "Changes", change_type, [scene])
    client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": "W42", "STUDY_ID": "S", "SESSION_ID": "X"})
    return campaign.assignments.get()


def submit(client, assignment, text):
    return client.post(f"/api/v1/assignments/{assignment.pk}/submit/", {"text": text},
                       content_type="application/json")


def test_the_issues_vague_movement_earns_no_completion_code(client):
    assignment = worker(client, "movement")
    response = submit(client, assignment, "The chair has been moved away from where it used to stand in the room.")
    assert response.status_code == 400
    assert "where it is now" in response.json()["text"][0]
    assignment.refresh_from_db()
    assert assignment.status == assignment.Status.LEASED and not assignment.completion_code
    ok = submit(client, assignment, "The chair has been moved away from the desk to the corner by the window.")
    assert ok.status_code == 201, ok.json()


@pytest.mark.parametrize("text", [
    "The chair has been moved away from where it used to stand in the room.",
    "The chair has been moved from the desk to somewhere else.",
    "The chair has been moved from the desk to the other room.",
    "The chair that used to stand by the desk has been moved away.",
])
def test_a_movement_without_a_place_it_went_to_is_refused(text):
    with pytest.raises(DomainError, match="where it is now"):
        check_movement(LABELS, text)


@pytest.mark.parametrize("text", [
    "The chair has been moved from the desk to the window next to the bookshelf.",
    "The sofa has been moved from the wall by the door to the middle of the room.",
    "The lamp that used to stand on the desk is now on the floor beside the bed.",
    "The chair next to the desk has been moved from there to the window.",
])
def test_a_movement_naming_where_to_passes(text):
    check_movement(LABELS, text)


def test_a_removal_names_what_is_removed(client):
    with pytest.raises(DomainError, match="must name what is removed"):
        check_removal(LABELS, "Something near the bed has been removed.")
    check_removal(LABELS, "The lamp on the desk has been removed.")
    check_removal(LABELS, "There is no longer a lamp on the desk.")
    assignment = worker(client, "removal")
    response = submit(client, assignment, "An object that was near the bed has been removed from the room.")
    assert response.status_code == 400 and "must name what is removed" in response.json()["text"][0]
    assert submit(client, assignment, "The lamp that stood on the desk has been removed.").status_code == 201


@pytest.mark.parametrize("text", [
    "The desk has been replaced with something else.",
    "The desk has been replaced by another one.",
    "Something has been replaced with a sofa.",
])
def test_a_replacement_names_both_objects(text):
    with pytest.raises(DomainError, match="must name what is removed"):
        check_replacement(LABELS, text)


def test_a_replacement_naming_both_passes():
    check_replacement(LABELS, "The desk by the window has been replaced with a large wooden dining table.")
