"""Hypo3D Tables 3-4 and 10 on the platform: counterfactual items (the unchanged-scene answer and the
"irrelevant change" flag) through import, authoring and review, scored with and without the change
(accuracy, drop, flips on an irrelevant change) in the results API; SBERT and the judge score stored
per run and shown in the tables (API, page, CSV)."""

import contextlib
import io
import json

import pytest
from PIL import Image

from benchmarks.importers import import_item_file
from benchmarks.models import Item
from benchmarks.services import store_asset
from core import roles
from core.errors import DomainError
from modeleval import recipes
from modeleval.analysis import secondary_metrics
from modeleval.models import ModelSpec, Prediction
from modeleval.recipes.report import as_text, recipe_report
from modeleval.runs import run_scoring
from scoring.counterfactual import PairedItem, counterfactual_scores
from tests.chat_server import user_text
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, SceneFactory, UserFactory
from tests.modeleval.test_recipes import FIG11  # PROTOCOLS.md 1.3 (a), verbatim

pytestmark = pytest.mark.django_db

# PROTOCOLS.md 1.3 (c), Fig. 13 ("w/o change"), and (a), Fig. 11, with the 2D VLM's line.
FIG13 = ("Given a top-view of a 3D scene, mentally rotate the image to align with the specified orientation.\n\n"
         "Scene Orientation: {}\n\n"
         "Then, answer a question based on the aligned scene.\n\n"
         "Question: {}\n\n"
         "The answer should be a single word or a short phrase.\n\n"
         "The answer is:")
