"""The schema is the API: drf-spectacular's schema validates with no warning, and schemathesis, called on
every operation as an admin, an annotator and an evaluator, finds no server error, no answer outside its
documented shape and no undocumented status (`not_a_server_error`, `response_schema_conformance`,
`status_code_conformance`).

Bounded for a 2-core machine: a few examples per operation and mode (valid and invalid input), half of them
on real objects of a small seeded world so that successful answers are checked too; Hypothesis is
derandomized, so a run is the same every time. About a minute in all."""

import time
from collections import defaultdict

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from annotation import services as annotation_services
from benchmarks.models import Asset
from core import roles
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.sessions import current_item, start_session
from modeleval import services as modeleval_services
from review.dedup import new_dedup_run
from review.models import DuplicatePair
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, SceneFactory, UserFactory
from tests.prolific_fake import delivery

pytestmark = pytest.mark.django_db

EXAMPLES = {schemathesis.GenerationMode.POSITIVE: 6, schemathesis.GenerationMode.NEGATIVE: 4}
CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance]
BUDGET_S = 240  # the whole fuzz run (about 70 s of CPU); it fails, naming where, rather than run on


def test_schema_validates_with_no_warning(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))


@pytest.fixture
def wsgi_app():
    """Django's WSGI handler inside the test's transaction: like the test client, keep the connection
    across requests (close_old_connections would drop it in the middle of the test's atomic block)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield WSGIHandler()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def world(settings):
    """One of everything the API names by id, with an admin, an annotator holding a lease and an evaluator
    in a session; path parameters are pinned to these half of the time."""
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    admin = UserFactory(username="schema-admin", role=roles.ADMIN)
    annotator = UserFactory(username="schema-annotator", role=roles.ANNOTATOR)
    evaluator = UserFactory(username="schema-evaluator", role=roles.EVALUATOR)
    item = ItemFactory(choices=[], answers=["window"])
    benchmark, scene = item.benchmark, item.scene
    second = ItemFactory(change__scene=SceneFactory(benchmark=benchmark), answers=["desk"])
    change = ChangeFactory(scene=scene, status="submitted")
    campaign = annotation_services.create_campaign(benchmark, "Schema", "movement", [scene])
    assignment = annotation_services.lease_assignment(campaign, annotator)
    study = create_study(benchmark, StudyDesign("Schema", [item.pk, second.pk], 60, 600), admin)
    session = start_session(study, evaluator)
    current_item(session.pk, evaluator)
    run = modeleval_services.launch_run(modeleval_services.ensure_baseline_model().pk, benchmark, admin)
    asset = Asset.objects.create(scene=scene, role="image", file="schema/pixel.png", size=1, sha256="0" * 64)
    dedup = new_dedup_run(benchmark, admin)
    pair = DuplicatePair.objects.create(run=dedup, kind="change", first_id=change.pk, second_id=change.pk,
                                        first_text="a", second_text="b", similarity=0.9)
    ids = {  # first segment of the path: its parameters, and who owns the object
        "assignments": ({"id": assignment.pk, "index": 1}, "annotator"), "campaigns": ({"id": campaign.pk}, "admin"),
        "changes": ({"id": change.pk}, "admin"), "items": ({"id": item.pk}, "admin"),
        "assets": ({"id": asset.pk}, "admin"), "benchmarks": ({"slug": benchmark.slug}, "admin"),
        "sessions": ({"id": session.pk, "item_id": item.pk}, "evaluator"), "studies": ({"id": study.pk}, "admin"),
        "runs": ({"id": run.pk}, "admin"), "dedup": ({"id": dedup.pk}, "admin"),
        "duplicates": ({"id": pair.pk}, "admin"), "polishes": ({"id": 1, "action": "accept"}, "admin"),
    }
    tokens = {user.username.split("-")[1]: Token.objects.create(user=user).key
              for user in (admin, annotator, evaluator)}
    return ids, tokens


def pinned(operation, ids) -> tuple[dict, str] | None:
    """The seeded object's path parameters for this operation, if it names one, and its owner's role."""
    names = [p.name for p in operation.path_parameters]
    if not names:
        return None
    known, role = ids.get(operation.path.removeprefix("/api/v1/").split("/")[0], ({}, ""))
    if not all(name in known for name in names):
        return None
    return {name: known[name] for name in names}, role


def has_input(operation) -> bool:
    """Whether a request with the path pinned can still be wrong: a body or a query parameter (the
    Authorization header and the session cookie are the role's own)."""
    return bool(len(operation.body)) or any(p.location == "query" for p in operation.iter_parameters())


@pytest.mark.timeout(300)  # in the normal suite; about a minute and a half on 2 cores, BUDGET_S at most
def test_every_operation_answers_as_documented(wsgi_app, world):
    ids, tokens = world
    schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", wsgi_app)
    failures: dict[str, set[str]] = defaultdict(set)
    calls = defaultdict(int)
    started = time.monotonic()
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 50

    def fuzz(operation, strategy, examples, role=None):
        @given(case=strategy, role=st.sampled_from(sorted(tokens)) if role is None else st.just(role))
        @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        def call(case, role):
            headers = {"Authorization": f"Token {tokens[role]}"}
            response = case.call(headers=headers)
            calls[response.status_code] += 1
            try:
                case.validate_response(response, checks=CHECKS, headers=headers)
            except (Exception, BaseExceptionGroup) as exc:  # schemathesis.FailureGroup: reported below
                failures[f"{operation.label} as {role}"].add(str(exc)[:1500])

        try:
            call()
        except Unsatisfiable:  # no invalid request to make (nothing to get wrong but the path)
            pass

    for operation in operations:
        path = pinned(operation, ids)
        for mode, examples in EXAMPLES.items():
            if time.monotonic() - started > BUDGET_S:
                pytest.fail(f"the fuzz run went past {BUDGET_S} s at {operation.label}")
            fuzz(operation, operation.as_strategy(generation_mode=mode), examples)
            if path is not None and (mode is schemathesis.GenerationMode.POSITIVE or has_input(operation)):
                fuzz(operation, operation.as_strategy(generation_mode=mode, path_parameters=path[0]), examples,
                     role=path[1])

    report = "\n\n".join(f"{label}:\n" + "\n".join(sorted(found)) for label, found in sorted(failures.items()))
    assert not failures, f"{len(failures)} operation(s) failed:\n\n{report}"
    assert calls and sum(n for code, n in calls.items() if code < 300) > 30, dict(calls)


# --- every operation's successful answer, on real objects -------------------------------------------


GOOD_TEXT = "The chair has been moved from the desk to the window next to the bookshelf."


class Api:
    """Calls an operation of the schema as a role, checks the status and that the answer is documented."""

    def __init__(self, schema, tokens):
        self.schema, self.tokens = schema, tokens

    def __call__(self, role, method, path, expect, *, raw=False, **case):
        operation = self.schema[f"/api/v1{path}"][method]
        if "body" in case:
            case.setdefault("media_type", "application/json")
        case = operation.Case(**case)
        headers = {"Authorization": f"Token {self.tokens[role]}"} if role else {}
        response = case.call(headers=headers)
        assert response.status_code == expect, (method, path, response.status_code, response.text[:800])
        case.validate_response(response, checks=CHECKS, headers=headers)
        return response if raw else (response.json() if response.content else None)


def test_successful_answers_match_the_schema(wsgi_app, world, settings, django_capture_on_commit_callbacks):
    import hashlib
    import io
    import json
    import zipfile

    from annotation.models import Assignment, Campaign, DraftingPrompt
    from benchmarks.models import ContextChange, Item
    from humaneval.models import EvalSession, Study
    from modeleval.models import ModelSpec
    from review.models import Polish

    ids, tokens = world
    tokens = {**tokens, "reviewer": Token.objects.create(user=UserFactory(role=roles.REVIEWER)).key}
    api = Api(schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", wsgi_app), tokens)
    slug = ids["benchmarks"][0]["slug"]
    item_id, change_id = ids["items"][0]["id"], ids["changes"][0]["id"]
    scene_id = Item.objects.get(pk=item_id).scene_id

    # benchmarks: items, releases, uploads straight to storage, signed downloads
    assert api("admin", "GET", "/items/", 200)["count"] >= 2
    api("admin", "GET", "/items/{id}/", 200, path_parameters={"id": item_id})
    release = api("admin", "POST", "/releases/", 201, body={"benchmark": slug, "version": "1.0.0"})
    assert isinstance(release["n_items"], int)
    api("admin", "GET", "/releases/", 200)
    api("admin", "GET", "/releases/{id}/", 200, path_parameters={"id": release["id"]})
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
    upload = api("admin", "POST", "/uploads/", 201, body={
        "role": "image", "filename": "pixel.png", "size": len(png), "sha256": hashlib.sha256(png).hexdigest(),
        "scene": scene_id})
    token = upload["upload"]["url"].split("token=")[1]
    api(None, "PUT", "/uploads/{id}/content/", 204, path_parameters={"id": upload["id"]}, query={"token": token},
        body=png, media_type="application/octet-stream")
    asset = api("admin", "POST", "/uploads/{id}/complete/", 201, path_parameters={"id": upload["id"]})
    api("admin", "GET", "/assets/{id}/", 200, path_parameters={"id": asset["id"]})
    moved = api("admin", "GET", "/assets/{id}/download/", 302, path_parameters={"id": asset["id"]}, raw=True)
    token = moved.headers["location"][0].split("token=")[1]
    api(None, "GET", "/assets/{id}/file/", 200, path_parameters={"id": asset["id"]}, query={"token": token},
        raw=True)
    api("admin", "DELETE", "/assets/{id}/", 204, path_parameters={"id": asset["id"]})
    from tests.benchmarks.test_import_images import CAUSAL, image_set
    from tests.benchmarks.test_import_scans import BOXES, ascii_ply

    scanned = BenchmarkFactory(family="hypo3d")
    api("admin", "POST", "/benchmarks/{slug}/scans/", 201, path_parameters={"slug": scanned.slug},
        media_type="multipart/form-data",
        body={"scene_id": "room_1", "ply": ascii_ply(), "boxes": json.dumps(BOXES).encode(), "caption": "A room."})
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as handle:
        for file in image_set(CAUSAL):
            handle.writestr(file.name, file.content)
    api("admin", "POST", "/benchmarks/{slug}/image-sets/", 201,
        path_parameters={"slug": BenchmarkFactory(family="causalspatial").slug},
        media_type="multipart/form-data", body={"archive": archive.getvalue(), "flip": True})

    # annotation: the annotator's assignment, campaigns, drafting, the webhook
    assignment = {"id": ids["assignments"][0]["id"]}
    detail = api("annotator", "GET", "/assignments/{id}/", 200, path_parameters=assignment)
    assert detail["scene"]["objects"]
    api("annotator", "PUT", "/assignments/{id}/draft/", 200, path_parameters=assignment, body={"text": "The"})
    api("annotator", "POST", "/assignments/{id}/descriptions/", 201, path_parameters=assignment,
        body={"text": GOOD_TEXT})
    api("annotator", "DELETE", "/assignments/{id}/descriptions/{index}/", 200,
        path_parameters={**assignment, "index": 1})
    api("annotator", "POST", "/assignments/{id}/heartbeat/", 200, path_parameters=assignment)
    api("annotator", "POST", "/assignments/{id}/submit/", 201, path_parameters=assignment, body={"text": GOOD_TEXT})
    api("annotator", "POST", "/assignments/{id}/release/", 409, path_parameters=assignment)
    campaign = api("admin", "POST", "/campaigns/", 201, body={
        "benchmark": slug, "name": "Second", "scenes": [scene_id], "descriptions_per_assignment": 1})
    second = annotation_services.lease_assignment(Campaign.objects.get(pk=campaign["id"]),
                                                  Assignment.objects.get(pk=assignment["id"]).worker)
    api("annotator", "POST", "/assignments/{id}/release/", 200, path_parameters={"id": second.pk})
    api("admin", "GET", "/campaigns/", 200)
    api("admin", "GET", "/campaigns/{id}/", 200, path_parameters={"id": ids["campaigns"][0]["id"]})
    api("admin", "GET", "/campaigns/{id}/payments.csv", 200, path_parameters={"id": ids["campaigns"][0]["id"]},
        raw=True)
    llm = ModelSpec.objects.create(name="schema-llm", adapter="openai_compatible",
                                   config={"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    template = DraftingPrompt.objects.create(name="schema", target="changes", text="Describe {caption}")
    api("admin", "POST", "/drafting/requests/", 202,
        body={"template": template.pk, "model": llm.pk, "scenes": [scene_id]})
    settings.PROLIFIC_WEBHOOK_SECRET = "schema-secret"
    event = {"resource_id": "schema-1", "event_type": "submission.status.change", "participant_id": "P",
             "status": "APPROVED"}
    headers, _ = delivery("schema-secret", event, "schema-event-1", sent_at=1_780_000_000)
    api(None, "POST", "/crowd/prolific/webhook/", 200, body=event,
        headers={k: v for k, v in headers.items() if k != "Content-Type"}, raw=True)

    # review: the queue, a change refined, approved and questioned; items edited, approved, answered
    assert api("admin", "GET", "/review/queue/", 200)
    change = {"id": change_id}
    current = api("admin", "GET", "/changes/{id}/", 200, path_parameters=change)
    current = api("admin", "POST", "/changes/{id}/refine/", 200, path_parameters=change,
                  body={"version": current["version"], "text": GOOD_TEXT + " Really."})
    api("admin", "POST", "/changes/{id}/approve/", 409, path_parameters=change, body={"version": 0})
    current = api("admin", "POST", "/changes/{id}/approve/", 200, path_parameters=change,
                  body={"version": current["version"]})
    assert api("admin", "GET", "/changes/{id}/history/", 200, path_parameters=change)
    question = api("admin", "POST", "/changes/{id}/questions/", 201, path_parameters=change,
                   body={"question": "Where is the chair now?", "answer": "window", "question_type": ["Direction"]})
    polish = Polish.objects.create(change_id=change_id, source_number=0, source_text=GOOD_TEXT)
    api("admin", "POST", "/polishes/{id}/{action}/", 200, path_parameters={"id": polish.pk, "action": "accept"},
        body={"version": ContextChange.objects.get(pk=change_id).version})
    rejected = ChangeFactory(scene_id=scene_id, status="submitted", author=Assignment.objects.get(
        pk=assignment["id"]).worker)
    api("admin", "POST", "/changes/{id}/reject/", 200, path_parameters={"id": rejected.pk},
        body={"version": rejected.version, "criteria": ["clear"], "note": "Say where."})
    assert api("annotator", "GET", "/review/returned/", 200)
    api("annotator", "POST", "/changes/{id}/resubmit/", 200, path_parameters={"id": rejected.pk},
        body={"version": rejected.version + 1, "text": GOOD_TEXT})
    new_item = {"id": question["id"]}
    edited = api("reviewer", "POST", "/items/{id}/edit/", 200, path_parameters=new_item, body={
        "version": Item.objects.get(pk=question["id"]).version, "question": "Where is the chair?",
        "answers": ["window"]})
    api("reviewer", "POST", "/items/{id}/filter/", 200, path_parameters=new_item,
        body={"version": edited["version"], "action": "keep"})
    api("reviewer", "POST", "/items/{id}/approve/", 409, path_parameters=new_item,
                 body={"version": Item.objects.get(pk=question["id"]).version})
    assert api("admin", "GET", "/items/{id}/history/", 200, path_parameters=new_item)
    api("admin", "POST", "/items/{id}/answers/", 201, path_parameters={"id": item_id}, body={"answer": "window"})
    api("reviewer", "POST", "/items/{id}/reject/", 200, path_parameters=new_item, body={
        "version": Item.objects.get(pk=question["id"]).version, "criteria": ["unambiguous"]})
    Item.objects.filter(pk=question["id"]).update(consensus=Item.Consensus.FLAGGED)
    api("reviewer", "POST", "/items/{id}/adjudicate/", 200, path_parameters=new_item, body={
        "version": Item.objects.get(pk=question["id"]).version, "answers": ["window"]})
    api("admin", "GET", "/benchmarks/{slug}/keep-rates/", 200, path_parameters={"slug": slug})
    api("admin", "GET", "/benchmarks/{slug}/agreement/", 200, path_parameters={"slug": slug})
    dedup = api("admin", "POST", "/dedup/", 201, body={"benchmark": slug, "threshold": 0.9})
    api("admin", "GET", "/dedup/{id}/", 200, path_parameters=ids["dedup"][0])
    api("admin", "GET", "/dedup/{id}/", 200, path_parameters={"id": dedup["id"]})
    api("admin", "POST", "/duplicates/{id}/resolve/", 200, path_parameters=ids["duplicates"][0],
        body={"keep": "both"})
    api("admin", "POST", "/polish/", 202, body={"benchmark": slug, "model": str(llm.pk)})

    # humaneval: a study that allows going back; the evaluator's session; results
    study = api("admin", "POST", "/studies/", 201, body={
        "benchmark": slug, "name": "Back", "items": [item_id], "allow_going_back": True})
    session = start_session(Study.objects.get(pk=study["id"]), EvalSession.objects.get(
        pk=ids["sessions"][0]["id"]).participant)
    state = api("evaluator", "GET", "/sessions/{id}/current/", 200, path_parameters={"id": session.pk})
    state = api("evaluator", "POST", "/sessions/{id}/answer/", 201, path_parameters={"id": session.pk},
                body={"item": state["item"]["id"], "answer": "window"})
    assert state["status"] == "finished" and state["answered"]
    api("evaluator", "GET", "/sessions/{id}/items/{item_id}/", 200,
        path_parameters={"id": session.pk, "item_id": item_id})
    api("admin", "GET", "/studies/{id}/results/", 200, path_parameters={"id": study["id"]})

    # modeleval: the registry, a finished run (scored), cancel and resume
    model = api("admin", "POST", "/models/", 201, body={"name": "schema-random", "adapter": "random_baseline"})
    assert api("admin", "GET", "/models/", 200)
    with django_capture_on_commit_callbacks(execute=True):
        run = api("admin", "POST", "/runs/", 201, body={"model": model["id"], "benchmark": slug})
    finished = api("admin", "GET", "/runs/{id}/", 200, path_parameters={"id": run["run"]})
    assert finished["status"] == "finished" and finished["summary"] is not None, finished
    api("admin", "POST", "/runs/{id}/cancel/", 200, path_parameters={"id": ids["runs"][0]["id"]})
    api("admin", "POST", "/runs/{id}/resume/", 200, path_parameters={"id": ids["runs"][0]["id"]})
    results = api("admin", "GET", "/benchmarks/{slug}/results/", 200, path_parameters={"slug": slug})
    assert {row["kind"] for row in results["rows"]} >= {"human", "model"}, results["rows"]
    api("admin", "GET", "/benchmarks/{slug}/results/", 200, path_parameters={"slug": slug},
        query={"study": study["id"]})
