"""The pipeline API is the admins': compose stages (params checked per kind, 400 naming the param), edit
them with a version (409 when stale), run one or all (201 with the jobs); every other role gets 403."""

import pytest

from benchmarks.models import Item
from construction.models import PipelineStage
from core import roles
from core.models import Job
from tests.construction.test_generators import _scene
from tests.factories import BenchmarkFactory, UserFactory

pytestmark = pytest.mark.django_db

JSON = "application/json"


@pytest.fixture
def benchmark():
    return BenchmarkFactory(slug="api-457", family="spatial457")


@pytest.fixture
def admin_client(client):
    client.force_login(UserFactory(role=roles.ADMIN))
    return client


def add(client, benchmark, **body):
    return client.post(f"/api/v1/benchmarks/{benchmark.slug}/stages/", body, content_type=JSON)


@pytest.mark.parametrize("role", [roles.REVIEWER, roles.ANNOTATOR, roles.EVALUATOR])
def test_only_admins_see_compose_and_run_a_pipeline(client, benchmark, role):
    stage = PipelineStage.objects.create(benchmark=benchmark, position=1, kind="release", params={"version": "1.0.0"})
    client.force_login(UserFactory(role=role))
    base = f"/api/v1/benchmarks/{benchmark.slug}"
    answers = [
        client.get(f"{base}/stages/"),
        client.post(f"{base}/stages/", {"kind": "release", "params": {"version": "1.0.1"}}, content_type=JSON),
        client.get(f"/api/v1/stages/{stage.pk}/"),
        client.patch(f"/api/v1/stages/{stage.pk}/", {"version": 1, "name": "mine"}, content_type=JSON),
        client.delete(f"/api/v1/stages/{stage.pk}/"),
        client.post(f"/api/v1/stages/{stage.pk}/run/", {}, content_type=JSON),
        client.post(f"{base}/pipeline/run/", {}, content_type=JSON),
    ]
    assert [answer.status_code for answer in answers] == [403] * len(answers)
    assert PipelineStage.objects.get().name == "" and not Job.objects.exists()


def test_an_admin_composes_edits_and_runs_stages(admin_client, benchmark, django_capture_on_commit_callbacks):
    made = add(admin_client, benchmark, kind="generate", name="questions",
               params={"level": "L1_single", "scenes": _scene()})
    assert made.status_code == 201, made.json()
    stage = made.json()
    assert (stage["position"], stage["version"], stage["last_job"]) == (1, 1, None)
    release = add(admin_client, benchmark, kind="release", params={"version": "1.0.0"}, position=1).json()
    listed = admin_client.get(f"/api/v1/benchmarks/{benchmark.slug}/stages/").json()
    assert [(s["id"], s["position"]) for s in listed] == [(release["id"], 1), (stage["id"], 2)]

    moved = admin_client.patch(f"/api/v1/stages/{stage['id']}/", {"version": 1, "position": 1}, content_type=JSON)
    assert moved.status_code == 200 and moved.json()["position"] == 1 and moved.json()["version"] == 2
    stale = admin_client.patch(f"/api/v1/stages/{stage['id']}/", {"version": 1, "name": "x"}, content_type=JSON)
    assert stale.status_code == 409 and stale.json()["current"]["version"] == 2

    with django_capture_on_commit_callbacks(execute=True):  # the task runs once the request has answered
        ran = admin_client.post(f"/api/v1/stages/{stage['id']}/run/", {}, content_type=JSON)
    assert ran.status_code == 201 and ran.json()["status"] == "queued" and ran.json()["kind"] == "stage"
    job = admin_client.get(f"/api/v1/stages/{stage['id']}/").json()["last_job"]
    assert job["id"] == ran.json()["id"] and job["status"] == "done"
    assert job["report"]["created"] == Item.objects.filter(benchmark=benchmark).count() > 0
    Item.objects.filter(benchmark=benchmark).update(status=Item.Status.APPROVED)  # generated drafts, reviewed

    with django_capture_on_commit_callbacks(execute=True):
        whole = admin_client.post(f"/api/v1/benchmarks/{benchmark.slug}/pipeline/run/", {}, content_type=JSON)
    assert whole.status_code == 201
    jobs = [admin_client.get(f"/api/v1/jobs/{job['id']}/").json() for job in whole.json()["jobs"]]
    assert [job["status"] for job in jobs] == ["done", "done"] and jobs[0]["id"] == ran.json()["id"]
    assert jobs[1]["report"]["version"] == "1.0.0"

    assert admin_client.delete(f"/api/v1/stages/{release['id']}/").status_code == 204
    assert admin_client.get(f"/api/v1/stages/{release['id']}/").status_code == 404


@pytest.mark.parametrize("body, errors", [
    ({"kind": "generate", "params": {"level": "L9"}}, {"params": {"level": ["One of L1_single, L2_objects, "
                                                                            "L3_2d_spatial, L4_occ, L4_pose, "
                                                                            "L5_6d_spatial, L5_collision."]}}),
    ({"kind": "generate", "params": {"per_template": "many"}}, {"params": {"per_template": ["Must be a whole number."]}}),
    ({"kind": "release", "params": {}}, {"params": {"version": ["A version like 1.0.0 (three numbers)."]}}),
    ({"kind": "release", "params": [1]}, {"params": ["A JSON object."]}),
    ({"kind": "shuffle"}, {"kind": ['"shuffle" is not a valid choice.']}),
])
def test_params_are_checked_per_kind(admin_client, benchmark, body, errors):
    answer = add(admin_client, benchmark, **body)
    assert (answer.status_code, answer.json()) == (400, errors)
    assert not PipelineStage.objects.exists()


def test_running_an_empty_pipeline_or_an_unknown_stage(admin_client, benchmark):
    answer = admin_client.post(f"/api/v1/benchmarks/{benchmark.slug}/pipeline/run/", {}, content_type=JSON)
    assert answer.status_code == 400 and "benchmark" in answer.json()
    assert admin_client.post("/api/v1/stages/999999/run/", {}, content_type=JSON).status_code == 404
    assert admin_client.get("/api/v1/benchmarks/nope/stages/").status_code == 404
