"""Status history (core/history.py): every stateful model's table records the status each row is
created with and every change of it, whatever path made the change (move_to, a bulk update, the hot
paths' hand-written SQL), with the signed-in user behind it; reviewers and admins read it."""

import sqlite3
from types import SimpleNamespace

import pytest
from django.contrib.admin.sites import site
from django.db import connection
from django.test import Client

from annotation.models import Assignment
from annotation.services import create_campaign
from benchmarks.models import ContextChange
from core import sql
from core.history import _NameActor, changes_of, tracked_models
from core.models import Job, StatusChange
from humaneval.models import EvalSession
from humaneval.services.design import StudyDesign, create_study
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

MOVE = "The chair has been moved from the desk to the window next to the bookshelf."


def history(obj) -> list[tuple]:
    return [(c.from_status, c.to_status, c.actor_id) for c in changes_of(type(obj), obj.pk)]


def test_every_stateful_model_keeps_a_history():
    """A new StatusTransitions model fails here until a TrackStatusHistory migration tracks it."""
    models = tracked_models()
    names = {model._meta.label_lower for model in models}
    assert {"annotation.assignment", "humaneval.evalsession", "modeleval.run", "core.job",
            "benchmarks.contextchange", "benchmarks.item", "benchmarks.release", "benchmarks.upload"} <= names
    assert len({model._meta.model_name for model in models}) == len(models)  # the API names them so
    tables = [model._meta.db_table for model in models]
    present = sql.status_triggers_present(tables)
    missing = [table for table in tables if not set(sql.status_trigger_names(table)) <= present]
    assert not missing, f"No status history triggers on {missing}: add TrackStatusHistory to a migration."
    # a row whose status is its job's keeps none of its own (UntrackStatusHistory dropped its triggers)
    assert "review.deduprun" not in names and not sql.status_triggers_present(["review_deduprun"])


def test_creation_move_to_and_bulk_updates_each_leave_a_row():
    job = Job.objects.create(kind="export", key="k")
    job.move_to(Job.Status.RUNNING)
    job.save()
    job.save()  # saving the same status again records nothing
    Job.objects.filter(pk=job.pk).update(status=Job.Status.FAILED)
    Job.objects.filter(pk=job.pk).update(message="why")  # no status change, no row
    assert history(job) == [(None, "queued", None), ("queued", "running", None), ("running", "failed", None)]
    bulk = Job.objects.bulk_create([Job(kind="export", key=f"b{n}") for n in range(3)])
    assert Job.objects.filter(pk__in=[j.pk for j in bulk]).update(status=Job.Status.RUNNING) == 3
    assert [history(j) for j in bulk] == [[(None, "queued", None), ("queued", "running", None)]] * 3


def test_move_all_moves_the_rows_whose_status_may_go_there_and_leaves_the_others():
    queued, done = Job.objects.bulk_create([Job(kind="export", key="m1"), Job(kind="export", key="m2")])
    Job.objects.filter(pk=done.pk).update(status=Job.Status.DONE)  # done goes nowhere
    assert Job.move_all(Job.objects.filter(pk__in=[queued.pk, done.pk]), Job.Status.RUNNING) == 1
    assert Job.objects.get(pk=queued.pk).status == Job.Status.RUNNING
    assert Job.objects.get(pk=done.pk).status == Job.Status.DONE
    assert history(queued)[-1] == ("queued", "running", None)


def test_history_is_append_only():
    job = Job.objects.create(kind="export", key="k")
    change = StatusChange.objects.get(row_id=job.pk)
    for refused in (lambda: change.save(), lambda: change.delete(),
                    lambda: StatusChange.objects.update(to_status="x"), lambda: StatusChange.objects.all().delete()):
        with pytest.raises(TypeError, match="append-only"):
            refused()
    row_id = job.pk
    job.delete()
    assert StatusChange.objects.filter(model="core.job", row_id=row_id).count() == 1  # outlives its row


@pytest.mark.postgresql(reason="PostgreSQL's trigger functions")
def test_a_bulk_create_reads_the_actor_once_from_the_statements_tail():
    """A bulk create's INSERT is as long as its rows: the actor is read once per statement, from the end of
    its text (read once per row over the whole text, a 3,000-row insert took 6 s in the trigger)."""
    user = UserFactory()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL track_functions = 'all'")
        with connection.execute_wrapper(_NameActor(SimpleNamespace(user=user))):
            jobs = Job.objects.bulk_create([Job(kind="export", key=f"{n}-" + "k" * 150) for n in range(50)])
        cursor.execute("SELECT pg_stat_get_xact_function_calls('core_status_actor'::regproc)")
        assert cursor.fetchone()[0] == 1
    assert [history(job) for job in jobs] == [[(None, "queued", user.pk)]] * 50


@pytest.fixture
def actor_named(settings):
    """STATUS_HISTORY_ACTOR=1: the middleware that names the request's user (off by default)."""
    at = settings.MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1
    settings.MIDDLEWARE = [*settings.MIDDLEWARE[:at], "core.history.ActorMiddleware", *settings.MIDDLEWARE[at:]]


