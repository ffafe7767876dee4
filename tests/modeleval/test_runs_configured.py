"""Runs as the papers ran them: a tag subset of the items, a prompt per tag value (Spatial457's
per-level prompts), provider parameters in the request, in-context examples, and a judge model
reading 3DSRBench choices the rules cannot."""

import hashlib

import pytest

from core import roles
from core.errors import DomainError
from modeleval import services
from modeleval.management.commands.run_eval import Command as RunEval
from modeleval.models import ModelSpec, Prediction, PromptTemplate
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db

LEVELS = ("L1_single", "L2_objects", "L3_2d_spatial")


def endpoint_model(name, endpoint) -> ModelSpec:
    return ModelSpec.objects.create(name=name, adapter="openai_compatible", modality="caption_only",
                                    config={"endpoint": endpoint.url, "model": name, "max_retries": 0})


def spatial457_items():
    benchmark = BenchmarkFactory(family="spatial457")
    items = [
        ItemFactory(benchmark=benchmark, change=None, scene=None, question="How many red objects are there?",
                    answers=["2"], tags={"level": level, "question_index": n}, external_id=f"{level}/{n}")
        for level in LEVELS for n in range(2)
    ]
    return benchmark, items


def test_a_prompt_per_level_gives_one_prompt_hash_per_level(django_capture_on_commit_callbacks):
    benchmark, items = spatial457_items()
    for level in LEVELS[:2]:
        PromptTemplate.objects.create(family="spatial457", condition=f"level-{level[:2].lower()}",
                                      text=f"[{level}] Answer in JSON. {{question}}")
    prompts = {"by": "level", "templates": {"L1_single": "level-l1", "L2_objects": "level-l2"}}
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(services.ensure_baseline_model().pk, benchmark, None, prompts=prompts)
    run.refresh_from_db()
    assert run.status == "finished" and run.predictions.count() == 6
    recorded = run.prompt_templates
    assert recorded["by"] == "level" and recorded["templates"]["L1_single"]["condition"] == "level-l1"
    assert recorded["templates"]["L2_objects"]["version"] == 1
    hashes = {}
    for prediction in run.predictions.select_related("item"):
        hashes.setdefault(prediction.item.tags["level"], set()).add(prediction.prompt_sha256)
    assert all(len(level_hashes) == 1 for level_hashes in hashes.values())  # equal within a level
    assert len({h for level_hashes in hashes.values() for h in level_hashes}) == 3  # different across levels
    expected = hashlib.sha256(b"[L1_single] Answer in JSON. How many red objects are there?").hexdigest()
    assert hashes["L1_single"] == {expected}
    # a level no template is named for gets the run's condition (Spatial457's main prompt)
    assert run.prompt_template.condition == "main"
    shown = {row["item"]: row["prompt_template"] for row in services.prediction_rows(run, services.run_predictions(run))}
    assert {shown[item.pk] for item in items} == {"spatial457/level-l1 v1", "spatial457/level-l2 v1",
                                                   "spatial457/main v1"}


def test_a_run_on_a_tag_subset_predicts_only_those_items(django_capture_on_commit_callbacks):
    benchmark, items = spatial457_items()
    subset = {"level": ["L1_single", "L2_objects"]}
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(services.ensure_baseline_model().pk, benchmark, None, subset=subset)
    run.refresh_from_db()
    wanted = {item.pk for item in items if item.tags["level"] in subset["level"]}
    assert run.subset == subset and run.total == 4 and run.status == "finished"
    assert set(run.items.values_list("pk", flat=True)) == wanted
    assert set(run.predictions.values_list("item_id", flat=True)) == wanted
    with pytest.raises(DomainError, match="subset"):
        services.launch_run(services.ensure_baseline_model().pk, benchmark, None, subset={"level": ["L9"]})
    with pytest.raises(DomainError, match="subset"):
        services.launch_run(services.ensure_baseline_model().pk, benchmark, None, subset={"level": "L1_single"})


def srbench_items():
    benchmark = BenchmarkFactory(family="3dsrbench")
    return benchmark, [
        ItemFactory(benchmark=benchmark, change=None, scene=None, question="Is the cup left of the plate?",
                    answer_format="single", choices=["left", "right"], answers=["A"], tags={},
                    external_id=f"Q000000{n}")
        for n in range(2)
    ]


