"""Model drafting with the pictures the papers sent, through a loopback OpenAI-compatible server:
Hypo3D drafts from the scene's semantic top view, M3-Verse from frames of its before and after videos;
question drafts in Hypo3D's shape (questions keyed by change, no answers) land in the review queue as
draft items, which a reviewer can approve only once the answer is given."""

import base64
import json

import pytest

from annotation import drafting
from annotation.models import DraftingPrompt
from benchmarks.models import ContextChange, Item
from benchmarks.services import store_asset
from core import roles
from modeleval.models import ModelSpec
from review import services as review_services
from tests.clips import clip_bytes
from tests.factories import BenchmarkFactory, ChangeFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

TOP_VIEW = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 2  # the bytes are sent as they are stored


def model_at(url) -> ModelSpec:
    return ModelSpec.objects.create(name=f"drafter {url}", adapter="openai_compatible",
                                    config={"endpoint": url, "model": "tiny", "max_retries": 0, "n_frames": 2})


def image_urls(request) -> list[str]:
    return [part["image_url"]["url"] for part in request["body"]["messages"][0]["content"]
            if part["type"] == "image_url"]


def drafted(template, model, **targets):
    """Request drafts and run the request as its task would (the test holds one transaction)."""
    [request] = drafting.request_drafts(template, model, **targets)
    drafting.run_draft_request(request.pk)
    request.refresh_from_db()
    return request


def test_hypo3d_changes_are_drafted_from_the_semantic_top_view(chat_servers, client):
    scene = SceneFactory()
    store_asset(scene, "topview_plain", "plain.png", b"\x89PNG plain")
    store_asset(scene, "topview_semantic", "semantic.png", TOP_VIEW)
    chat = chat_servers('{"changes": ["The chair has been moved next to the window."]}')
    template = DraftingPrompt.objects.create(name="movement", target="changes", change_type="movement",
                                             text="Objects: {objects}. Draft {count} {change_type} changes.")
    request = drafted(template, model_at(chat.url), scenes=[scene])

    assert request.job.status == "done", request.job.message
    assert image_urls(chat.requests[0]) == ["data:image/png;base64," + base64.b64encode(TOP_VIEW).decode()]
    change = ContextChange.objects.get()
    assert change.raw_text == "The chair has been moved next to the window." and change.provenance["source"] == "model"
    assert list(review_services.review_queue(UserFactory(role=roles.REVIEWER))) == [change]


def test_a_scene_without_its_top_view_fails_the_request_and_writes_nothing(chat_servers):
    chat = chat_servers('{"changes": ["The desk has been removed."]}')
    template = DraftingPrompt.objects.create(name="removal", target="changes", change_type="removal", text="{objects}")
    request = drafted(template, model_at(chat.url), scenes=[SceneFactory()])
    assert request.job.status == "failed" and "no top_view_semantic" in request.job.message
    assert not chat.requests and not ContextChange.objects.exists()


def test_m3verse_drafts_send_frames_of_the_before_and_after_videos(chat_servers):
    scene = SceneFactory(benchmark=BenchmarkFactory(family="m3verse"))
    for name in ("before.mp4", "after.mp4"):
        store_asset(scene, "video", name, clip_bytes())
    chat = chat_servers('["Which object was moved between the two videos?"]')
    template = DraftingPrompt.objects.create(name="m3 questions", target="questions", text="Change: {change}")
    change = ChangeFactory(scene=scene, status="approved")
    request = drafted(template, model_at(chat.url), changes=[change])
    assert request.job.status == "done", request.job.message
    urls = image_urls(chat.requests[0])
    assert len(urls) == 4 and all(url.startswith("data:image/png;base64,") for url in urls)  # 2 frames x 2 videos


def test_question_drafts_without_answers_wait_for_a_reviewers_answer(chat_servers, client):
    change = ChangeFactory(status="approved")
    store_asset(change.scene, "topview_semantic", "semantic.png", TOP_VIEW)
    # Hypo3D's Fig. 8/9 output: questions keyed by the change, no answers.
    keyed = {change.text: ["What is next to the window now?", "Where is the chair now?"]}
    chat = chat_servers(json.dumps({"questions": keyed}))
    template = DraftingPrompt.objects.create(name="proximity", target="questions", question_type="Proximity",
                                             text="Change: {change}. Write {count} questions, no answers.")
    request = drafted(template, model_at(chat.url), changes=[change])
    assert request.job.status == "done", request.job.message
    first, second = Item.objects.order_by("id")
    assert [first.question, second.question] == ["What is next to the window now?", "Where is the chair now?"]
    assert first.status == "draft" and first.answers == [] and first.change == change
    reviewer = UserFactory(role=roles.REVIEWER)
    assert list(review_services.filtering_queue(reviewer)) == [first, second]

    client.force_login(reviewer)
    refused = client.post(f"/api/v1/items/{first.pk}/approve/", {"version": first.version},
                          content_type="application/json")
    assert refused.status_code == 400 and "answers" in refused.json()
    kept = client.post(f"/api/v1/items/{second.pk}/filter/", {"version": second.version, "action": "keep"},
                       content_type="application/json")
    assert kept.status_code == 400 and "answers" in kept.json()
    assert Item.objects.filter(status="draft").count() == 2

    approved = client.post(f"/api/v1/items/{first.pk}/approve/", {"version": first.version, "answers": ["chair"]},
                           content_type="application/json")
    assert approved.status_code == 200, approved.json()
    assert approved.json()["status"] == "approved" and approved.json()["answers"] == ["chair"]
    kept = client.post(f"/api/v1/items/{second.pk}/filter/",
                       {"version": second.version, "action": "keep", "answers": ["by the door"]},
                       content_type="application/json")
    assert kept.status_code == 200 and kept.json()["answers"] == ["by the door"]
    assert first.revisions.order_by("number").last().note == "answered on approval"
