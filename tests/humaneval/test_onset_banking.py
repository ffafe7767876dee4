"""#44: the onset clock cannot be banked. The question reaches the page with the stimulus, so an onset
reported later than the stimulus needs to load (a floor, raised by what the item's stimuli took for
other participants) is stored flagged: the answer is left out of the human row, and the study page
counts it. The probe: a 5 s item, onset reported 25 s late, answered a second later."""

from datetime import timedelta

import pytest
from django.test import Client

from humaneval.models import EvalSession, Response
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.onset import ONSET_FLOOR_MS
from humaneval.services.results import response_table, study_results
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    item = ItemFactory(answers=["armchair"])
    return create_study(item.benchmark, StudyDesign("Pilot", [item.pk], 5, 600, participants_per_item=10),
                        UserFactory())


def take(study, pid: str, load_s: float) -> EvalSession:
    """A participant whose item is served, reported on screen `load_s` later, and answered right away."""
    browser = Client()
    assert browser.post(f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "S",
                                                       "SESSION_ID": f"X-{pid}"}).status_code == 302
    session = EvalSession.objects.get(participant__crowd_worker__worker_id=pid)
    item = browser.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]
    served = Response.objects.get(session=session)
    Response.objects.filter(pk=served.pk).update(shown_at=served.shown_at - timedelta(seconds=load_s),
                                                 deadline=served.deadline - timedelta(seconds=load_s))
    assert browser.post(f"/api/v1/sessions/{session.pk}/onset/", {"item": item["id"]},
                        content_type="application/json").status_code == 200
    answered = browser.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": item["id"], "answer": "armchair"},
                            content_type="application/json")
    assert answered.status_code == 201, answered.content[:300]
    assert answered.json()["status"] == "finished"
    return session


def test_a_late_onset_is_flagged_and_left_out_of_the_human_row_and_counted(study):
    honest = take(study, "HONEST", 1)
    banker = take(study, "BANKER", 25)  # the probe: 25 s of reading on a 5 s item
    assert not Response.objects.get(session=honest).late_onset
    late = Response.objects.get(session=banker)
    assert late.late_onset and late.load_ms >= 25000 and late.latency_ms < 2000
    result = study_results(study)
    assert result["n_participants"] == 1 and result["n_late_onset"] == 1
    assert result["overall"]["EM"] == 100.0
    lines = {line[0]: line for line in response_table(study)}
    assert "onset later" in lines[banker.pk][-1] and lines[honest.pk][-1] == ""
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = admin.get(f"/studies/{study.pk}/settings/").content.decode()
    assert "1 answer left out of the results" in page


def test_the_allowance_is_raised_by_what_the_items_stimuli_took_for_others(study):
    slow = ONSET_FLOOR_MS / 1000 + 2  # past the floor: a heavy stimulus, for everyone
    first = take(study, "FIRST", slow)
    assert Response.objects.get(session=first).late_onset  # nothing measured yet: the floor holds
    for n in range(3):
        Response.objects.filter(session=take(study, f"P{n}", slow)).update(late_onset=False)
    Response.objects.filter(session=first).update(late_onset=False)
    measured = take(study, "AFTER", slow + 1)
    assert not Response.objects.get(session=measured).late_onset  # within 3x what the others' stimuli took