def test_a_judge_model_reads_what_the_rules_cannot_and_is_recorded(chat_servers, django_capture_on_commit_callbacks):
    benchmark, items = srbench_items()
    model = endpoint_model("rambler", chat_servers(reply="I cannot tell from this picture"))
    judge_endpoint = chat_servers(reply="A")
    judge = endpoint_model("judge", judge_endpoint)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(model.pk, benchmark, None, judge_model=judge.pk)
    run.refresh_from_db()
    assert run.status == "finished" and run.judge_model == judge
    assert list(run.predictions.values_list("extracted", "extraction")) == [("A", "judge")] * 2
    assert run.scores["extraction"] == {"rule": 0, "judge": 2, "failed": 0}
    assert run.scores["overall"]["vanilla"] == 100.0  # the judge's letter is scored
    asked = judge_endpoint.prompts[0]  # VLMEvalKit's MMBench extraction prompt
    assert "match an answer with several options" in asked
    assert asked.endswith("Example 3: \nQuestion: Is the cup left of the plate??\nOptions: There are several "
                          "options: \nA. left\nB. right\n\nAnswer: I cannot tell from this picture\nYour output: ")

    # without a judge the same outputs cannot be read
    with django_capture_on_commit_callbacks(execute=True):
        plain = services.launch_run(model.pk, benchmark, None)
    assert set(Prediction.objects.filter(run=plain).values_list("extraction", flat=True)) == {"failed"}
    with pytest.raises(DomainError, match="OpenAI-compatible"):
        services.launch_run(model.pk, benchmark, None, judge_model=services.ensure_baseline_model().pk)


def test_provider_parameters_and_examples_reach_the_request(chat_servers, django_capture_on_commit_callbacks):
    benchmark, items = srbench_items()
    endpoint = chat_servers(reply="A")
    settings = {"temperature": 0.7, "max_tokens": 64, "top_p": 0.9, "stop": ["\n\n"]}
    examples = [{"question": "Is the sky above the sea?", "answer": "A"}]
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(endpoint_model("vlm", endpoint).pk, benchmark, None, settings=settings,
                                  examples=examples)
    run.refresh_from_db()
    assert run.settings == settings and run.examples == examples and run.status == "finished"
    assert endpoint.refused == []
    body = endpoint.requests[0]["body"]
    assert body["temperature"] == 0.7 and body["max_tokens"] == 64 and body["top_p"] == 0.9
    assert body["stop"] == ["\n\n"]
    prompt = endpoint.prompts[0]
    assert prompt.startswith("Example question: Is the sky above the sea?\nExample answer: A\n\nQuestion: Is the cup")
    assert run.predictions.first().prompt_sha256 == hashlib.sha256(prompt.encode()).hexdigest()
    for bad in ({"temperature": 5}, {"top_k": 3}, {"reasoning_effort": "max"}):
        with pytest.raises(DomainError, match="temperature|Unknown|reasoning_effort"):
            services.launch_run(endpoint_model(f"m{len(bad)}{list(bad)[0]}", endpoint).pk, benchmark, None,
                                settings=bad)


def test_the_api_and_run_eval_take_the_run_settings(client):
    benchmark, items = spatial457_items()
    client.force_login(UserFactory(role=roles.ADMIN))
    body = {"model": services.ensure_baseline_model().pk, "benchmark": benchmark.slug,
            "subset": {"level": ["L1_single"]}, "settings": {"temperature": 0.2},
            "prompts": {"by": "level", "templates": {"L1_single": "main"}},
            "examples": [{"question": "q", "answer": "a"}]}
    response = client.post("/api/v1/runs/", body, content_type="application/json")
    assert response.status_code == 201, response.json()
    assert response.json()["total"] == 2
    bad = client.post("/api/v1/runs/", {**body, "settings": {"temperature": "hot"}}, content_type="application/json")
    assert bad.status_code == 400 and "settings" in bad.json()

    options = {"subset": ["level=L1_single,L2_objects"], "prompt_by": "level", "prompt": ["L1_single=main"],
               "temperature": 0.0, "max_tokens": None, "reasoning_effort": "high", "thinking_budget": None,
               "examples": None, "judge": None}
    assert RunEval().run_options(options) == {
        "subset": {"level": ["L1_single", "L2_objects"]}, "prompts": {"by": "level", "templates": {"L1_single": "main"}},
        "settings": {"temperature": 0.0, "reasoning_effort": "high"}, "examples": [], "judge_model": None,
        "inputs": {},  # frames per video, fps, extra frames: none given
    }