ORIENTATION = "The desk was located at the left of the scene."
PUBLISHED = {
    "scene0000_00": [
        {"context_change": "The chair has been moved to the window.", "change_type": "Movement Change",
         "questions_answers": [
             {"question_id": "q1", "question_type": "Direction", "question": "Where is the chair?",
              "answer": "left", "unchanged_answer": "right"},
             {"question_id": "q2", "question_type": "Semantic", "question": "What is next to the lamp?",
              "answer": "table", "answer_without_change": ["chair", "armchair"]}]},
        {"context_change": "The poster has been removed.", "change_type": "Removal", "irrelevant_change": True,
         "questions_answers": [
             {"question_id": "q3", "question_type": "Semantic", "question": "What is on the rug?", "answer": "sofa"},
             {"question_id": "q4", "question_type": "Semantic", "question": "How many chairs are there?",
              "answer": "2"}]},
        {"context_change": "The bin has been removed.", "change_type": "Removal",
         "questions_answers": [
             {"question_id": "q5", "question_type": "Scale", "question": "Which is taller?", "answer": "shelf"}]},
    ],
}


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 12), (20, 90, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def hypo3d_benchmark():
    benchmark = BenchmarkFactory(family="hypo3d")
    scene = SceneFactory(benchmark=benchmark, external_id="scene0000_00")
    store_asset(scene, "topview_semantic", "semantic.png", png(), {})
    store_asset(scene, "topview_plain", "plain.png", png(), {})
    scene.world_frames.create(anchor=scene.scene_objects.first(), side="left", text=ORIENTATION)
    return benchmark


def endpoint_model(endpoint, name, modality="top_view_plain") -> ModelSpec:
    return ModelSpec.objects.create(name=name, adapter="openai_compatible", modality=modality,
                                    config={"endpoint": endpoint.url, "model": name, "max_retries": 0})


def launch(recipe, benchmark, models, capture, judge=None):
    with capture(execute=True):
        runs = recipes.launch_recipe(recipe, benchmark, [model.pk for model in models], judge_model=judge)
    for run in runs:
        run.refresh_from_db()
        assert run.status == "finished", list(run.predictions.values_list("error", flat=True))
    return runs


def test_counterfactual_items_imported_run_with_and_without_the_change_and_reported(
        client, chat_servers, django_capture_on_commit_callbacks):
    benchmark = hypo3d_benchmark()
    report = import_item_file(benchmark, "hypo3d.json", json.dumps(PUBLISHED))
    assert report.errors == []
    items = {item.external_id: item for item in Item.objects.filter(benchmark=benchmark)}
    assert (items["q1"].unchanged_answers, items["q1"].tags["change_effect"]) == (["right"], "affects")
    assert items["q2"].unchanged_answers == ["chair", "armchair"]
    assert (items["q3"].unchanged_answers, items["q3"].tags["change_effect"]) == (["sofa"], "irrelevant")
    assert items["q5"].unchanged_answers == [] and "change_effect" not in items["q5"].tags

    # Table 3 (affects): with the change q1 right, q2 wrong; without it both right (q2 by its 2nd answer).
    # Table 4 (irrelevant): with the change both right; without it q3 the same answer, q4 flips to 3.
    # Answered by question and by whether the prompt shows a change: a run's requests arrive in any order.
    answers = {("q1", True): "left", ("q2", True): "lamp", ("q1", False): "Right", ("q2", False): "armchair",
               ("q3", True): "sofa", ("q4", True): "two", ("q3", False): "Sofa.", ("q4", False): "3"}

    def reply(body):
        prompt = user_text(body)
        (asked,) = [item for item in items.values() if f"Question: {item.question}" in prompt]
        return answers[(asked.external_id, "Context Change:" in prompt)]

    endpoint = chat_servers(reply=reply)
    model = endpoint_model(endpoint, "Qwen2-VL-72B-Instruct")
    table3 = launch("hypo3d-table3", benchmark, [model], django_capture_on_commit_callbacks)
    table4 = launch("hypo3d-table4", benchmark, [model], django_capture_on_commit_callbacks)
    assert endpoint.refused == [] and len(endpoint.requests) == 8  # q5 is in neither table
    q1 = items["q1"]
    assert FIG11.format(ORIENTATION, q1.change.text, q1.question) in endpoint.prompts
    assert FIG13.format(ORIENTATION, q1.question) in endpoint.prompts  # no change shown
    assert sum("Context Change:" in prompt for prompt in endpoint.prompts) == 4  # the "with change" runs
    assert all(r["body"]["max_tokens"] == 128 and r["body"]["temperature"] == 0.01 for r in endpoint.requests)
    # the "w/o change" run is scored against the unchanged-scene answers
    assert table3[1].scores["overall"]["EM"] == 100.0 and table3[0].scores["overall"]["EM"] == 50.0

    client.force_login(UserFactory(role=roles.REVIEWER))
    data = client.get(f"/api/v1/benchmarks/{benchmark.slug}/results/").json()
    (table,) = data["counterfactual"]
    rows = {(row["with_change"]["run"], row["without_change"]["run"]): row for row in table["rows"]}
    affects = rows[(table3[0].pk, table3[1].pk)]["affects"]
    assert affects == {"n": 2, "EM_without_change": 100.0, "EM_with_change": 50.0, "drop": 50.0,
                       "answer_changed": 100.0}
    irrelevant = rows[(table4[0].pk, table4[1].pk)]["irrelevant"]
    assert irrelevant == {"n": 2, "EM_without_change": 50.0, "EM_with_change": 100.0, "drop": -50.0,
                          "answer_changed": 50.0, "flip_rate": 50.0}
    assert rows[(table3[0].pk, table3[1].pk)]["without_change"]["name"].startswith(
        "Qwen2-VL-72B-Instruct · paper-fig13 · top_view_semantic · change_effect=affects")
    # the recipe's own report says the same
    assert recipe_report(table4)["counterfactual"][0]["rows"][0]["irrelevant"] == irrelevant
    assert "flip_rate" in as_text(recipe_report(table4))


@pytest.mark.parametrize("qa, field", [
    ({"irrelevant_change": "yes"}, "irrelevant_change"),
    ({"unchanged_answer": ["", 3]}, "unchanged_answer"),
    ({"irrelevant_change": True, "unchanged_answer": "something else"}, "unchanged_answer"),
])
def test_a_bad_counterfactual_field_in_a_published_file_is_named(qa, field):
    benchmark = hypo3d_benchmark()
    data = {"scene0000_00": [{"context_change": "The chair moved.", "change_type": "Movement", "questions_answers": [
        {"question_id": "q1", "question_type": "Direction", "question": "Where?", "answer": "left", **qa}]}]}
    report = import_item_file(benchmark, "hypo3d.json", json.dumps(data))
    assert len(report.errors) == 1 and f"'{field}'" in report.errors[0] and "questions_answers[0]" in report.errors[0]
    assert not Item.objects.filter(benchmark=benchmark).exists()


def test_authoring_and_review_take_the_unchanged_answer_and_the_flag(client):
    change = ChangeFactory(status="approved")
    author, reviewer = UserFactory(role=roles.REVIEWER), UserFactory(role=roles.REVIEWER)
    client.force_login(author)
    url = f"/api/v1/changes/{change.pk}/questions/"
    body = {"question": "Where is the chair?", "answer": "left", "question_type": ["Direction"]}
    bad = client.post(url, {**body, "irrelevant_change": "perhaps"}, content_type="application/json")
    assert bad.status_code == 400 and "irrelevant_change" in bad.json()
    bad = client.post(url, {**body, "irrelevant_change": True, "unchanged_answer": "right"},
                      content_type="application/json")
    assert bad.status_code == 400 and "unchanged_answer" in bad.json()
    made = client.post(url, {**body, "unchanged_answer": "right"}, content_type="application/json")
    assert made.status_code == 201, made.json()
    assert made.json()["unchanged_answers"] == ["right"] and made.json()["tags"]["change_effect"] == "affects"

    item = Item.objects.get(pk=made.json()["id"])
    client.force_login(reviewer)
    edit = f"/api/v1/items/{item.pk}/edit/"
    body = {"version": item.version, "question": item.question, "answers": ["left"]}
    bad = client.post(edit, {**body, "unchanged_answers": [""]}, content_type="application/json")
    assert bad.status_code == 400 and "unchanged_answers" in bad.json()
    done = client.post(edit, {**body, "irrelevant_change": True}, content_type="application/json")
    assert done.status_code == 200, done.json()
    assert done.json()["unchanged_answers"] == ["left"] and done.json()["tags"]["change_effect"] == "irrelevant"


def test_counterfactual_scores_without_django():
    items = [PairedItem("affects", ("left",), ("right",), "Left", "right"),
             PairedItem("affects", ("two",), ("3",), None, "three"),
             PairedItem("irrelevant", ("sofa",), ("sofa",), "the sofa", "sofa"),
             PairedItem("irrelevant", ("sofa",), ("sofa",), "couch", "sofa")]
    assert counterfactual_scores(items) == {
        "affects": {"n": 2, "EM_without_change": 100.0, "EM_with_change": 50.0, "drop": 50.0, "answer_changed": 100.0},
        "irrelevant": {"n": 2, "EM_without_change": 100.0, "EM_with_change": 50.0, "drop": 50.0,
                       "answer_changed": 50.0, "flip_rate": 50.0}}


def test_sbert_and_the_judge_score_are_stored_per_run_and_shown(client, chat_servers, settings,
                                                                 django_capture_on_commit_callbacks):
    settings.SCORE_SBERT = True  # off elsewhere in the suite (tests/conftest.py)
    benchmark = hypo3d_benchmark()
    scene = benchmark.scenes.get()
    change = ChangeFactory(scene=scene, status="approved")
    ItemFactory(change=change, question="Where is the chair?", answers=["left"])
    ItemFactory(change=change, question="What is on the rug?", answers=["sofa"],
                tags={"change_type": "movement", "question_type": ["Semantic"]})
    endpoint = chat_servers(reply="left")
    judge_endpoint = chat_servers("5", "I would say 2.", "5", "nothing")  # the last reply holds no rating
    model = endpoint_model(endpoint, "gpt-4o")
    judge = endpoint_model(judge_endpoint, "gpt-4o-mini", modality="caption_only")
    with pytest.raises(DomainError, match="judge"):
        recipes.launch_recipe("hypo3d-table10", benchmark, [model.pk])  # Table 10 needs its judge
    runs = launch("hypo3d-table10", benchmark, [model], django_capture_on_commit_callbacks, judge=judge.pk)
    assert [run.recipe["entry"] for run in runs] == ["non-semantic-map", "semantic-map"]
    assert judge_endpoint.refused == [] and len(judge_endpoint.requests) == 4
    assert judge_endpoint.prompts[0] == (secondary_metrics.JUDGE_INSTRUCTION + "\n\n"
                                         "Question: Where is the chair?\nAnswer: left\nGround Truth: left")
    ratings = sorted(Prediction.objects.filter(run__in=runs).values_list("judge_rating", flat=True),
                     key=lambda rating: rating or 0)
    assert ratings == [None, 2.0, 5.0, 5.0]
    # (5 - 1) / 4 and (2 - 1) / 4 -> 62.5; (5 - 1) / 4 and an unrated answer (the lowest rating) -> 50
    rated, unrated = sorted(runs, key=lambda run: -run.scores["overall"]["judge"])
    assert (rated.scores["overall"]["judge"], unrated.scores["overall"]["judge"]) == (62.5, 50.0)
    assert any("no judge rating" in error for error in unrated.scores["errors"])
    for run in runs:  # SBERT of "left" against "left" and against "sofa", stored with the run
        assert run.scores["overall"]["SBERT"] == pytest.approx(50.0 + 50.0 * secondary_sbert("left", "sofa"),
                                                               abs=0.01)

    client.force_login(UserFactory(role=roles.ADMIN))
    data = client.get(f"/api/v1/benchmarks/{benchmark.slug}/results/").json()
    table = next(table for table in data["tables"] if table["key"] == "table10")
    assert table["metrics"] == ["EM", "SBERT", "judge"]
    cells = {row["name"]: row["cells"][0] for row in table["rows"] if row["kind"] == "model"}
    assert sorted(cell[2]["value"] for cell in cells.values()) == [50.0, 62.5]
    page = client.get(f"/benchmarks/{benchmark.slug}/results/").content.decode()
    assert "Judge score and SBERT beside EM (Hypo3D Table 10" in page and "<td>62.5 " in page
    csv = client.get(f"/benchmarks/{benchmark.slug}/results/?format=csv&table=table10").content.decode()
    assert "SBERT" in csv and "judge" in csv and "62.5" in csv


def secondary_sbert(pred: str, ref: str) -> float:
    from scoring import sbert

    return sbert.similarities(sbert.load_encoder(), [pred], [ref])[0]


def test_the_judge_is_asked_with_no_lock_held_on_the_run(monkeypatch, chat_servers,
                                                         django_capture_on_commit_callbacks):
    """score_run asks the judge (HTTP) before it locks the run's row to store the scores."""
    benchmark = hypo3d_benchmark()
    ItemFactory(change=ChangeFactory(scene=benchmark.scenes.get(), status="approved"), answers=["left"])
    model, judge = (endpoint_model(chat_servers(reply="left"), "gpt-4o"),
                    endpoint_model(chat_servers(reply="4"), "gpt-4o-mini", modality="caption_only"))
    held, asked = [], []
    real = run_scoring.transaction

    class Watched:
        on_commit = staticmethod(real.on_commit)

        @staticmethod
        @contextlib.contextmanager
        def atomic(*args, **kwargs):
            held.append(True)
            try:
                with real.atomic(*args, **kwargs):
                    yield
            finally:
                held.pop()

    rate = secondary_metrics.rate_predictions
    monkeypatch.setattr(run_scoring, "transaction", Watched)
    monkeypatch.setattr(secondary_metrics, "rate_predictions", lambda run: asked.append(bool(held)) or rate(run))
    # while the judge answers, the run's job hears from its scoring (the stale sweep leaves it be)
    monkeypatch.setattr(secondary_metrics, "RATING_REPORT_EVERY_S", 0)
    heard = []
    monkeypatch.setattr(secondary_metrics, "advance_job", lambda job_id, **report: heard.append(report["message"]))
    runs = launch("hypo3d-table10", benchmark, [model], django_capture_on_commit_callbacks, judge=judge.pk)
    assert asked == [False, False]
    assert all(run.scores["overall"]["judge"] == 75.0 for run in runs)
    assert heard and all(message.startswith("Scoring … the judge has rated") for message in heard)
