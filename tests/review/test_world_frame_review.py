"""Hypo3D's world frames are reviewed (#29): a crowd frame arrives submitted and reaches no prompt;
a reviewer approves one frame per scene (superseding any approved before), and only that frame
reaches the model's prompt and the evaluator's screen, never every submission joined."""

import pytest

from benchmarks.models import WorldFrame
from core import roles
from humaneval.services.stimuli import stimulus_files
from modeleval.prompting.prompts import latest_template, render_prompt
from tests.annotation.test_annotation_kinds import campaign_of, enter, submit
from tests.factories import ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


def crowd_frame(scene, text, side="left"):
    return scene.world_frames.create(anchor=scene.scene_objects.first(), side=side, text=text,
                                     status=WorldFrame.Status.SUBMITTED)


def prompt_of(item):
    return render_prompt(latest_template("hypo3d"), item, "top_view_plain")


@pytest.fixture
def reviewer(client):
    client.force_login(UserFactory(role=roles.REVIEWER))
    return client


def test_a_crowd_frame_is_submitted_and_waits_for_review(client):
    scene = SceneFactory(object_labels=["desk", "window"])
    assignment = enter(client, campaign_of("world_frame", [scene]))
    assert submit(client, assignment, {"anchor": 1, "side": "left", "text": ""}).status_code == 201
    assert WorldFrame.objects.get().status == "submitted"


def test_only_the_approved_frame_reaches_the_prompt(reviewer):
    item = ItemFactory()
    first = crowd_frame(item.scene, "The desk was located at the left of the scene.")
    second = crowd_frame(item.scene, "The desk was located at the right of the scene.", side="right")
    assert "Scene Orientation: \n\n" in prompt_of(item)  # no frame approved yet
    queue = reviewer.get(f"/api/v1/benchmarks/{item.benchmark.slug}/world-frames/review/")
    assert [f["id"] for f in queue.json()] == [first.pk, second.pk]

    approved = reviewer.post(f"/api/v1/world-frames/{first.pk}/approve/")
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
    prompt = prompt_of(item)
    assert "Scene Orientation: The desk was located at the left of the scene.\n" in prompt
    assert "right of the scene" not in prompt
    assert stimulus_files(item)["world_frame"] == ["The desk was located at the left of the scene."]

    assert reviewer.post(f"/api/v1/world-frames/{second.pk}/approve/").status_code == 200
    first.refresh_from_db()
    assert first.status == "superseded"
    assert item.scene.world_frames.filter(status="approved").count() == 1
    prompt = prompt_of(item)
    assert "right of the scene" in prompt and "left of the scene" not in prompt


def test_a_rejected_frame_never_reaches_a_prompt_and_bad_requests_name_the_fault(reviewer, client):
    item = ItemFactory()
    frame = crowd_frame(item.scene, "The desk was located at the left of the scene.")
    assert reviewer.post(f"/api/v1/world-frames/{frame.pk}/reject/").json()["status"] == "rejected"
    assert "left of the scene" not in prompt_of(item)
    bad = reviewer.post(f"/api/v1/world-frames/{frame.pk}/promote/")
    assert bad.status_code == 400 and "action" in bad.json()
    assert reviewer.post("/api/v1/world-frames/999999/approve/").status_code == 404
    client.logout()
    client.force_login(UserFactory(role=roles.ANNOTATOR))
    assert client.post(f"/api/v1/world-frames/{frame.pk}/approve/").status_code == 403


def test_an_imported_frame_is_approved_and_reaches_the_prompt():
    item = ItemFactory()
    item.scene.world_frames.create(anchor=item.scene.scene_objects.first(), side="left",
                                   text="The desk is to the left of the scene.")
    assert "Scene Orientation: The desk is to the left of the scene." in prompt_of(item)


def test_the_review_page_lists_crowd_frames_and_approves_one(reviewer):
    item = ItemFactory()
    item.scene.world_frames.create(anchor=item.scene.scene_objects.first(), side="back",
                                   text="The desk is at the back of the scene.")  # imported: approved
    frame = crowd_frame(item.scene, "The desk was located at the left of the scene.")
    assert "1 crowd world frame to review" in reviewer.get("/review/").content.decode()
    page = reviewer.get("/review/world-frames/").content.decode()
    assert "The desk was located at the left of the scene." in page and "The desk is at the back of the scene." in page
    response = reviewer.post(f"/review/world-frames/{frame.pk}/approve/")
    assert response.status_code == 302 and response["Location"] == "/review/world-frames/"
    assert list(item.scene.world_frames.filter(status="approved").values_list("pk", flat=True)) == [frame.pk]
    assert "Nothing waiting." in reviewer.get("/review/world-frames/").content.decode()
    assert reviewer.post(f"/review/world-frames/{frame.pk}/keep/").status_code == 400


def test_a_release_carries_only_the_approved_frame(reviewer):
    from benchmarks.releases import life
    from benchmarks.releases.lines import iter_release_lines

    item = ItemFactory(status="approved")
    approved = crowd_frame(item.scene, "The desk was located at the left of the scene.")
    crowd_frame(item.scene, "The desk was located at the right of the scene.", side="right")  # never reviewed
    reviewer.post(f"/api/v1/world-frames/{approved.pk}/approve/")
    release = life.export_release(item.benchmark, "1.0.0", None, inline=True)
    frames = [line["world_frame"] for line in iter_release_lines(release)]
    assert len(frames) == 1 and len(frames[0]) == 1 and "left of the scene" in str(frames[0])


def test_each_verdict_on_a_frame_and_each_frame_it_supersedes_is_in_its_status_history(reviewer):
    from core.history import changes_of

    scene = SceneFactory(object_labels=["desk", "window"])
    first = crowd_frame(scene, "The desk was located at the left of the scene.")
    second = crowd_frame(scene, "The desk was located at the right of the scene.", side="right")
    for frame in (first, second, first):
        assert reviewer.post(f"/api/v1/world-frames/{frame.pk}/approve/").status_code == 200
    assert reviewer.post(f"/api/v1/world-frames/{first.pk}/approve/").status_code == 200  # the same again
    assert [c.to_status for c in changes_of(WorldFrame, first.pk)] == ["submitted", "approved", "superseded",
                                                                   "approved"]
    assert [c.to_status for c in changes_of(WorldFrame, second.pk)] == ["submitted", "approved", "superseded"]
