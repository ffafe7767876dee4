"""#34: a study's places are held by entries Prolific knows (where PROLIFIC_API_TOKEN is set), against
the loopback fake (tests/prolific_fake.py): a made-up SESSION_ID is refused at entry; the check of a
study's entries against Prolific's submission list ends and flags those with no submission (or a
returned one), so their places go back."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import call_command
from django.test import Client

from crowd.models import PlatformSubmission
from humaneval import sql
from humaneval.models import EvalSession
from humaneval.services import prolific_places
from humaneval.services.design import StudyDesign, create_study
from tests.core.test_hardening_writes import admin_user, approved_items, link
from tests.prolific_fake import FakeProlific

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(settings):
    with FakeProlific() as fake:
        settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL = fake.token, fake.base_url
        yield fake


@pytest.fixture
def study():
    items = approved_items(2)
    return create_study(items[0].benchmark, StudyDesign("Pilot", [i.pk for i in items], participants_per_item=4),
                        None)


def on_prolific(fake, study) -> str:
    """The study published on the fake (its id), entered through the documented placeholders."""
    prolific_id = fake._new_id()
    fake.studies[prolific_id] = {
        "id": prolific_id, "status": "ACTIVE", "name": study.name,
        "external_study_url": f"http://testserver/crowd/studies/{study.pk}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                              "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
    }
    return prolific_id


def enter(fake, prolific_id, pid) -> tuple[Client, str]:
    url = urlsplit(fake.enter(prolific_id, pid))
    params = {k: v[0] for k, v in parse_qs(url.query).items()}
    browser = Client()
    response = browser.post(url.path, params)
    assert response.status_code == 302, response.content[-800:]
    return browser, params["SESSION_ID"]


def test_a_made_up_session_id_takes_no_place_at_entry(fake, study):
    prolific_id = on_prolific(fake, study)
    enter(fake, prolific_id, "GENUINE1")
    for params in (link("MADEUP1", "NO-SUCH-SESSION", prolific_id),  # no such submission
                   link("MADEUP2", next(iter(fake.submissions)), prolific_id)):  # another participant's
        refused = Client().post(f"/crowd/studies/{study.pk}/", params)
        assert refused.status_code == 403 and "SESSION_ID" in refused.content.decode()
    assert EvalSession.objects.count() == 1


def test_without_a_token_nothing_is_asked_of_prolific(settings, study):
    settings.PROLIFIC_API_TOKEN = ""
    assert Client().post(f"/crowd/studies/{study.pk}/", link("ANYONE", "ANY-SESSION")).status_code == 302
    with pytest.raises(Exception, match="PROLIFIC_API_TOKEN"):
        prolific_places.check_places(study.pk)


def test_entries_prolific_does_not_list_are_ended_and_flagged(fake, settings, study):
    prolific_id = on_prolific(fake, study)
    enter(fake, prolific_id, "GENUINE1")
    _, returned_session = enter(fake, prolific_id, "RETURNER")
    # Two made-up entries that got in while no token was set (or Prolific did not answer).
    settings.PROLIFIC_API_TOKEN = ""
    for pid in ("FAKE1", "FAKE2"):
        assert Client().post(f"/crowd/studies/{study.pk}/", link(pid, f"made-up-{pid}", prolific_id)).status_code == 302
    settings.PROLIFIC_API_TOKEN = fake.token
    fake.submissions[returned_session]["status"] = "RETURNED"
    assert set(sql.places_taken(study.pk).values()) == {4}  # full: the next genuine participant is refused

    report = prolific_places.check_places(study.pk)

    assert report["checked"] == 4 and report["holding"] == 1
    flagged = {f["participant"]: f["reason"] for f in report["flagged"]}
    assert set(flagged) == {"RETURNER", "FAKE1", "FAKE2"}
    assert "no submission" in flagged["FAKE1"] and "returned" in flagged["RETURNER"]
    assert PlatformSubmission.objects.get(submission_id="made-up-FAKE1").status == prolific_places.NOT_ON_PROLIFIC
    assert sum(sql.places_taken(study.pk).values()) == 2  # only GENUINE1's two items hold places now
    enter(fake, prolific_id, "GENUINE2")  # the place is free again
    assert EvalSession.objects.count() == 5


def test_the_check_from_the_study_page_and_the_command_is_the_study_s_job(fake, settings, study, capsys,
                                                                          django_capture_on_commit_callbacks):
    prolific_id = on_prolific(fake, study)
    settings.PROLIFIC_API_TOKEN = ""
    Client().post(f"/crowd/studies/{study.pk}/", link("FAKE9", "made-up-9", prolific_id))
    settings.PROLIFIC_API_TOKEN = fake.token
    admin = Client()
    admin.force_login(admin_user())
    assert admin.get(f"/studies/{study.pk}/settings/").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        started = admin.post(f"/studies/{study.pk}/places/check/")
    assert started.status_code == 302 and started["Location"].endswith("#places")
    study.refresh_from_db()
    job = study.places_check
    assert job.kind == "prolific_places" and job.status == "done" and (job.done, job.total) == (1, 1)
    assert job.report["holding"] == 0 and [f["participant"] for f in job.report["flagged"]] == ["FAKE9"]
    html = admin.get(f"/studies/{study.pk}/settings/").content.decode()
    assert f'data-job-id="{job.pk}"' in html and "0 of 1 sessions hold a place" in html and "FAKE9" in html
    call_command("check_prolific_places", str(study.pk))  # the same verb: a new job, run in-process
    assert '"flagged"' in capsys.readouterr().out
    study.refresh_from_db()
    assert study.places_check != job and study.places_check.status == "done"


def test_a_check_cancelled_before_it_runs_ends_nobody(fake, settings, study):
    from core.jobs import cancel_job

    prolific_id = on_prolific(fake, study)
    settings.PROLIFIC_API_TOKEN = ""
    Client().post(f"/crowd/studies/{study.pk}/", link("FAKE9", "made-up-9", prolific_id))
    settings.PROLIFIC_API_TOKEN = fake.token
    admin = admin_user()
    job = prolific_places.start_places_check(study.pk, admin, send=False)
    assert prolific_places.start_places_check(study.pk, admin, send=False) == job  # one check at a time
    cancel_job(job.pk, admin)
    prolific_places.run_places_check(job.pk, study.pk)
    job.refresh_from_db()
    assert job.status == "cancelled" and job.report == {}
    assert not PlatformSubmission.objects.filter(status=prolific_places.NOT_ON_PROLIFIC).exists()
