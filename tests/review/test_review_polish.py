"""The optional grammar pass: an OpenAI-compatible server on loopback (served by the test) corrects
approved changes through modeleval's adapter; each correction is a revision a reviewer accepts or
reverts, and a repeated task polishes nothing twice."""

import pytest

from benchmarks.models import ContextChange
from core import roles
from core.models import Job
from modeleval.models import ModelSpec
from review import polish
from review import services as review_services
from review.models import Polish
from tests.factories import ChangeFactory, ItemFactory, UserFactory
from tests.together import fire

pytestmark = pytest.mark.django_db


def language_model(url) -> ModelSpec:
    return ModelSpec.objects.create(name="polisher", adapter="openai_compatible",
                                    config={"endpoint": url, "model": "tiny", "max_retries": 0})


def test_polish_is_a_revision_that_a_reviewer_accepts_or_reverts(client, chat_servers, django_capture_on_commit_callbacks):
    typo = ChangeFactory(status="approved", raw_text="the chair have been moved to the window")
    scene = typo.scene
    fine = ChangeFactory(scene=scene, status="approved", raw_text="The lamp is now on the desk.")
    ChangeFactory(scene=scene, status="submitted", raw_text="A raw change nobody has approved yet.")
    chat = chat_servers('"The chair has been moved to the window."', "The lamp is now on the desk.")
    model = language_model(chat.url)
    admin = UserFactory(role=roles.ADMIN)
    client.force_login(admin)

    assert 'id="polish-form"' in client.get("/review/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post("/api/v1/polish/", {"benchmark": scene.benchmark.slug, "model": str(model.pk)},
                              content_type="application/json")
    assert started.status_code == 202 and started.json()["queued"] == 2
    assert Job.objects.get(pk=started.json()["job"]).status == Job.Status.DONE
    assert len(chat.prompts) == 2 and "the chair have been moved" in chat.prompts[0]
    typo.refresh_from_db()
    assert typo.raw_text == "the chair have been moved to the window"
    assert typo.text == "The chair has been moved to the window." and typo.version == 2
    applied = Polish.objects.get(change=typo)
    assert applied.status == "applied" and applied.revision.number == 1 and applied.revision.author is None
    assert Polish.objects.get(change=fine).status == "skipped" and not fine.revisions.exists()

    # The same revisions are never polished twice: the task runs again and asks the model nothing.
    assert polish.polish_changes([typo.pk, fine.pk], model.pk) == 0 and len(chat.prompts) == 2

    page = client.get(f"/review/changes/{typo.pk}/").content.decode()
    assert 'id="accept-polish"' in page and "the chair have been moved to the window" in page
    history = client.get(f"/api/v1/changes/{typo.pk}/history/").json()
    assert [e.get("author") for e in history if e["kind"] == "revision"] == ["model: polisher"]

    reviewer = UserFactory(role=roles.REVIEWER)
    client.force_login(reviewer)
    stale = client.post(f"/api/v1/polishes/{applied.pk}/revert/", {"version": 1}, content_type="application/json")
    assert stale.status_code == 409
    reverted = client.post(f"/api/v1/polishes/{applied.pk}/revert/", {"version": 2}, content_type="application/json")
    assert reverted.status_code == 200 and reverted.json()["status"] == "reverted"
    typo.refresh_from_db()
    assert typo.text == "the chair have been moved to the window" and typo.refined_text == ""
    assert list(typo.revisions.values_list("number", "author")) == [(1, None), (2, reviewer.pk)]
    assert polish.polish_changes([typo.pk], model.pk) == 0 and len(chat.prompts) == 2  # reverted text: not again
    again = client.post(f"/api/v1/polishes/{applied.pk}/accept/", {"version": 3}, content_type="application/json")
    assert again.status_code == 400 and "polish" in again.json()


def test_a_reviewer_accepts_a_polish_and_bad_requests_are_400(client, chat_servers):
    change = ChangeFactory(status="approved", raw_text="the sofa were removed from the room")
    chat = chat_servers("The sofa was removed from the room.")
    model = language_model(chat.url)
    assert polish.polish_changes([change.pk], model.pk) == 1
    applied = Polish.objects.get()
    client.force_login(UserFactory(role=roles.REVIEWER))
    accepted = client.post(f"/api/v1/polishes/{applied.pk}/accept/", {"version": 2}, content_type="application/json")
    assert accepted.status_code == 200 and accepted.json()["change"]["refined_text"] == "The sofa was removed from the room."
    assert ContextChange.objects.get(pk=change.pk).version == 2  # accepting changes no text

    client.force_login(UserFactory(role=roles.ADMIN))
    baseline = ModelSpec.objects.create(name="random", adapter="random")
    for model_id in (str(baseline.pk), "x"):
        refused = client.post("/api/v1/polish/", {"benchmark": change.scene.benchmark.slug, "model": model_id},
                              content_type="application/json")
        assert refused.status_code == 400 and "model" in refused.json()


