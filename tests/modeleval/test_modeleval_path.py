"""Steps 4-6: a baseline run (tasks in-process here), scoring, results page, release export."""

import json

import pytest

from benchmarks.models import Release
from config.celery import app as celery_app
from core import roles
from modeleval import services
from modeleval.models import Prediction, Run
from modeleval.runs import inference
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    client.force_login(UserFactory(role=roles.ADMIN))
    return client


@pytest.fixture
def items():
    first = ItemFactory()
    return [first] + [ItemFactory(change__scene__benchmark=first.benchmark, answers=[a]) for a in ("desk", "left")]


def test_inference_is_routed_to_the_gpu_queue_and_the_rest_to_default():
    router = celery_app.amqp.router
    assert router.route({}, "modeleval.tasks.infer_batch")["queue"].name == "gpu"
    assert router.route({}, "modeleval.tasks.score_run")["queue"].name == "default"


def test_baseline_run_predicts_every_item_once_and_is_scored(admin_client, items, django_capture_on_commit_callbacks):
    model = services.ensure_baseline_model()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post("/api/v1/runs/", {"model": model.pk, "benchmark": items[0].benchmark.slug,
                                                       "batch_size": 2}, content_type="application/json")
    assert response.status_code == 201, response.json()
    run = Run.objects.get()
    assert run.status == "finished"
    assert Prediction.objects.filter(run=run).count() == 3
    assert set(run.scores["overall"]) >= {"EM", "PM"}
    # Outputs come from the benchmark's answer vocabulary, reproducibly.
    vocabulary = {"window", "desk", "left", "chair", "bookshelf"}
    assert {p.output for p in run.predictions.all()} <= vocabulary


def test_repeating_a_batch_writes_no_second_prediction(items, django_capture_on_commit_callbacks):
    model = services.ensure_baseline_model()
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(model.pk, items[0].benchmark, None)
    assert run.predictions.count() == 3
    before = list(run.predictions.order_by("item_id").values_list("item_id", "output"))
    Run.objects.filter(pk=run.pk).update(status="running")
    inference.infer_items(run.pk, [i.pk for i in items])
    assert list(run.predictions.order_by("item_id").values_list("item_id", "output")) == before


def test_launching_without_a_model_or_items_is_a_400(admin_client, items):
    bad = admin_client.post("/api/v1/runs/", {"model": 999, "benchmark": items[0].benchmark.slug},
                            content_type="application/json")
    assert bad.status_code == 400 and "model" in bad.json()
    assert not Run.objects.exists()


def test_results_page_shows_human_and_model_rows(admin_client, items, django_capture_on_commit_callbacks):
    from humaneval.models import EvalSession
    from humaneval.services.design import StudyDesign, create_study
    from humaneval.services.sessions import answer_item, current_item, start_session

    study = create_study(items[0].benchmark, StudyDesign("Pilot", [i.pk for i in items]), None)
    evaluator = UserFactory(role=roles.EVALUATOR)
    session = start_session(study, evaluator)
    for _ in items:
        response = current_item(session.pk, evaluator).on_screen.response
        answer_item(session.pk, evaluator, response.item_id, response.item.answers[0])
    current_item(session.pk, evaluator)
    assert EvalSession.objects.get().status == "finished"
    with django_capture_on_commit_callbacks(execute=True):
        services.launch_run(services.ensure_baseline_model().pk, items[0].benchmark, None)
    page = admin_client.get(f"/results/{items[0].benchmark.slug}/").content.decode()
    assert "human-row" in page and "model-row" in page
    assert "100.0" in page


def test_release_export_writes_jsonl_and_manifest(admin_client, items, django_capture_on_commit_callbacks):
    slug = items[0].benchmark.slug
    with django_capture_on_commit_callbacks(execute=True):  # the export's job runs when the request commits
        response = admin_client.post("/api/v1/releases/", {"benchmark": slug, "version": "1.0.0"},
                                     content_type="application/json")
    assert response.status_code == 201, response.json()
    release = Release.objects.get()
    lines = [json.loads(line) for line in release.items_file.file.read().decode().splitlines()]
    assert [line["answers"] for line in lines] == [["window"], ["desk"], ["left"]]
    assert lines[0]["context_change"].startswith("The chair has been moved")
    manifest = json.loads(release.manifest_file.file.read())
    assert manifest["n_items"] == 3 and manifest["version"] == "1.0.0"


@pytest.mark.parametrize(("version", "status"), [("v1", 400), ("", 400), ("1.0.0", 409)])
def test_bad_or_duplicate_release_versions_are_refused(admin_client, items, version, status):
    slug = items[0].benchmark.slug
    if status == 409:
        admin_client.post("/api/v1/releases/", {"benchmark": slug, "version": version}, content_type="application/json")
    before = Release.objects.count()
    response = admin_client.post("/api/v1/releases/", {"benchmark": slug, "version": version},
                                 content_type="application/json")
    assert response.status_code == status and "version" in response.json()
    assert Release.objects.count() == before


def test_non_admins_cannot_launch_runs_or_export(client, items):
    client.force_login(UserFactory(role=roles.REVIEWER))
    assert client.post("/api/v1/runs/", {}, content_type="application/json").status_code == 403
