"""#44: one entry rule per study. A study run on Prolific (declared, published there, or any study while
PROLIFIC_API_TOKEN is set) takes Prolific's parameters only: another platform's (workerId,
assignmentId, participantId) get no session and no row; its STUDY_ID must be the study's; with the API
every entry is asked of Prolific; a participant whose id someone else entered first gets in and the
stand-in's session is ended, flagged and left out of the human row and the places."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Assignment
from crowd.models import CrowdWorker, PlatformSubmission, ProlificStudy, SessionConflict
from humaneval import sql
from humaneval.models import EvalSession, SessionItem, Study
from humaneval.services import prolific_places
from humaneval.services.design import StudyDesign, create_study
from tests.core.test_hardening_writes import admin_user, approved_items, link, make_campaign
from tests.prolific_fake import FakeProlific

pytestmark = pytest.mark.django_db

TABLES = (get_user_model(), CrowdWorker, PlatformSubmission, EvalSession, SessionItem, SessionConflict, Assignment)


def counts() -> dict:
    return {model.__name__: model.objects.count() for model in TABLES}


@pytest.fixture
def fake(settings):
    with FakeProlific() as fake:
        settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL = fake.token, fake.base_url
        yield fake


@pytest.fixture
def study():
    items = approved_items(2)
    return create_study(items[0].benchmark, StudyDesign("Pilot", [i.pk for i in items], participants_per_item=2),
                        None)


def on_prolific(fake, study, configured=True) -> str:
    """The study published on the fake and, `configured`, linked to it here (its ProlificStudy)."""
    prolific_id = fake._new_id()
    fake.studies[prolific_id] = {
        "id": prolific_id, "status": "ACTIVE", "name": study.name,
        "external_study_url": f"http://testserver/crowd/studies/{study.pk}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                              "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
    }
    if configured:
        ProlificStudy.objects.create(prolific_id=prolific_id, scope=f"study:{study.pk}")
    return prolific_id


def prolific_link(fake, prolific_id, pid) -> tuple[str, dict]:
    url = urlsplit(fake.enter(prolific_id, pid))
    return url.path, {k: v[0] for k, v in parse_qs(url.query).items()}


def enter_genuine(fake, prolific_id, pid):
    path, params = prolific_link(fake, prolific_id, pid)
    browser = Client()
    response = browser.post(path, params)
    assert response.status_code == 302, response.content[-800:]
    return browser, params


FOREIGN = [{"workerId": "anything", "assignmentId": "x"}, {"participantId": "anything", "assignmentId": "x"},
           {"worker_id": "anything", "assignment_id": "x"}, {"participant_id": "anything", "assignmentId": "x"}]


@pytest.mark.parametrize("params", FOREIGN, ids=lambda p: next(iter(p)))
def test_other_platforms_parameters_get_no_session_on_a_prolific_study(fake, study, params):
    prolific_id = on_prolific(fake, study, configured=False)  # the token alone makes the study a Prolific one
    before = counts()
    query = "&".join(f"{k}={v}" for k, v in params.items())
    for method in ("post", "get"):
        refused = getattr(Client(), method)(f"/crowd/studies/{study.pk}/?{query}")
        assert refused.status_code == 403, refused.content[-500:]
        page = refused.content.decode()
        assert "run on Prolific" in page and next(iter(params)) in page
    assert counts() == before
    assert not fake.calls or all("submissions/" not in path for _, path, _ in fake.calls)  # not even asked
    # The genuine participant still finds their places.
    enter_genuine(fake, prolific_id, "GENUINE1")
    enter_genuine(fake, prolific_id, "GENUINE2")
    assert EvalSession.objects.count() == 2


def test_a_pid_sent_as_worker_id_squats_nobody(fake, study):
    prolific_id = on_prolific(fake, study)
    for params in ({"workerId": "REALPID", "assignmentId": "x"}, {"participantId": "REALPID", "assignmentId": "y"}):
        assert Client().post(f"/crowd/studies/{study.pk}/", params).status_code == 403
    enter_genuine(fake, prolific_id, "REALPID")
    assert CrowdWorker.objects.get().worker_id == "REALPID" and not SessionConflict.objects.exists()


def test_the_study_says_which_platform_even_with_no_token(settings, study):
    settings.PROLIFIC_API_TOKEN = ""
    Study.objects.filter(pk=study.pk).update(platform="prolific")
    assert Client().post(f"/crowd/studies/{study.pk}/", {"workerId": "W1", "assignmentId": "A1"}).status_code == 403
    assert Client().post(f"/crowd/studies/{study.pk}/", link("P1", "S1")).status_code == 302
    Study.objects.filter(pk=study.pk).update(platform="generic")
    refused = Client().post(f"/crowd/studies/{study.pk}/", link("P2", "S2"))
    assert refused.status_code == 403 and "not run on Prolific" in refused.content.decode()
    assert Client().post(f"/crowd/studies/{study.pk}/", {"workerId": "W1", "assignmentId": "A1"}).status_code == 302
    assert EvalSession.objects.count() == 2


def test_a_study_with_no_platform_and_no_token_takes_any_link(settings, study):
    settings.PROLIFIC_API_TOKEN = ""
    assert Client().post(f"/crowd/studies/{study.pk}/", {"workerId": "W1", "assignmentId": "A1"}).status_code == 302
    assert Client().post(f"/crowd/studies/{study.pk}/", link("P1", "S1")).status_code == 302


def test_study_id_must_be_the_studys_own(settings, study):
    settings.PROLIFIC_API_TOKEN = ""
    ProlificStudy.objects.create(prolific_id="OURSTUDY", scope=f"study:{study.pk}")
    before = counts()
    for other in ("ANOTHERSTUDY", "S"):
        refused = Client().post(f"/crowd/studies/{study.pk}/", link("P1", "SESSION1", other))
        assert refused.status_code == 403 and "STUDY_ID" in refused.content.decode()
    assert counts() == before
    assert Client().post(f"/crowd/studies/{study.pk}/", link("P1", "SESSION1", "OURSTUDY")).status_code == 302


def test_with_the_api_a_submission_of_another_study_takes_no_place(fake, study):
    ours = on_prolific(fake, study)
    elsewhere = fake._new_id()
    fake.studies[elsewhere] = {**fake.studies[ours], "id": elsewhere}
    _, params = prolific_link(fake, elsewhere, "P1")
    before = counts()
    refused = Client().post(f"/crowd/studies/{study.pk}/", {**params, "STUDY_ID": ours})
    assert refused.status_code == 403 and "another Prolific study" in refused.content.decode()
    assert counts() == before


def test_a_genuine_participant_takes_their_id_back_from_a_squatter(fake, settings, study):
    prolific_id = on_prolific(fake, study)
    path, params = prolific_link(fake, prolific_id, "REALPID")
    # The squatter entered the real PID with a made-up session while Prolific was not asked.
    settings.PROLIFIC_API_TOKEN = ""
    squatter = Client()
    assert squatter.post(path, {**params, "SESSION_ID": "MADE-UP"}).status_code == 302
    settings.PROLIFIC_API_TOKEN = fake.token
    squatted = EvalSession.objects.get()
    assert sum(sql.places_taken(study.pk).values()) == 2

    entered = Client().post(path, params)

    assert entered.status_code == 302, entered.content[-800:]
    real = CrowdWorker.objects.get(worker_id="REALPID")
    assert real.session_id == params["SESSION_ID"] and real.user.is_active
    assert PlatformSubmission.objects.get(submission_id=params["SESSION_ID"]).verified
    squatted.refresh_from_db()
    assert squatted.flagged and squatted.participant != real.user and not squatted.participant.is_active
    assert sum(sql.places_taken(study.pk).values()) == 2  # the real participant's two; none for the squatter
    assert SessionConflict.objects.get().resolution == SessionConflict.Resolution.REASSIGNED
    # The squatter's link comes back: Prolific knows no such submission.
    again = squatter.post(path, {**params, "SESSION_ID": "MADE-UP"})
    assert again.status_code == 403 and EvalSession.objects.count() == 2


def test_a_verified_holder_on_a_new_verified_session_is_the_same_person(fake, study):
    prolific_id = on_prolific(fake, study)
    browser, first = enter_genuine(fake, prolific_id, "REALPID")
    fake.submissions[first["SESSION_ID"]]["status"] = "RETURNED"
    _, second = enter_genuine(fake, prolific_id, "REALPID")
    worker = CrowdWorker.objects.get()
    assert worker.session_id == second["SESSION_ID"] and worker.user.is_active
    assert EvalSession.objects.count() == 1 and not SessionConflict.objects.exists()


def test_the_places_check_sees_entries_made_with_other_platforms_ids(fake, settings, study):
    prolific_id = on_prolific(fake, study)
    settings.PROLIFIC_API_TOKEN = ""
    Study.objects.filter(pk=study.pk).update(platform="")
    ProlificStudy.objects.all().delete()  # entered before the study was linked and the token set
    for worker in ("W1", "W2"):
        assert Client().post(f"/crowd/studies/{study.pk}/", {"workerId": worker, "assignmentId": f"A-{worker}"}
                             ).status_code == 302
    settings.PROLIFIC_API_TOKEN = fake.token
    ProlificStudy.objects.create(prolific_id=prolific_id, scope=f"study:{study.pk}")
    assert set(sql.places_taken(study.pk).values()) == {2}

    report = prolific_places.check_places(study.pk)

    assert report["checked"] == 2 and report["holding"] == 0
    assert {f["participant"] for f in report["flagged"]} == {"W1", "W2"}
    assert all("another platform" in f["reason"] for f in report["flagged"])
    assert all(s.flagged for s in EvalSession.objects.all())
    assert sum(sql.places_taken(study.pk).values()) == 0
    enter_genuine(fake, prolific_id, "GENUINE1")
    admin = Client()
    admin.force_login(admin_user())
    page = admin.get(f"/studies/{study.pk}/settings/").content.decode()
    assert "Links are taken from Prolific only" in page and "checked against Prolific's API" in page
    assert "2 sessions flagged" in page and "entered with another platform" in page
    assert "0 Prolific entries not checked against Prolific" in page


def test_a_campaign_on_prolific_takes_prolifics_parameters_only(settings):
    settings.PROLIFIC_API_TOKEN = ""
    campaign = make_campaign()
    ProlificStudy.objects.create(prolific_id="CAMPAIGNSTUDY", scope=f"campaign:{campaign.pk}")
    before = counts()
    for params in ({"workerId": "W1", "assignmentId": "A1"}, link("P1", "S1", "OTHER")):
        for method in ("get", "post"):
            assert getattr(Client(), method)(f"/crowd/campaigns/{campaign.pk}/", params).status_code == 403
    assert counts() == before
    assert Client().post(f"/crowd/campaigns/{campaign.pk}/", link("P1", "S1", "CAMPAIGNSTUDY")).status_code == 302


def test_a_stranger_trying_made_up_sessions_fills_no_unbounded_conflict_list(settings, study):
    from crowd.squatting import MAX_OPEN_PER_ID

    settings.PROLIFIC_API_TOKEN = ""
    assert Client().post(f"/crowd/studies/{study.pk}/", link("OWNER", "REAL-SESSION")).status_code == 302
    # with no API, the id's next session takes it over once (test_entry_without_api); then it is refused
    assert Client().post(f"/crowd/studies/{study.pk}/", link("OWNER", "GUESS-0")).status_code == 302
    for n in range(1, MAX_OPEN_PER_ID + 11):
        assert Client().post(f"/crowd/studies/{study.pk}/", link("OWNER", f"GUESS-{n}")).status_code == 403
    open_ones = SessionConflict.objects.filter(resolution="")
    assert open_ones.count() == MAX_OPEN_PER_ID
    assert sum(open_ones.values_list("attempts", flat=True)) == MAX_OPEN_PER_ID + 10
    assert CrowdWorker.objects.get(worker_id="OWNER").session_id == "GUESS-0"


def finish(browser, session):
    state = browser.get(f"/api/v1/sessions/{session.pk}/current/").json()
    while state.get("item"):
        state = browser.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": state["item"]["id"], "answer": "x"},
                             content_type="application/json").json()
    assert state["status"] == "finished", state


def test_a_flagged_session_is_left_out_of_the_human_row(fake, settings, study):
    from humaneval.services.results import study_results

    prolific_id = on_prolific(fake, study, configured=False)
    settings.PROLIFIC_API_TOKEN = ""
    stand_in = Client()
    assert stand_in.post(f"/crowd/studies/{study.pk}/", {"workerId": "W1", "assignmentId": "A1"}).status_code == 302
    finish(stand_in, EvalSession.objects.get())
    settings.PROLIFIC_API_TOKEN = fake.token
    genuine, _ = enter_genuine(fake, prolific_id, "GENUINE1")
    finish(genuine, EvalSession.objects.get(participant__crowd_worker__worker_id="GENUINE1"))
    assert study_results(study)["n_participants"] == 2

    prolific_places.check_places(study.pk)

    result = study_results(study)
    flagged = EvalSession.objects.get(participant__crowd_worker__worker_id="W1")
    assert result["n_participants"] == 1
    assert [e["session"] for e in result["exclusions"]] == [flagged.pk]
    assert "flagged" in result["exclusions"][0]["reason"]


def test_the_admin_sets_the_studys_platform_and_prolific_study_on_its_settings_page(settings, study):
    settings.PROLIFIC_API_TOKEN = ""
    admin = Client()
    admin.force_login(admin_user())
    saved = admin.post(f"/studies/{study.pk}/entry/", {"platform": "prolific", "prolific_study_id": "OURSTUDY"})
    assert saved.status_code == 302 and saved["Location"].endswith("#entry")
    study.refresh_from_db()
    assert study.platform == "prolific"
    assert ProlificStudy.objects.get(prolific_id="OURSTUDY").scope == f"study:{study.pk}"
    page = admin.get(f"/studies/{study.pk}/settings/").content.decode()
    assert "Links are taken from Prolific only" in page and "OURSTUDY" in page
    assert Client().post(f"/crowd/studies/{study.pk}/", link("P1", "S1", "ELSEWHERE")).status_code == 403
    assert Client().post(f"/crowd/studies/{study.pk}/", {"workerId": "W1", "assignmentId": "A"}).status_code == 403
    assert Client().post(f"/crowd/studies/{study.pk}/", link("P1", "S1", "OURSTUDY")).status_code == 302
    other = create_study(study.benchmark, StudyDesign("Other", [study.items.first().pk]), None)
    taken = admin.post(f"/studies/{other.pk}/entry/", {"platform": "prolific", "prolific_study_id": "OURSTUDY"})
    assert taken.status_code == 409 and "already linked" in taken.content.decode()
    for bad in ({"platform": "mturk"}, {"platform": "generic", "prolific_study_id": "X1"},
                {"platform": "prolific", "prolific_study_id": "bad id!"}):
        assert admin.post(f"/studies/{other.pk}/entry/", bad).status_code == 400, bad
    other.refresh_from_db()
    assert other.platform == "" and not ProlificStudy.objects.filter(scope=f"study:{other.pk}").exists()


def test_the_demo_seeds_its_participants_without_asking_prolific(settings, study):
    from humaneval.services.sessions import enter_study_from_crowd_link

    settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL = "set", "http://127.0.0.1:9/api/v1/"  # nothing listens
    user, session = enter_study_from_crowd_link(study.pk, link("demo-eval-1", "demo-session-1", "demo-study"),
                                                ask_prolific=False)
    assert session.participant == user and not PlatformSubmission.objects.get().verified
