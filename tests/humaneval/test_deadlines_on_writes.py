"""Deadlines hold on every write (issue #34, M6): going back may change an answer only within the item's
own time; after it, the change is refused (409) and the first answer, with its latency, stands."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from humaneval.models import EvalSession, Response
from humaneval.services.design import StudyDesign, create_study
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def answer(client, session, item_id, text):
    return client.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": item_id, "answer": text},
                       content_type="application/json")


def test_going_back_cannot_change_an_answer_after_the_items_deadline():
    first = ItemFactory(answers=["armchair"])
    second = ItemFactory(change__scene__benchmark=first.benchmark, answers=["desk"])
    study = create_study(first.benchmark, StudyDesign("Back", [first.pk, second.pk], 30, 600, allow_going_back=True,
                                                      shuffle_items=False), UserFactory())
    client = Client()
    assert client.post(f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": "LATE1", "STUDY_ID": "S",
                                                      "SESSION_ID": "X"}).status_code == 302
    session = EvalSession.objects.get()
    shown = client.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]["id"]
    assert answer(client, session, shown, "a sofa").status_code == 201
    # Within the item's time the answer may still change.
    assert answer(client, session, shown, "a chair").status_code in (200, 201)
    Response.objects.filter(session=session, item_id=shown).update(deadline=timezone.now() - timedelta(seconds=1))
    late = answer(client, session, shown, "armchair")
    assert late.status_code == 409 and "ran out" in late.json()["item"][0]
    stored = Response.objects.get(session=session, item_id=shown)
    assert stored.answer_text == "a chair"
