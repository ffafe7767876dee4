"""Step 1 of the thin path: a crowd worker arrives, leases a scene, writes a movement change."""

import pytest

from annotation import services
from annotation.models import Assignment
from benchmarks.models import ContextChange
from crowd.models import CrowdWorker
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

GOOD_TEXT = "The chair has been moved from the desk to the window next to the bookshelf."


@pytest.fixture
def campaign():
    benchmark = BenchmarkFactory()
    scenes = [SceneFactory(benchmark=benchmark), SceneFactory(benchmark=benchmark)]
    return services.create_campaign(benchmark, "Moves", "movement", scenes)


def enter(client, campaign, pid="PID1"):
    return client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "ST", "SESSION_ID": "SE"})


def lease(client, campaign, pid="PID1") -> Assignment:
    """The assignment a crowd worker holds once the campaign's link has signed them in."""
    enter(client, campaign, pid)
    return Assignment.objects.get(worker__username=f"prolific-{pid}")


def test_crowd_link_creates_one_account_per_worker_and_resumes_the_lease(client, campaign):
    first = enter(client, campaign)
    assert first.status_code == 302 and "/annotate/" in first["Location"]
    again = enter(client, campaign)
    assert again["Location"] == first["Location"]
    assert CrowdWorker.objects.filter(worker_id="PID1").count() == 1
    assert Assignment.objects.count() == 1


def test_bad_crowd_id_is_refused_with_the_parameter_named(client, campaign):
    response = client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": "bad id!<script>"})
    assert response.status_code == 400
    assert b"PROLIFIC_PID" in response.content
    assert not CrowdWorker.objects.exists()


def test_least_filled_scene_is_leased_first(campaign):
    a = services.lease_assignment(campaign, UserFactory())
    b = services.lease_assignment(campaign, UserFactory())
    assert a.scene_id != b.scene_id


def submit(client, assignment_id, text):
    return client.post(f"/api/v1/assignments/{assignment_id}/submit/", {"text": text}, content_type="application/json")


def test_valid_change_is_stored_raw_and_earns_a_completion_code(client, campaign):
    assignment = lease(client, campaign)
    response = submit(client, assignment.pk, GOOD_TEXT)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["completion_code"].startswith("CQA_")
    assert body["completion_url"].endswith("cc=" + body["completion_code"])
    change = ContextChange.objects.get()
    assert change.raw_text == GOOD_TEXT and change.status == "submitted"
    assert set(change.provenance["named_objects"]) == {"chair", "desk", "window", "bookshelf"}


@pytest.mark.parametrize(("text", "reason"), [
    ("Move the chair to the window.", "at least 10 words"),
    ("The piano has been moved from the hallway to the garden by the gate.", "names no object of this scene"),
], ids=["too-short", "no-scene-object"])
def test_refused_change_gets_400_naming_the_reason_and_writes_nothing(client, campaign, text, reason):
    assignment = lease(client, campaign)
    response = submit(client, assignment.pk, text)
    assert response.status_code == 400
    assert reason in response.json()["text"][0]
    assert not ContextChange.objects.exists()
    assignment.refresh_from_db()
    assert assignment.status == "leased"


def test_annotator_fetching_another_annotators_assignment_gets_403(client, campaign):
    theirs = lease(client, campaign, pid="OWNER")
    client.logout()
    enter(client, campaign, pid="INTRUDER")
    assert client.get(f"/api/v1/assignments/{theirs.pk}/").status_code == 403
    response = submit(client, theirs.pk, GOOD_TEXT)
    assert response.status_code == 403
    assert response.json()["assignment"] == ["This assignment belongs to another worker."]
    assert not ContextChange.objects.exists()


def test_second_submit_is_a_conflict_not_a_second_change(client, campaign):
    assignment = lease(client, campaign)
    assert submit(client, assignment.pk, GOOD_TEXT).status_code == 201
    assert submit(client, assignment.pk, GOOD_TEXT).status_code == 409
    assert ContextChange.objects.count() == 1


def test_assignment_api_shows_the_scene_but_no_answers(client, campaign):
    body = client.get(f"/api/v1/assignments/{lease(client, campaign).pk}/").json()
    assert body["change_type"] == "movement"
    assert {o["label"] for o in body["scene"]["objects"]} >= {"desk", "chair"}
