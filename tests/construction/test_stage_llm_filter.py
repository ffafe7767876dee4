"""The LLM filter stage (M3-Verse's text-only filters) through an OpenAI-compatible server on loopback:
vision_free v1 drops what the model answers right without the scene (by the family's scorer; the
paper's own wording, v2, is tested in test_paper_filters.py), ambiguity
drops what the model calls ambiguous, with its reason; the prompt version is in the report and on
every decision, and a re-run asks only about items not judged yet."""

from types import SimpleNamespace

import pytest

from benchmarks.models import Item
from construction import pipeline
from construction.stages import llm_filter
from construction.stages.llm_filter import llm_filter_stage
from core import roles
from core.errors import DomainError
from core.models import Job
from modeleval.models import ModelSpec
from modeleval.services import ensure_baseline_model
from review.models import ItemDecision
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def language_model(url) -> ModelSpec:
    return ModelSpec.objects.create(name="blind reader", adapter="openai_compatible",
                                    config={"endpoint": url, "model": "tiny", "max_retries": 0})


def choice_item(benchmark, n, question, answer, status="approved"):
    return ItemFactory(benchmark=benchmark, change=None, scene=None, external_id=f"q{n}", question=question,
                       answer_format="single", choices=["the red cup", "the blue cup"], answers=[answer],
                       tags={"subtype": "location_next_to"}, status=status)


def run(benchmark, **params):
    progress = []
    report = llm_filter_stage(SimpleNamespace(benchmark=benchmark, params=params, pk=3),
                              lambda done, total, message: progress.append((done, total)))
    assert progress[-1][0] == progress[-1][1]
    return report


def test_vision_free_drops_what_the_model_answers_right_blind(chat_servers):
    bench = BenchmarkFactory(family="3dsrbench")
    guessable = choice_item(bench, 1, "Which cup is the one that holds coffee?", "B")
    visual = choice_item(bench, 2, "Which cup is closer to the camera?", "A", status="draft")
    unanswered = choice_item(bench, 3, "Which cup is on the left?", "A")
    Item.objects.filter(pk=unanswered.pk).update(answers=[])
    gone = choice_item(bench, 4, "Which cup was rejected already?", "A", status="rejected")
    chat = chat_servers("B", "The answer is B")
    model = language_model(chat.url)

    report = run(bench, filter="vision_free", model=model.pk, prompt_version="v1")

    # the model never sees the gold answer, and every prompt is the versioned one
    assert len(chat.prompts) == 2 and "Answer: " not in chat.prompts[0]
    assert "You cannot see the scene" in chat.prompts[0] and "A. the red cup\nB. the blue cup" in chat.prompts[0]
    assert report["prompt_version"] == "vision_free/v1" and report["model"] == {"id": model.pk, "name": "blind reader"}
    assert report["asked"] == 2 and report["kept"] == 1
    assert report["dropped"] == [{"item": guessable.pk, "id": "q1", "reason": "answered right without vision: B"}]
    assert report["skipped"] == [{"item": unanswered.pk, "id": "q3", "reason": "no gold answer to score against"}]

    guessable.refresh_from_db()
    visual.refresh_from_db()
    gone.refresh_from_db()
    assert guessable.status == Item.Status.REJECTED and visual.status == Item.Status.DRAFT
    drop = ItemDecision.objects.get(item=guessable)
    assert drop.action == ItemDecision.Action.DROP and drop.criteria == ["vision_free"] and drop.reviewer is None
    assert drop.note == f"vision_free/v1, model #{model.pk}: answered right without vision: B"
    assert ItemDecision.objects.get(item=visual).action == ItemDecision.Action.KEEP
    assert not ItemDecision.objects.filter(item=gone).exists()

    # A re-run asks nothing about items already judged with this prompt version and model.
    again = run(bench, filter="vision_free", model=model.pk, prompt_version="v1")
    assert len(chat.prompts) == 2 and again["asked"] == 0 and again["already_judged"] == 1
    assert again["dropped"] == [] and ItemDecision.objects.count() == 2


def test_vision_free_scores_open_answers_with_the_family_scorer(chat_servers):
    bench = BenchmarkFactory(family="hypo3d")
    item = ItemFactory(benchmark=bench, change__scene__benchmark=bench, answers=["window"])
    chat = chat_servers("The window.")  # right after Hypo3D's normalisation

    report = run(bench, filter="vision_free", model=language_model(chat.url).pk, prompt_version="v1")

    assert [entry["item"] for entry in report["dropped"]] == [item.pk]
    assert "Options:\n(none)" in chat.prompts[0]