def test_an_implausible_correction_is_not_applied():
    assert polish.cleaned("Sure! Here is the corrected text: The chair has been moved to the window, "
                          "next to the shelf, as you asked me to do just now.", "the chair moved") is None
    assert polish.cleaned('  "The chair moved."  ', "the chair moved") == "The chair moved."


def test_the_pass_polishes_questions_and_answers_once(chat_servers, django_capture_on_commit_callbacks):
    item = ItemFactory(question="what are next to the window now", answers=["the chair , by the door"])
    choice = ItemFactory(change=item.change, question="Which object moved?", answers=["B"], answer_format="single",
                         choices=["desk", "chair"])
    chat = chat_servers(item.change.text, '"What is next to the window now?"', "The chair, by the door.",
                        "Which object moved?")
    model = language_model(chat.url)
    with django_capture_on_commit_callbacks(execute=True):
        job = polish.start_polish(item.benchmark, model.pk, UserFactory(role=roles.ADMIN))
    job.refresh_from_db()
    assert job.kind == "polish" and job.total == 3  # the change and the two items, in one job
    assert job.status == "done" and job.report == {"polished": {"changes": 1, "items": 1}}
    assert "question about a 3D scene" in chat.prompts[1] and "what are next to the window now" in chat.prompts[1]
    assert "answer to a question" in chat.prompts[2] and "the chair , by the door" in chat.prompts[2]
    item.refresh_from_db()
    assert item.question == "What is next to the window now?" and item.answers == ["The chair, by the door."]
    revision = item.revisions.order_by("number").last()
    assert revision.author is None and revision.note == "grammar pass (model: polisher)"
    choice.refresh_from_db()
    assert choice.answers == ["B"] and not choice.revisions.exists()  # letters are not polished; nothing changed
    asked = len(chat.prompts)
    assert asked == 4  # the change, the question, the answer, the choice item's question

    # Written by the pass: never asked again; edited back by a reviewer: not asked again either.
    assert polish.polish_items([item.pk], model.pk) == 0 and len(chat.prompts) == asked
    reviewer = UserFactory(role=roles.REVIEWER)
    review_services.edit_item(item.pk, reviewer, item.version, "what are next to the window now",
                              ["the chair , by the door"])
    assert polish.polish_items([item.pk], model.pk) == 0 and len(chat.prompts) == asked


def test_a_pass_is_one_job_asked_once_and_a_cancel_stops_it_between_batches(chat_servers, monkeypatch,
                                                                            django_capture_on_commit_callbacks):
    from core.jobs import cancel_job

    first = ChangeFactory(status="approved", raw_text="the chair have been moved to the window")
    ChangeFactory(scene=first.scene, status="approved", raw_text="the lamp have been moved to the desk")
    chat = chat_servers("The chair has been moved to the window.", "The lamp has been moved to the desk.")
    model = language_model(chat.url)
    admin = UserFactory(role=roles.ADMIN)
    monkeypatch.setattr(polish, "POLISH_BATCH", 1)
    one_batch = polish.polish_changes

    def then_cancel(change_ids, model_id):
        done = one_batch(change_ids, model_id)
        cancel_job(job.pk, admin)
        return done

    monkeypatch.setattr(polish, "polish_changes", then_cancel)
    with django_capture_on_commit_callbacks(execute=True):
        job = polish.start_polish(first.scene.benchmark, model.pk, admin)
        assert polish.start_polish(first.scene.benchmark, model.pk, admin) == job  # one pass at a time
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED and job.done == 0 and len(chat.prompts) == 1
    assert not polish.running_passes(first.scene.benchmark).exists()


def test_a_running_pass_shows_its_job_widget_on_the_queue_and_the_change_page(client, chat_servers):
    change = ChangeFactory(status="approved", raw_text="the chair have been moved to the window")
    admin = UserFactory(role=roles.ADMIN)
    job = polish.start_polish(change.scene.benchmark, language_model(chat_servers("x").url).pk, admin)  # not sent
    client.force_login(admin)
    for page in ("/review/", f"/review/changes/{change.pk}/"):
        html = client.get(page).content.decode()
        assert f'data-job-id="{job.pk}"' in html and 'class="job-cancel"' in html, page


@pytest.mark.django_db(transaction=True)
def test_two_starts_at_the_same_moment_queue_one_pass(chat_servers, monkeypatch):
    change = ChangeFactory(status="approved", raw_text="the chair have been moved to the window")
    model, admin = language_model(chat_servers("x").url), UserFactory(role=roles.ADMIN)
    monkeypatch.setattr(polish.dispatch, "send_polish", lambda *args: None)  # queued, not run
    started = fire(lambda _: polish.start_polish(change.scene.benchmark, model.pk, admin).pk, 4)
    assert len(set(started)) == 1 and Job.objects.filter(kind="polish").count() == 1
