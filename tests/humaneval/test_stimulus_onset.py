"""#28: an item's clock from stimulus onset. The page reports when the stimuli are on screen; the item's
deadline and its response time run from then, its load time is stored, and an onset reported later
than the bound after serving is refused (the clock stays from serving)."""

from datetime import timedelta

import pytest

from humaneval.models import EvalSession, Response
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.onset import ONSET_BOUND
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    first = ItemFactory(answers=["armchair"])
    second = ItemFactory(change__scene__benchmark=first.benchmark, answers=["desk"])
    return create_study(first.benchmark, StudyDesign("Pilot", [first.pk, second.pk], 30, 600), UserFactory())


def start(client, study):
    client.post(f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": "EVAL1", "STUDY_ID": "S", "SESSION_ID": "X"})
    session = EvalSession.objects.get()
    item = client.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]
    return session, item


def served_earlier(seconds):
    """The item was served `seconds` ago (its stimuli took that long to arrive)."""
    response = Response.objects.get()
    Response.objects.filter(pk=response.pk).update(shown_at=response.shown_at - timedelta(seconds=seconds),
                                                   deadline=response.deadline - timedelta(seconds=seconds))
    return Response.objects.get()


def onset(client, session, item_id, **extra):
    return client.post(f"/api/v1/sessions/{session.pk}/onset/", {"item": item_id, **extra},
                       content_type="application/json")


def test_the_clock_and_the_response_time_run_from_onset_and_the_load_time_is_stored(client, study):
    session, item = start(client, study)
    served = served_earlier(3)
    answer = onset(client, session, item["id"], load_ms=2990)
    assert answer.status_code == 200, answer.content
    response = Response.objects.get()
    assert 3000 <= response.load_ms < 4500
    assert response.deadline - served.deadline == response.onset_at - served.shown_at  # the 3 s given back
    assert client.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]["deadline"] == answer.json()["deadline"]
    again = onset(client, session, item["id"])  # a reload reports again: nothing moves
    assert again.json()["deadline"] == answer.json()["deadline"]
    client.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": item["id"], "answer": "armchair"},
                content_type="application/json")
    response.refresh_from_db()
    assert response.latency_ms < 1500  # from onset: the 3 s of loading are not in it
    assert (response.answered_at - response.shown_at).total_seconds() >= 3


def test_an_onset_outside_the_bound_is_refused_and_the_clock_stays_from_serving(client, study):
    session, item = start(client, study)
    served = served_earlier(ONSET_BOUND.total_seconds() + 5)
    late = onset(client, session, item["id"])
    assert late.status_code == 400 and list(late.json()) == ["onset"]
    response = Response.objects.get()
    assert response.onset_at is None and response.deadline == served.deadline
    assert onset(client, session, 999999).status_code == 404
    assert onset(client, session, item["id"], load_ms=-1).status_code == 400


def test_the_results_say_how_long_stimuli_took_to_load(client, study):
    from humaneval.services.results import CSV_HEADER, response_table, study_results

    session, item = start(client, study)
    served_earlier(2)
    onset(client, session, item["id"])
    state = client.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": item["id"], "answer": "armchair"},
                        content_type="application/json").json()
    client.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": state["item"]["id"], "answer": "desk"},
                content_type="application/json")
    rows = [dict(zip(CSV_HEADER, line, strict=True)) for line in response_table(study)]
    assert [row["load_ms"] >= 2000 for row in rows if row["item"] == item["id"]] == [True]
    assert study_results(study)["median_load_seconds"] >= 2
