"""Model-drafted raw items through a real adapter: an OpenAI-compatible chat-completions server on
loopback, served by the test, answers the filled prompt template; the output becomes raw changes or
draft items marked as model-made, once per (template, model, target) however often the task runs.
Hypo3D scenes are drafted from their semantic top view (test_drafting_images.py), so each has one."""

import pytest

from annotation import drafting
from annotation.models import DraftingPrompt, DraftRequest
from benchmarks.models import ContextChange, Item
from benchmarks.services import store_asset
from modeleval.models import ModelSpec
from tests.factories import ChangeFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

CHANGES_TEMPLATE = """# {change_type} change generation
Objects in the scene: {objects}. Caption: {caption}
Generate {count} unique {change_type} changes. Examples:
{examples}
Answer as JSON: {{"changes": ["...", ...]}}"""


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Requests enqueue their task on commit; a test runs inside one transaction, so this runs the
    on-commit callbacks (the eager tasks) when the call returns."""

    def call(function, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return function(*args, **kwargs)

    return call


def with_top_view(scene):
    store_asset(scene, "topview_semantic", "semantic.png", b"\x89PNG top view")
    return scene


def model_at(url):
    return ModelSpec.objects.create(name=f"drafter {url}", adapter="openai_compatible",
                                    config={"endpoint": url, "model": "tiny", "max_retries": 0})


def test_model_drafts_raw_changes_from_the_template_once(chat_servers, committed):
    scene = with_top_view(SceneFactory(object_labels=["desk", "chair"]))
    server = chat_servers('Sure! {"changes": ["The chair has been moved from the desk to the door.", '
                          '"The desk has been moved to the window."]}')
    template = DraftingPrompt.objects.create(name="movement v1", target="changes", change_type="movement",
                                             text=CHANGES_TEMPLATE, examples="The lamp moved to the bed.", count=2)
    model = model_at(server.url)
    [request] = committed(drafting.request_drafts, template, model, scenes=[scene])
    request.refresh_from_db()
    assert request.job.status == "done", request.job.message
    assert "Objects in the scene: 1 chair, 1 desk." in server.prompts[0] and "Generate 2 unique movement" in server.prompts[0]
    changes = ContextChange.objects.order_by("id")
    assert [c.raw_text for c in changes] == ["The chair has been moved from the desk to the door.",
                                             "The desk has been moved to the window."]
    assert changes[0].status == "submitted" and changes[0].author is None
    assert changes[0].provenance == {"source": "model", "model": model.name, "template": template.pk,
                                     "draft_request": request.pk}
    committed(drafting.request_drafts, template, model, scenes=[scene])
    drafting.run_draft_request(request.pk)
    assert ContextChange.objects.count() == 2 and DraftRequest.objects.count() == 1


def test_model_drafts_questions_on_approved_changes(chat_servers, committed):
    change = ChangeFactory(status="approved")
    with_top_view(change.scene)
    server = chat_servers('[{"question": "What is next to the window now?", "answer": "chair"}]')
    template = DraftingPrompt.objects.create(
        name="proximity", target="questions", question_type="Proximity",
        text="Objects: {objects}\nChange: {change}\nWrite {count} {question_type} questions as JSON.",
    )
    committed(drafting.request_drafts, template, model_at(server.url), changes=[change])
    assert change.raw_text in server.prompts[0]
    item = Item.objects.get()
    assert item.change == change and item.status == "draft" and item.answers == ["chair"]
    assert item.tags["question_type"] == ["Scale"] and item.provenance["source"] == "model"


def test_unparseable_output_fails_the_request_and_writes_nothing(chat_servers, committed):
    scene = with_top_view(SceneFactory())
    server = chat_servers("I cannot help with that.")
    template = DraftingPrompt.objects.create(name="removal", target="changes", change_type="removal",
                                             text="{objects}")
    [request] = committed(drafting.request_drafts, template, model_at(server.url), scenes=[scene])
    request.refresh_from_db()
    assert request.job.status == "failed" and "expected JSON form" in request.job.message
    assert request.prompt  # what was asked, kept for the admin
    assert not ContextChange.objects.exists()


def test_staff_request_drafts_by_api_and_others_cannot(chat_servers, client, committed):
    scene = with_top_view(SceneFactory())
    server = chat_servers('{"changes": ["The desk has been removed from the room entirely."]}')
    template = DraftingPrompt.objects.create(name="removal", target="changes", change_type="removal",
                                             text="{objects}")
    body = {"template": template.pk, "model": model_at(server.url).pk, "scenes": [scene.pk]}
    client.force_login(UserFactory())
    assert client.post("/api/v1/drafting/requests/", body, content_type="application/json").status_code == 403
    client.force_login(UserFactory(is_staff=True))
    response = committed(client.post, "/api/v1/drafting/requests/", body, content_type="application/json")
    assert response.status_code == 202 and response.json()[0]["scene"] == scene.pk
    assert response.json()[0]["status"] == "queued"  # its job's status when it was queued
    assert ContextChange.objects.get().provenance["source"] == "model"
    bad = client.post("/api/v1/drafting/requests/", {**body, "scenes": []}, content_type="application/json")
    assert bad.status_code == 400 and "targets" in bad.json()


def test_a_draft_request_runs_as_its_job_and_a_cancelled_one_writes_nothing(chat_servers, committed):
    from annotation import tasks
    from core import jobs, roles
    from core.models import Job

    scenes = [with_top_view(SceneFactory(object_labels=["desk"])) for _ in range(2)]
    server = chat_servers('{"changes": ["The desk has been moved to the window."]}')
    template = DraftingPrompt.objects.create(name="movement", target="changes", change_type="movement", text="{objects}")
    admin = UserFactory(role=roles.ADMIN)
    model = model_at(server.url)
    [done] = committed(drafting.request_drafts, template, model, scenes=scenes[:1], user=admin)
    done.refresh_from_db()
    assert done.job.kind == "drafting" and done.job.key == f"draft:{done.pk}" and done.job.created_by == admin
    assert done.job.status == Job.Status.DONE and done.job.report == {"changes": 1}
    tasks.run_draft_request(done.pk, done.job_id)  # redelivered: its job has ended, nothing is asked
    assert len(server.prompts) == 1

    [queued] = drafting.request_drafts(template, model, scenes=scenes[1:], user=admin)  # not yet committed: not sent
    jobs.cancel_job(queued.job_id, admin)
    queued.refresh_from_db()
    assert (queued.job.status, queued.job.message) == (Job.Status.CANCELLED, f"Cancelled by {admin.username}.")
    tasks.run_draft_request(queued.pk, queued.job_id)  # its message arrives after the cancel
    assert len(server.prompts) == 1 and ContextChange.objects.count() == 1
