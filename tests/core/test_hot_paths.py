"""The requests a crowd sends every few seconds stay lean (bench/load_annotators.py and
bench/load_evaluators.py drive them): autosave is one statement (the ownership-checked UPDATE and
the lease renewal) in a plain view, leasing locks only the unit it takes, the assignment page reads
its scene from the cache, and an evaluator's answer reads each row once and shows the next item
under the same lock."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation import services
from annotation.models import Assignment, AssignmentDraft, Campaign
from benchmarks.models import Scene
from core.errors import DomainError
from crowd.models import PlatformSubmission
from humaneval.models import EvalSession, Response
from humaneval.services.design import StudyDesign, create_study, is_contaminated
from humaneval.services.sessions import start_session
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory
from tests.together import fire

pytestmark = pytest.mark.django_db

needs_postgres = pytest.mark.postgresql(reason="row locks need PostgreSQL")


def make_campaign(scenes=1, **options):
    benchmark = BenchmarkFactory()
    pool = [SceneFactory(benchmark=benchmark) for _ in range(scenes)]
    return services.create_campaign(benchmark, "Moves", "movement", pool, **options)


@needs_postgres
def test_autosave_is_one_statement_and_renews_the_lease(django_assert_max_num_queries):
    campaign = make_campaign(lease_minutes=30)
    worker = UserFactory()
    assignment = services.lease_assignment(campaign, worker)
    services.save_draft(assignment.pk, worker, "The chair", content={"step": 1})  # creates the draft
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=timezone.now() + timedelta(minutes=1))
    with django_assert_max_num_queries(1):
        draft = services.save_draft(assignment.pk, worker, "The chair has been", revision=1, content={"step": 2})
    assert (draft.text, draft.revision, draft.content, draft.descriptions) == ("The chair has been", 2, {"step": 2}, [])
    stored = AssignmentDraft.objects.get(assignment=assignment)
    assert (stored.text, stored.revision, stored.content) == ("The chair has been", 2, {"step": 2})
    assignment.refresh_from_db()
    assert assignment.lease_expires_at > timezone.now() + timedelta(minutes=29)


def test_autosave_after_the_lease_lapsed_keeps_the_text_without_renewing():
    campaign = make_campaign()
    worker = UserFactory()
    assignment = services.lease_assignment(campaign, worker)
    services.save_draft(assignment.pk, worker, "first")
    lapsed = timezone.now() - timedelta(seconds=1)
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.EXPIRED, lease_expires_at=lapsed)
    assert services.save_draft(assignment.pk, worker, "second").text == "second"
    assignment.refresh_from_db()
    assert assignment.lease_expires_at == lapsed and AssignmentDraft.objects.get().text == "second"


@needs_postgres
def test_autosave_through_the_api_is_one_statement_from_the_first_save(client, django_assert_max_num_queries):
    campaign = make_campaign()
    client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": "FAST", "STUDY_ID": "S", "SESSION_ID": "X"})
    pk = Assignment.objects.get().pk
    client.get(f"/annotate/{pk}/")  # the page: the user is cached from here on
    with django_assert_max_num_queries(1):  # the draft UPDATE with the lease renewal, from the first save
        response = client.put(f"/api/v1/assignments/{pk}/draft/", {"text": "first"},
                              content_type="application/json")
    assert response.status_code == 200 and response.json()["revision"] == 1


def _enter(client, campaign, pid):
    link, ids = f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "S", "SESSION_ID": "X"}
    client.get(link, ids)  # the start page sets the CSRF cookie its form posts back
    client.post(link, {**ids, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})
    return Assignment.objects.get(worker__username=f"prolific-{pid}")


def test_the_plain_autosave_view_answers_as_the_api_does(client):
    campaign = make_campaign(scenes=2)
    pk = _enter(client, campaign, "OWNER").pk
    url = f"/api/v1/assignments/{pk}/draft/"
    saved = client.put(url, {"text": "The chair", "revision": 0}, content_type="application/json")
    assert saved.status_code == 200 and saved.json() == {"descriptions": [], "text": "The chair", "content": {},
                                                          "revision": 1}
    stale = client.put(url, {"text": "older", "revision": 0}, content_type="application/json")
    assert stale.status_code == 409 and stale.json()["revision"] and stale.json()["current"]["text"] == "The chair"
    bad = client.put(url, {"text": 5}, content_type="application/json")
    assert bad.status_code == 400 and "text" in bad.json()
    assert client.put(f"/api/v1/assignments/{pk + 1000}/draft/", {"text": "x"},
                      content_type="application/json").status_code == 404
    assert client.post(url, {"text": "x"}, content_type="application/json").status_code == 405
    intruder = Client()
    _enter(intruder, campaign, "INTRUDER")
    refused = intruder.put(url, {"text": "mine now"}, content_type="application/json")
    assert refused.status_code == 403 and "assignment" in refused.json()
    assert Client().put(url, {"text": "x"}, content_type="application/json").status_code == 403
    assert AssignmentDraft.objects.get(assignment_id=pk).text == "The chair"


def test_the_plain_autosave_view_checks_csrf_and_still_takes_tokens():
    campaign = make_campaign()
    browser = Client(enforce_csrf_checks=True)
    assignment = _enter(browser, campaign, "CSRF")
    url = f"/api/v1/assignments/{assignment.pk}/draft/"
    refused = browser.put(url, {"text": "forged"}, content_type="application/json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    token = Token.objects.create(user=assignment.worker)
    saved = Client().put(url, {"text": "from a script"}, content_type="application/json",
                         HTTP_AUTHORIZATION=f"Token {token.key}")
    assert saved.status_code == 200 and AssignmentDraft.objects.get().text == "from a script"


def test_the_assignment_page_reads_its_scene_from_the_cache(client, django_assert_max_num_queries):
    campaign = make_campaign()
    page = f"/annotate/{_enter(client, campaign, 'PAGE').pk}/"
    assert client.get(page).status_code == 200  # fills the scene's cache
    with django_assert_max_num_queries(2):  # the assignment with its draft, first-time (the user is cached)
        assert client.get(page).status_code == 200


def _in_thread(hold_lock, locked, release):
    """Hold a row lock in another connection until `release` is set."""
    def run():
        try:
            with transaction.atomic():
                hold_lock()
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    assert locked.wait(10)
    return thread


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_leasing_neither_waits_on_the_campaign_row_nor_on_a_unit_another_leaser_holds():
    campaign = make_campaign(scenes=2)
    first, second = campaign.scenes.order_by("id")

    def hold():  # an admin saving the campaign, and another leaser on the first scene
        Campaign.objects.select_for_update(no_key=True).get(pk=campaign.pk)
        Scene.objects.select_for_update(no_key=True).get(pk=first.pk)

    locked, release = threading.Event(), threading.Event()
    thread = _in_thread(hold, locked, release)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")
        assignment = services.lease_assignment(campaign, UserFactory())
    finally:
        release.set()
        thread.join()
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = 0")
    assert assignment.scene_id == second.pk


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_two_leasers_at_once_never_overfill_a_scene_quota():
    campaign = make_campaign(scenes=1, assignments_per_scene=1)

    def lease(_):
        try:
            return services.lease_assignment(campaign, UserFactory()).scene_id
        except DomainError as exc:
            return exc.field

    outcomes = fire(lease, 2)
    assert sorted(outcomes, key=str) == sorted([campaign.scenes.get().pk, "campaign"], key=str)
    assert Assignment.objects.count() == 1


@pytest.fixture
def session(client):
    first = ItemFactory(answers=["armchair"])
    second = ItemFactory(change__scene=first.scene, answers=["desk"])
    third = ItemFactory(change__scene=first.scene, answers=["lamp"])
    study = create_study(
        first.benchmark, StudyDesign("Pilot", [first.pk, second.pk, third.pk], 30, 600), UserFactory())
    client.post(f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": "EV", "STUDY_ID": "S", "SESSION_ID": "X"})
    return EvalSession.objects.get()


# The signed-in user and their roles come from the cache. A reload: the transaction, the session
# locked with its plan's length read in the same query, the open response with its plan entry, and the
# plan entry after it (its stimulus files are named for the page to preload, #28; the scene's stimulus
# itself comes from the cache).
QUERIES_OF_A_RELOAD = 5
# An answer: the transaction, the locked session, the response, the answered and the next plan entry
# in one read, the update and the next response's insert; then the entry after the next one, whose
# files are named for preloading (#28).
QUERIES_OF_AN_ANSWER = 8
# A crowd link's entry to a study, every statement from the first savepoint to the stored session
# (the savepoints among them): 31 while the platform session was read before it was written.
QUERIES_OF_A_CROWD_ENTRY = 29


def test_an_answer_stores_and_serves_the_next_item_in_few_queries(client, session, django_assert_max_num_queries):
    state = client.get(f"/api/v1/sessions/{session.pk}/current/").json()  # warms the scene's cache
    with django_assert_max_num_queries(QUERIES_OF_A_RELOAD):
        assert client.get(f"/api/v1/sessions/{session.pk}/current/").json()["n_items"] == 3
    with django_assert_max_num_queries(QUERIES_OF_AN_ANSWER):
        response = client.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": state["item"]["id"], "answer": "x"},
                               content_type="application/json")
    nxt = response.json()["item"]
    assert response.status_code == 201 and nxt["id"] != state["item"]["id"] and response.json()["n_items"] == 3
    assert nxt["scene"] == state["item"]["scene"] and "answers" not in nxt
    assert Response.objects.get(session=session, item_id=state["item"]["id"]).answer_text == "x"


def test_the_plain_session_views_answer_as_the_api_does(client, session):
    url = f"/api/v1/sessions/{session.pk}/"
    item = client.get(url + "current/").json()["item"]["id"]
    bad = client.post(url + "answer/", {"item": "x", "answer": "y"}, content_type="application/json")
    assert bad.status_code == 400 and "item" in bad.json()
    unparsable = client.post(url + "answer/", "{", content_type="application/json")
    assert unparsable.status_code == 400 and "JSON parse error" in str(unparsable.json())
    assert client.post(url + "answer/", {"item": item + 1000, "answer": "y"},
                       content_type="application/json").status_code == 400
    assert client.post(url + "answer/", {"item": item, "answer": "y"}, content_type="application/json").status_code == 201
    again = client.post(url + "answer/", {"item": item, "answer": "z"}, content_type="application/json")
    assert again.status_code == 409 and "item" in again.json()
    assert client.put(url + "answer/", {}, content_type="application/json").status_code == 405
    assert client.post(url + "current/").status_code == 405
    assert client.get(f"/api/v1/sessions/{session.pk + 1000}/current/").status_code == 404
    # ids past what the database stores are nobody's, not a server error
    assert client.get(f"/api/v1/sessions/{10**20}/current/").status_code == 404
    assert client.post(url + "answer/", {"item": 10**20, "answer": "y"}, content_type="application/json").status_code == 400
    intruder = Client()
    intruder.post(f"/crowd/studies/{session.study_id}/", {"PROLIFIC_PID": "OTHER", "STUDY_ID": "S", "SESSION_ID": "X"})
    refused = intruder.get(url + "current/")
    assert refused.status_code == 403 and "session" in refused.json()
    assert intruder.post(url + "answer/", {"item": item, "answer": "w"},
                         content_type="application/json").status_code == 403
    assert Client().get(url + "current/").status_code == 403
    assert Response.objects.get(session=session, item_id=item).answer_text == "y"


def test_the_plain_answer_view_checks_csrf_and_still_takes_tokens(session):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(session.participant)
    url = f"/api/v1/sessions/{session.pk}/"
    item = browser.get(url + "current/").json()["item"]["id"]
    refused = browser.post(url + "answer/", {"item": item, "answer": "forged"}, content_type="application/json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    token = Token.objects.create(user=session.participant)
    script = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert script.get(url + "current/").json()["item"]["id"] == item
    stored = script.post(url + "answer/", {"item": item, "answer": "from a script"}, content_type="application/json")
    assert stored.status_code == 201 and stored.json()["item"]["id"] != item
    assert Response.objects.get(session=session, item_id=item).answer_text == "from a script"


def test_a_crowd_entry_to_a_study_writes_its_platform_session_without_reading_it_first(client):
    """The POST of a study's crowd link (bench/load_evaluators.py sends 300 in 20 s): the platform
    session it entered is one INSERT .. ON CONFLICT (and the scope of a row that had none), not a read,
    a savepoint and an insert; the whole entry stays within its count of statements."""
    item = ItemFactory(answers=["A"])
    study = create_study(item.benchmark, StudyDesign("Crowd", [item.pk], 30, 600), UserFactory())
    link, ids = f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": "NEW", "STUDY_ID": "S", "SESSION_ID": "X"}
    # Someone came before (the evaluators' role group, made on first use, exists)
    Client().post(link, {"PROLIFIC_PID": "FIRST", "STUDY_ID": "S", "SESSION_ID": "Y"})
    with CaptureQueriesContext(connection) as captured:
        assert client.post(link, ids).status_code == 302
    statements = [query["sql"] for query in captured]
    # The entry's transaction and the session store's (savepoints inside the test's own transaction),
    # the crowd entry's, the account's (its name may be taken) and the session start's.
    assert sum(sql.startswith("SAVEPOINT") for sql in statements) == 5
    assert not any(sql.startswith('SELECT "crowd_platformsubmission"') for sql in statements)
    assert len(statements) <= QUERIES_OF_A_CROWD_ENTRY
    submission = PlatformSubmission.objects.get(participant_id="NEW")
    assert (submission.participant_id, submission.scope) == ("NEW", f"study:{study.pk}")
    # The same link again (another tab) finds the account, its platform session and its session.
    assert client.post(link, ids).status_code == 302
    assert PlatformSubmission.objects.filter(participant_id="NEW").count() == 1
    assert EvalSession.objects.filter(participant__username="prolific-NEW").count() == 1


def test_entering_a_study_costs_the_same_whatever_the_number_of_participants(django_assert_num_queries):
    first = ItemFactory(answers=["A"])
    items = [first] + [ItemFactory(change__scene__benchmark=first.benchmark, answers=["A"]) for _ in range(5)]
    study = create_study(
        first.benchmark, StudyDesign("Crowd", [i.pk for i in items], 30, 600, participants_per_item=50,
                                     items_per_session=2), UserFactory())
    queries = []
    for _ in range(6):
        participant = UserFactory()
        with CaptureQueriesContext(connection) as captured:
            start_session(study, participant)
        queries.append(len(captured))
    # the transaction, the blocklist (one EXISTS query: it holds for studies too, #34), contamination (one
    # EXISTS query), the study locked, an existing session, the study's entries, the places taken (counted
    # by the database), the plan's items, the session and its plan: none grows with the participants
    assert queries == [11] * 6
    # an account the crowd link just made has no earlier session and wrote nothing: two fewer (its
    # platform id may still be blocked: the blocklist query stays)
    newcomer = UserFactory()
    with django_assert_num_queries(9):
        start_session(study, newcomer, new_account=True)
    outsider = UserFactory()
    with django_assert_num_queries(1):
        assert not is_contaminated(study, outsider)