def test_by_default_the_history_names_no_actor():
    reviewer = Client()
    reviewer.force_login(UserFactory(role="reviewer"))
    change = ChangeFactory()
    response = reviewer.post(f"/api/v1/changes/{change.pk}/reject/", {"version": 1, "criteria": ["plausible"]},
                             content_type="application/json")
    assert response.status_code == 200, response.content
    assert len(history(change)) == 2 and {actor for *_, actor in history(change)} == {None}


def test_a_crowd_submit_records_the_assignment_and_the_changes_it_created_with_the_worker(actor_named):
    benchmark = BenchmarkFactory()
    campaign = create_campaign(benchmark, "Moves", "movement", [SceneFactory(benchmark=benchmark)])
    client = Client()
    client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": "P1", "STUDY_ID": "S", "SESSION_ID": "X"})
    assignment = Assignment.objects.get()
    worker = assignment.worker_id
    response = client.post(f"/api/v1/assignments/{assignment.pk}/submit/", {"text": MOVE},
                           content_type="application/json")
    assert response.status_code == 201, response.content
    assert history(assignment) == [(None, "leased", worker), ("leased", "submitted", worker)]
    change = ContextChange.objects.get()
    assert history(change) == [(None, "submitted", worker)]


def test_an_evaluator_answer_that_ends_the_session_is_recorded_with_the_evaluator(actor_named):
    item = ItemFactory(answers=["armchair"])
    study = create_study(item.benchmark, StudyDesign("Pilot", [item.pk], 30, 600), UserFactory())
    client = Client()
    client.post(f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": "EV", "STUDY_ID": "S", "SESSION_ID": "X"})
    session = EvalSession.objects.get()
    url = f"/api/v1/sessions/{session.pk}/"
    shown = client.get(url + "current/").json()["item"]["id"]
    assert client.post(url + "answer/", {"item": shown, "answer": "x"},
                       content_type="application/json").status_code == 201
    evaluator = session.participant_id
    # The session is created on arrival, before the participant is signed in: no one to name yet.
    assert history(session) == [(None, "active", None), ("active", "finished", evaluator)]


def test_reviewers_and_admins_read_a_rows_history_and_crowd_participants_do_not():
    job = Job.objects.create(kind="export", key="k")
    job.move_to(Job.Status.RUNNING)
    job.save()
    reviewer = Client()
    reviewer.force_login(UserFactory(role="reviewer"))
    answer = reviewer.get(f"/api/v1/history/job/{job.pk}/")
    assert answer.status_code == 200
    assert [(c["from_status"], c["to_status"], c["actor"]) for c in answer.json()] == [
        (None, "queued", None), ("queued", "running", None)]
    assert reviewer.get("/api/v1/history/benchmark/1/").status_code == 404  # not a stateful model
    assert reviewer.get(f"/api/v1/history/job/{job.pk + 1000}/").status_code == 404
    assert reviewer.get(f"/api/v1/history/job/{10**20}/").status_code == 404  # past what a row id can be
    for role in ("annotator", "evaluator"):
        crowd = Client()
        crowd.force_login(UserFactory(role=role))
        assert crowd.get(f"/api/v1/history/job/{job.pk}/").status_code == 403
    assert Client().get(f"/api/v1/history/job/{job.pk}/").status_code in (401, 403)


def test_a_reviewers_request_names_the_reviewer(actor_named):
    reviewer = UserFactory(role="reviewer")
    client = Client()
    client.force_login(reviewer)
    change = ChangeFactory()
    response = client.post(f"/api/v1/changes/{change.pk}/reject/", {"version": 1, "criteria": ["plausible"]},
                           content_type="application/json")
    assert response.status_code == 200, response.content
    assert history(change)[-1] == ("submitted", "rejected", reviewer.pk)


def test_the_admin_lists_the_history_read_only(admin_client):
    job = Job.objects.create(kind="export", key="k")
    page = admin_client.get("/admin/core/statuschange/")
    assert page.status_code == 200 and f">{job.pk}<" in page.content.decode()
    model_admin = site._registry[StatusChange]
    assert not model_admin.has_add_permission(None) and not model_admin.has_delete_permission(None)


def test_the_sqlite_triggers_record_the_same():
    """The embedded default (./scripts/demo) runs on SQLite: its triggers, on a scratch database."""
    db = sqlite3.connect(":memory:")
    actor = {"id": None}
    db.create_function("hypolab_actor", 0, lambda: actor["id"])
    db.execute("CREATE TABLE core_statuschange (id INTEGER PRIMARY KEY, model TEXT, row_id INTEGER, "
               "from_status TEXT, to_status TEXT, at TEXT, actor_id INTEGER)")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, status TEXT, note TEXT)")
    for statement in sql.create_status_triggers("sqlite", "t", "app.t", connection.ops.quote_name) * 2:  # idempotent
        db.execute(statement)
    db.execute("INSERT INTO t (status) VALUES ('queued'), ('queued')")
    db.execute("UPDATE t SET note = 'x'")
    actor["id"] = 7
    db.execute("UPDATE t SET status = 'running' WHERE id = 1")
    rows = db.execute("SELECT model, row_id, from_status, to_status, actor_id FROM core_statuschange ORDER BY id")
    assert rows.fetchall() == [("app.t", 1, None, "queued", None), ("app.t", 2, None, "queued", None),
                               ("app.t", 1, "queued", "running", 7)]
    for statement in sql.drop_status_triggers("sqlite", "t", connection.ops.quote_name):
        db.execute(statement)
    assert not db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
