"""#34: state changes only on POST (a crowd link's GET, the study start page and the next scene write
nothing; their POST does), evaluator invitations (non-crowd evaluators see and start only invited
studies) and a squatted PID (a page that says so; the admin releases or reassigns it)."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, AssignmentDraft
from core import roles
from crowd.models import CrowdWorker, PlatformSubmission, SessionConflict
from humaneval.models import EvalSession, SessionItem, StudyInvitation
from tests.core.test_hardening_writes import admin_user, approved_items, link, make_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TABLES = (get_user_model(), CrowdWorker, PlatformSubmission, EvalSession, SessionItem, Assignment, AssignmentDraft,
          SessionConflict)


def counts() -> dict:
    return {model.__name__: model.objects.count() for model in TABLES}


@pytest.fixture
def study():
    from humaneval.services.design import StudyDesign, create_study

    items = approved_items(3)
    return create_study(items[0].benchmark, StudyDesign("Pilot", [i.pk for i in items]), None)


# --- GETs write nothing -----------------------------------------------------------------------------


def test_a_study_links_get_writes_nothing_and_its_post_enters(study):
    url, browser = f"/crowd/studies/{study.pk}/", Client()
    before = counts()
    page = browser.get(url, link("GETTER"))
    assert page.status_code == 200 and counts() == before
    html = page.content.decode()
    assert 'method="post"' in html and "PROLIFIC_PID=GETTER" in html and "_auth_user_id" not in browser.session
    entered = browser.post(url, link("GETTER"))
    assert entered.status_code == 302 and entered["Location"].startswith("/eval/sessions/")
    assert EvalSession.objects.count() == 1 and CrowdWorker.objects.get().worker_id == "GETTER"


def test_a_bad_link_is_refused_on_the_get_already(study):
    page = Client().get(f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": "P1", "STUDY_ID": "S"})
    assert page.status_code == 400 and "SESSION_ID" in page.content.decode()


def test_a_campaign_links_get_writes_nothing_and_its_post_leases():
    campaign = make_campaign()
    url, browser = f"/crowd/campaigns/{campaign.pk}/", Client()
    before = counts()
    assert browser.get(url, link("W1")).status_code == 200 and counts() == before
    leased = browser.post(url, link("W1"))
    assert leased.status_code == 302 and leased["Location"] == f"/annotate/{Assignment.objects.get().pk}/"


def test_the_next_scenes_get_writes_nothing_and_goes_to_the_open_lease():
    campaign = make_campaign()
    browser = Client()
    browser.post(f"/crowd/campaigns/{campaign.pk}/", link("W2"))
    lease = Assignment.objects.get()
    next_url = f"/crowd/campaigns/{campaign.pk}/next/"
    assert browser.get(next_url)["Location"] == f"/annotate/{lease.pk}/"  # the open lease: a read
    Assignment.objects.filter(pk=lease.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    before = counts()
    page = browser.get(next_url)
    assert page.status_code == 200 and 'method="post"' in page.content.decode() and counts() == before
    assert Assignment.objects.get(pk=lease.pk).status == Assignment.Status.LEASED  # not even expired by a GET
    assert browser.post(next_url).status_code == 302
    assert Assignment.objects.get(pk=lease.pk).status == Assignment.Status.EXPIRED
    assert Assignment.objects.filter(status=Assignment.Status.LEASED).count() == 1


def test_the_study_start_pages_get_writes_nothing_and_its_post_starts(study):
    admin = Client()
    admin.force_login(admin_user())
    url = f"/eval/studies/{study.pk}/start/"
    before = counts()
    page = admin.get(url)
    assert page.status_code == 200 and counts() == before
    started = admin.post(url)
    assert started.status_code == 302 and EvalSession.objects.count() == 1
    assert admin.get(url)["Location"] == started["Location"]  # the session exists: the GET goes to it


# --- invitations ------------------------------------------------------------------------------------


def test_an_uninvited_evaluator_sees_and_starts_no_study(study):
    browser = Client()
    browser.force_login(UserFactory(role=roles.EVALUATOR))
    assert "Pilot" not in browser.get("/").content.decode()
    for response in (browser.get(f"/eval/studies/{study.pk}/start/"), browser.post(f"/eval/studies/{study.pk}/start/"),
                     browser.post(f"/crowd/studies/{study.pk}/")):
        assert response.status_code == 403 and "not invited" in response.content.decode()
    assert not EvalSession.objects.exists()


@pytest.mark.parametrize("by", ["username", "email"])
def test_the_admin_invites_an_evaluator_on_the_study_page(study, by):
    evaluator = UserFactory(role=roles.EVALUATOR, email="Eva@Example.org")
    admin = Client()
    admin.force_login(admin_user())
    invitee = evaluator.username if by == "username" else "eva@example.org"
    sent = admin.post(f"/studies/{study.pk}/invitations/", {"invitee": invitee})
    assert sent.status_code == 302 and StudyInvitation.objects.count() == 1
    assert invitee in admin.get(f"/studies/{study.pk}/settings/").content.decode()
    browser = Client()
    browser.force_login(evaluator)
    home = browser.get("/").content.decode()
    assert "Pilot" in home and f"/eval/studies/{study.pk}/start/" in home
    assert browser.post(f"/eval/studies/{study.pk}/start/").status_code == 302
    assert EvalSession.objects.filter(participant=evaluator).count() == 1


@pytest.mark.parametrize(("invitee", "words"), [("", "Type a user name"), ("nobody-here", "No account"),
                                                ("not@an@address", "not an e-mail address")])
def test_a_bad_invitee_is_a_400_naming_the_field(study, invitee, words):
    admin = Client()
    admin.force_login(admin_user())
    response = admin.post(f"/studies/{study.pk}/invitations/", {"invitee": invitee})
    assert response.status_code == 400 and words in response.content.decode()
    assert not StudyInvitation.objects.exists()


def test_an_invitation_is_withdrawn(study):
    admin = Client()
    admin.force_login(admin_user())
    invitation = StudyInvitation.objects.create(study=study, email="x@example.org")
    assert admin.post(f"/studies/{study.pk}/invitations/", {"withdraw": invitation.pk}).status_code == 302
    assert not StudyInvitation.objects.exists()
    assert admin.post(f"/studies/{study.pk}/invitations/", {"withdraw": "abc"}).status_code == 400


def test_only_an_admin_invites(study):
    browser = Client()
    browser.force_login(UserFactory(role=roles.EVALUATOR))
    assert browser.post(f"/studies/{study.pk}/invitations/", {"invitee": "a@example.org"}).status_code in (302, 403)
    assert not StudyInvitation.objects.exists()


# --- a squatted PID ---------------------------------------------------------------------------------


def squat(study):
    """A stranger enters the participant's PID first; the participant's own link is refused."""
    squatter = Client()
    assert squatter.post(f"/crowd/studies/{study.pk}/", link("REAL-PID", "GUESSED")).status_code == 302
    participant = Client()
    refused = participant.post(f"/crowd/studies/{study.pk}/", link("REAL-PID", "TRUE-SESSION"))
    return participant, refused


def test_a_squatted_pid_gets_a_page_that_says_so_and_the_conflict_is_recorded(study, prolific_silent):
    _, refused = squat(study)
    page = refused.content.decode()
    conflict = SessionConflict.objects.get()
    assert refused.status_code == 403 and "already in use by another session" in page
    assert f"ID-{conflict.pk}" in page and "researchers" in page
    assert (conflict.worker_id, conflict.bound_session_id, conflict.refused_session_id) == (
        "REAL-PID", "GUESSED", "TRUE-SESSION")
    assert conflict.scope == f"study:{study.pk}" and conflict.resolution == ""
    Client().post(f"/crowd/studies/{study.pk}/", link("REAL-PID", "TRUE-SESSION"))
    assert SessionConflict.objects.get().attempts == 2  # counted again, one row
    Client().get(f"/crowd/studies/{study.pk}/", link("REAL-PID", "TRUE-SESSION"))
    assert SessionConflict.objects.get().attempts == 2  # a GET records nothing


def admin_action(action: str, conflict) -> None:
    admin = Client()
    admin.force_login(admin_user())
    response = admin.post("/admin/crowd/sessionconflict/", {"action": action, "_selected_action": [conflict.pk]})
    assert response.status_code == 302, response.content[:500]


def test_the_admin_reassigns_the_pid_to_the_refused_session(study, prolific_silent):
    participant, _ = squat(study)
    squatter_account = CrowdWorker.objects.get().user
    admin_action("reassign_to_refused", SessionConflict.objects.get())
    conflict = SessionConflict.objects.get()
    assert conflict.resolution == SessionConflict.Resolution.REASSIGNED and conflict.resolved_by is not None
    squatter_account.refresh_from_db()
    assert not squatter_account.is_active and squatter_account.crowd_worker.worker_id.startswith("detached-")
    entered = participant.post(f"/crowd/studies/{study.pk}/", link("REAL-PID", "TRUE-SESSION"))
    assert entered.status_code == 302, entered.content.decode()[-1500:]
    real = CrowdWorker.objects.get(worker_id="REAL-PID")
    assert real.user != squatter_account and real.session_id == "TRUE-SESSION"
    assert EvalSession.objects.filter(participant=real.user).count() == 1
    # The squatter's link signs nobody in any more.
    assert Client().post(f"/crowd/studies/{study.pk}/", link("REAL-PID", "GUESSED")).status_code == 403


def test_the_admin_releases_the_binding_for_the_same_person(study, prolific_silent):
    participant, _ = squat(study)
    account = CrowdWorker.objects.get().user
    admin_action("release_binding", SessionConflict.objects.get())
    assert SessionConflict.objects.get().resolution == SessionConflict.Resolution.RELEASED
    entered = participant.post(f"/crowd/studies/{study.pk}/", link("REAL-PID", "TRUE-SESSION"))
    assert entered.status_code == 302
    worker = CrowdWorker.objects.get()
    assert worker.user == account and worker.session_id == "TRUE-SESSION"
    assert EvalSession.objects.count() == 1  # the same person resumes their one session


def test_a_resolved_conflict_is_not_resolved_twice(study, prolific_silent):
    from core.errors import Conflict
    from crowd import squatting

    squat(study)
    conflict = SessionConflict.objects.get()
    squatting.release(conflict.pk)
    with pytest.raises(Conflict):
        squatting.reassign(conflict.pk)
