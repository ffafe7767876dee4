"""Step 3: a study from approved items; an evaluator's timed session whose clock the server owns."""

from datetime import timedelta

import pytest
from django.utils import timezone

from core import roles
from core.errors import Forbidden
from humaneval.models import EvalSession, Response, Study
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.results import study_results
from humaneval.services.sessions import start_session
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    first = ItemFactory(answers=["armchair"])
    second = ItemFactory(change__scene__benchmark=first.benchmark, answers=["desk"])
    return create_study(first.benchmark, StudyDesign("Pilot", [first.pk, second.pk], 30, 600), UserFactory())


def enter(client, study, pid="EVAL1"):
    return client.post(f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "S", "SESSION_ID": "X"})


def answer(client, session, item_id, text):
    return client.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": item_id, "answer": text},
                       content_type="application/json")


def test_session_serves_items_without_gold_and_finishes_with_a_code(client, study):
    assert enter(client, study).status_code == 302
    session = EvalSession.objects.get()
    state = client.get(f"/api/v1/sessions/{session.pk}/current/").json()
    assert "answers" not in state["item"] and "armchair" not in str(state)
    first = state["item"]["id"]
    state = answer(client, session, first, "The armchair").json()
    second = state["item"]["id"]
    assert second != first
    state = answer(client, session, second, "desk").json()
    assert state["status"] == "finished" and state["completion_code"].startswith("CQA_")
    result = study_results(study)
    assert result["overall"]["EM"] == 100.0


def test_reload_resumes_the_same_item_with_the_same_deadline(client, study):
    enter(client, study)
    session = EvalSession.objects.get()
    a = client.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]
    b = client.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]
    assert a["id"] == b["id"] and a["deadline"] == b["deadline"]


def test_answering_after_the_deadline_gets_400_and_keeps_the_text_unscored(client, study):
    enter(client, study)
    session = EvalSession.objects.get()
    item_id = client.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]["id"]
    Response.objects.filter(session=session).update(deadline=timezone.now() - timedelta(seconds=1))
    response = answer(client, session, item_id, "window")
    assert response.status_code == 400
    assert "ran out" in response.json()["answer"][0]
    stored = Response.objects.get(session=session, item_id=item_id)
    assert stored.answer_text == "window" and stored.answered_at is None and stored.timed_out
    # The next fetch marks it timed out and moves on.
    nxt = client.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]
    assert nxt["id"] != item_id
    assert Response.objects.get(session=session, item_id=item_id).timed_out


def test_evaluator_requesting_a_gold_answer_gets_403(client, study):
    enter(client, study)
    item = study.items.first()
    response = client.get(f"/api/v1/items/{item.pk}/")
    assert response.status_code == 403
    assert "Gold answers" in response.json()["detail"]
    assert client.get("/api/v1/items/").status_code == 403


def test_answering_an_item_not_on_screen_is_refused(client, study):
    enter(client, study)
    session = EvalSession.objects.get()
    client.get(f"/api/v1/sessions/{session.pk}/current/")
    other = study.items.last()
    response = answer(client, session, other.pk, "desk")
    assert response.status_code == 400 and "item" in response.json()
    assert not Response.objects.filter(item=other).exists()


def test_authors_and_reviewers_of_an_item_cannot_evaluate_it(study):
    author = study.items.first().change.author
    with pytest.raises(Forbidden):
        start_session(study, author)
    assert not EvalSession.objects.exists()


def test_a_finished_participant_cannot_retake_the_study(client, study):
    enter(client, study)
    session = EvalSession.objects.get()
    EvalSession.objects.filter(pk=session.pk).update(status="finished")
    response = enter(client, study)
    assert response.status_code == 403 and b"already taken" in response.content


def test_study_needs_approved_items_of_the_benchmark(client):
    admin = UserFactory(role=roles.ADMIN)
    item = ItemFactory(status="draft")
    client.force_login(admin)
    response = client.post("/api/v1/studies/", {"benchmark": item.benchmark.slug, "name": "S", "items": [item.pk]},
                           content_type="application/json")
    assert response.status_code == 400 and "items" in response.json()
    assert not Study.objects.exists()


def test_another_participants_session_is_forbidden(client, study):
    enter(client, study, pid="A")
    session = EvalSession.objects.get()
    client.logout()
    enter(client, study, pid="B")
    assert client.get(f"/api/v1/sessions/{session.pk}/current/").status_code == 403
