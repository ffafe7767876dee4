"""#44, without PROLIFIC_API_TOKEN: nothing can tell a made-up Prolific id from a real one, so

- an id holds one place at most: one account, bound to one SESSION_ID, one session of the study;
- the same PROLIFIC_PID arriving with another SESSION_ID (another browser) while its holder is unchecked
  gets in: the id's newest session is the one that counts, the earlier session is ended (its places go
  back), flagged "not checked against Prolific" and left out of the human row, its account detached.
  This happens once per id: a third session is refused (403, the admin's conflict list), so two people
  on one id cannot evict each other in turn. Who came first says nothing of who is real; a genuine
  participant squatted before they arrive therefore gets in with no admin. (A squatter arriving after
  them evicts them once, and their next link goes to the admin: with the API set, Prolific decides.)
- every unchecked entry is counted on the study page as "not checked against Prolific".
The rule is in docs/DECISIONS.md ("#44: made-up ids without Prolific's API")."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from crowd.models import CrowdWorker, PlatformSubmission, SessionConflict
from humaneval import sql
from humaneval.models import EvalSession, SessionItem
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.results import study_results
from tests.core.test_hardening_writes import admin_user, approved_items, link
from tests.crowd.test_entry_rules import finish

pytestmark = pytest.mark.django_db

TABLES = (get_user_model(), CrowdWorker, PlatformSubmission, EvalSession, SessionItem)


def counts() -> dict:
    return {model.__name__: model.objects.count() for model in TABLES}


@pytest.fixture
def study(settings):
    settings.PROLIFIC_API_TOKEN = ""
    items = approved_items(2)
    return create_study(items[0].benchmark, StudyDesign("Pilot", [i.pk for i in items], participants_per_item=3),
                        None)


def enter(study, pid, session, browser=None):
    browser = browser or Client()
    return browser, browser.post(f"/crowd/studies/{study.pk}/", link(pid, session))


def places(study) -> int:
    return sum(sql.places_taken(study.pk).values())


def test_a_made_up_id_takes_one_place_at_most(study):
    browser, first = enter(study, "MADEUP", "S1")
    assert first.status_code == 302
    one_session = places(study)
    assert one_session == 2  # one place on each of the study's two items

    _, again = enter(study, "MADEUP", "S1", browser)  # the same link again: the same session
    _, second = enter(study, "MADEUP", "S2")  # another browser, another session: takes the id over
    assert again.status_code == second.status_code == 302
    assert places(study) == one_session  # the earlier session gave its places back
    before = counts()
    for n in range(3, 6):
        _, refused = enter(study, "MADEUP", f"S{n}")
        assert refused.status_code == 403 and "already in use by another session" in refused.content.decode()
    assert counts() == before and places(study) == one_session
    assert EvalSession.objects.filter(flagged="").count() == 1


def test_a_squatted_participant_gets_in_and_the_squatters_session_is_ended(study):
    squatter, entered = enter(study, "REALPID", "MADE-UP")
    assert entered.status_code == 302
    squatted = EvalSession.objects.get()
    finish(squatter, squatted)  # finished before the participant arrives: it would count in the human row
    assert study_results(study)["n_participants"] == 1

    genuine, entered = enter(study, "REALPID", "TRUE-SESSION")

    assert entered.status_code == 302, entered.content[-800:]
    real = CrowdWorker.objects.get(worker_id="REALPID")
    assert real.session_id == "TRUE-SESSION" and real.user.is_active
    squatted.refresh_from_db()
    assert squatted.participant != real.user and not squatted.participant.is_active
    assert squatted.flagged.startswith("not checked against Prolific")
    assert SessionConflict.objects.get().resolution == SessionConflict.Resolution.REASSIGNED  # by the entry
    finish(genuine, EvalSession.objects.get(participant=real.user))
    result = study_results(study)
    assert result["n_participants"] == 1 and [e["session"] for e in result["exclusions"]] == [squatted.pk]

    before = counts()
    _, back = enter(study, "REALPID", "MADE-UP", squatter)  # the squatter's link signs nobody in any more
    assert back.status_code == 403 and counts() == before
    assert CrowdWorker.objects.get(worker_id="REALPID").session_id == "TRUE-SESSION"

    admin = Client()
    admin.force_login(admin_user())
    page = admin.get(f"/studies/{study.pk}/settings/").content.decode()
    assert "2 Prolific entries not checked against Prolific (no API token" in page
    assert "1 session flagged" in page and "entered again with another session" in page


def test_another_platforms_id_takes_no_prolific_id_over(study):
    assert enter(study, "SHARED", "S1")[1].status_code == 302
    before = counts()
    response = Client().post(f"/crowd/studies/{study.pk}/", {"workerId": "SHARED", "assignmentId": "A2"})
    assert response.status_code == 403 and counts() == before
    assert not EvalSession.objects.exclude(flagged="").exists()