def test_ambiguity_drops_ambiguous_items_with_the_models_reason(chat_servers):
    bench = BenchmarkFactory(family="3dsrbench")
    alike = choice_item(bench, 1, "Which cup is nearer the cyan plate?", "A")
    clear = choice_item(bench, 2, "Which cup is on the shelf?", "B")
    unread = choice_item(bench, 3, "Which cup is on the floor?", "A")
    chat = chat_servers('{"ambiguous": true, "reason": "The two cups look alike."}',
                  '```json\n{"ambiguous": false, "reason": "Only one cup is on the shelf."}\n```',
                  "I am not sure.")
    model = language_model(chat.url)

    report = run(bench, filter="ambiguity", model=model.pk, prompt_version="v1")

    assert "Answer: B. the blue cup" in chat.prompts[1] and '{"ambiguous": true or false' in chat.prompts[1]
    assert report["prompt_version"] == "ambiguity/v1" and report["kept"] == 1
    assert report["dropped"] == [{"item": alike.pk, "id": "q1", "reason": "ambiguous: The two cups look alike."}]
    assert report["undecided"] == [{"item": unread.pk, "id": "q3", "reply": "I am not sure."}]
    drop = ItemDecision.objects.get(item=alike)
    assert drop.criteria == ["ambiguity"] and drop.note.startswith(f"ambiguity/v1, model #{model.pk}: ambiguous")
    clear.refresh_from_db()
    assert clear.status == Item.Status.APPROVED

    # The undecided item is asked again; the others are not.
    chat.contents.append('{"ambiguous": false, "reason": "Clear."}')
    again = run(bench, filter="ambiguity", model=model.pk)
    assert len(chat.prompts) == 4 and "on the floor" in chat.prompts[3]
    assert again["asked"] == 1 and again["kept"] == 1 and again["already_judged"] == 1  # the dropped one is out


def test_an_item_edited_while_the_model_answered_is_left_for_the_next_run(chat_servers, monkeypatch):
    bench = BenchmarkFactory(family="3dsrbench")
    item = choice_item(bench, 1, "Which cup holds coffee?", "B")
    chat = chat_servers("B")
    answer = llm_filter.modeleval_services.complete

    def edited_meanwhile(model, prompt):
        Item.objects.filter(pk=item.pk).update(version=item.version + 1)
        return answer(model, prompt)

    monkeypatch.setattr(llm_filter.modeleval_services, "complete", edited_meanwhile)
    report = run(bench, filter="vision_free", model=language_model(chat.url).pk, prompt_version="v1")

    assert report["changed"] == [{"item": item.pk, "id": "q1"}] and report["dropped"] == []
    item.refresh_from_db()
    assert item.status == Item.Status.APPROVED and not ItemDecision.objects.exists()


@pytest.mark.parametrize("params, field", [
    ({"filter": "grammar"}, "filter"),
    ({"filter": "ambiguity", "prompt_version": "v0"}, "prompt_version"),
    ({"filter": "ambiguity", "prompt_version": 1}, "prompt_version"),
    ({"filter": "ambiguity"}, "model"),
    ({"filter": "ambiguity", "model": 10**30}, "model"),  # past bigint: refused, not a database error
    ({"filter": "ambiguity", "model": "-1"}, "model"),
])
def test_bad_params_name_their_field(params, field):
    with pytest.raises(DomainError) as error:
        llm_filter.checked_params(params)
    assert error.value.field == field


def test_only_a_language_model_filters():
    with pytest.raises(DomainError) as error:
        llm_filter.checked_params({"filter": "vision_free", "model": ensure_baseline_model().pk})
    assert error.value.field == "model"


def test_the_pipeline_runs_it_as_a_job_whose_report_is_the_stages(chat_servers, django_capture_on_commit_callbacks):
    bench = BenchmarkFactory(family="3dsrbench")
    choice_item(bench, 1, "Which cup holds coffee?", "B")
    model = language_model(chat_servers('{"ambiguous": false, "reason": "Clear."}').url)
    admin = UserFactory(role=roles.ADMIN)
    filtering = pipeline.add_stage(bench, admin, "llm_filter", {"filter": "ambiguity", "model": model.pk})
    with django_capture_on_commit_callbacks(execute=True):
        job = pipeline.run_stage(filtering, admin)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.report["kept"] == 1
    assert job.report["prompt_version"] == "ambiguity/v1"
