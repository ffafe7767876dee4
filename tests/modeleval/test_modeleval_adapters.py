"""Prompts as data, the OpenAI-compatible adapter against an endpoint served on loopback
(429 retry, timeout), cancel and resume."""

import io

import pytest
from PIL import Image

from benchmarks.models import Item
from benchmarks.services import store_asset
from core import roles
from modeleval import services
from modeleval.clients.adapters import RandomBaseline, RandomPlusPlus, RecordedOutputs
from modeleval.models import ModelSpec, Prediction, Run
from modeleval.prompting.prompts import InferenceRequest, latest_template, render_prompt
from modeleval.runs import inference
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint(chat_servers):
    return chat_servers(reply="window")


@pytest.fixture
def item():
    item = ItemFactory()
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 100, 50)).save(buffer, format="PNG")
    store_asset(item.scene, "topview_plain", "map.png", buffer.getvalue(), {})
    item.scene.world_frames.create(anchor=item.scene.scene_objects.first(), side="left",
                                   text="The desk is to the left of the scene.")
    return item


def vlm(endpoint, **config):
    return ModelSpec.objects.create(
        name="tiny-vlm", adapter="openai_compatible", modality="top_view_plain",
        config={"endpoint": endpoint.url, "model": "served-model", "api_key_env": "HYPOLAB_MODEL_KEY_TEST",
                "backoff_s": 0.01, **config},
    )


def test_main_hypo3d_prompt_follows_the_papers_template(item):
    prompt = render_prompt(latest_template("hypo3d"), item, "top_view_plain")
    assert prompt.startswith("Given a top-view of a 3D scene, mentally rotate the image to align with the orientation.")
    assert "Scene Orientation: The desk is to the left of the scene." in prompt
    assert f"Context Change: {item.change.text} Question: {item.question}" in prompt
    assert prompt.endswith("The answer should be a single word or a short phrase.\n\nThe answer is:")
    caption_prompt = render_prompt(latest_template("hypo3d"), item, "caption_only")
    assert "Scene description: A small office." in caption_prompt


def test_endpoint_gets_prompt_and_image_as_data_url_and_429_is_retried(item, endpoint, monkeypatch,
                                                                        django_capture_on_commit_callbacks):
    monkeypatch.setenv("HYPOLAB_MODEL_KEY_TEST", "sk-test")
    endpoint.rate_limit_first = True
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(vlm(endpoint).pk, item.benchmark, None)
    prediction = Prediction.objects.get(run=run)
    assert prediction.output == "window" and prediction.error == ""
    assert len(endpoint.requests) == 2  # the 429, then the retry
    sent = endpoint.requests[-1]
    assert sent["path"] == "/v1/chat/completions" and sent["auth"] == "Bearer sk-test"
    text, image = sent["body"]["messages"][0]["content"]
    assert "Context Change:" in text["text"] and image["image_url"]["url"].startswith("data:image/png;base64,")
    run.refresh_from_db()
    assert run.status == "finished" and run.scores["overall"]["EM"] == 100.0


def test_endpoint_timeout_is_recorded_as_the_items_error_and_the_run_finishes(item, endpoint,
                                                                              django_capture_on_commit_callbacks):
    endpoint.slow = True
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(vlm(endpoint, timeout_s=0.3).pk, item.benchmark, None)
    prediction = Prediction.objects.get(run=run)
    assert "no answer within 0.3 s" in prediction.error and prediction.output == ""
    run.refresh_from_db()
    assert run.status == "finished" and run.scores["inference_errors"] == 1


def test_vision_blind_model_sends_no_image(item, endpoint, django_capture_on_commit_callbacks):
    model = vlm(endpoint)
    model.withhold_stimulus = True
    model.save()
    with django_capture_on_commit_callbacks(execute=True):
        services.launch_run(model.pk, item.benchmark, None)
    assert len(endpoint.requests[-1]["body"]["messages"][0]["content"]) == 1


def test_repeats_give_one_prediction_per_item_and_repeat(item, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(services.ensure_baseline_model().pk, item.benchmark, None, repeats=3)
    assert sorted(run.predictions.values_list("repeat", flat=True)) == [0, 1, 2]
    run.refresh_from_db()
    assert run.total == 3 and run.status == "finished"


def test_cancelled_run_stops_and_resume_infers_only_what_is_missing(item, django_capture_on_commit_callbacks):
    others = [ItemFactory(change__scene__benchmark=item.benchmark) for _ in range(3)]
    run = services.launch_run(services.ensure_baseline_model().pk, item.benchmark, None, batch_size=2)
    inference.infer_items(run.pk, [item.pk, others[0].pk])  # one batch done by hand
    services.cancel_run(run.pk, UserFactory(role=roles.ADMIN))
    assert inference.infer_items(run.pk, [others[1].pk]) == 0
    first = {p.item_id: p.pk for p in run.predictions.all()}
    with django_capture_on_commit_callbacks(execute=True):
        services.resume_run(run.pk)
    run.refresh_from_db()
    assert run.status == "finished" and run.predictions.count() == 4
    assert {p.item_id: p.pk for p in run.predictions.filter(item_id__in=first)} == first


@pytest.mark.parametrize(("payload", "field"), [({"repeats": 0}, "repeats"), ({"repeats": 99}, "repeats"),
                                                ({"condition": "unknown"}, "condition")])
def test_bad_run_settings_are_400_and_create_nothing(client, item, payload, field):
    client.force_login(UserFactory(role=roles.ADMIN))
    body = {"model": services.ensure_baseline_model().pk, "benchmark": item.benchmark.slug, **payload}
    response = client.post("/api/v1/runs/", body, content_type="application/json")
    assert response.status_code == 400 and field in response.json()
    assert not Run.objects.exists()


def test_resuming_a_running_run_is_a_conflict(client, item):
    run = services.launch_run(services.ensure_baseline_model().pk, item.benchmark, None)
    client.force_login(UserFactory(role=roles.ADMIN))
    assert client.post(f"/api/v1/runs/{run.pk}/resume/").status_code == 409
    assert client.post(f"/api/v1/runs/{run.pk}/cancel/").status_code == 200


def test_random_baselines_answer_in_the_form_each_familys_extraction_reads():
    options = ["Yes", "No", "Not sure"]
    causal = Item(external_id="Collision_Level_1_0", choices=options, answers=["A"])
    answer = RandomBaseline(0, [], family="causalspatial").answer(InferenceRequest("p", choices=options), causal)
    assert answer in {f"{{'Reasoning': 'random guess', 'Answer': '({letter})'}}" for letter in "ABC"}
    spatial = Item(external_id="L1_single/3", answers=["Red"])
    answer = RandomBaseline(0, ["sofa"], family="spatial457").answer(InferenceRequest("p"), spatial)
    colour = answer.removeprefix("{'Reasoning': 'random guess', 'Answer': '").removesuffix("'}")
    assert colour in ("gray", "blue", "purple", "brown", "green", "cyan", "red", "yellow")
    assert RandomBaseline(0, [], family="m3verse").answer(InferenceRequest("p", choices=options), causal) in "ABC"
    assert RandomBaseline(0, ["sofa"], family="hypo3d").answer(InferenceRequest("p"), spatial) == "sofa"

    # Random++: one text for a question, its imported rotations (`-1`) and its run rotations alike
    plus = RandomPlusPlus(5, [], family="3dsrbench")
    texts = set()
    for external_id, shown, variant in (("Q1", options, ""), ("Q1-1", options[1:] + options[:1], ""),
                                        ("Q1", options[2:] + options[:2], "2")):
        letter = plus.answer(InferenceRequest("p", choices=shown, variant=variant), Item(external_id=external_id))
        texts.add(shown["ABC".index(letter)])
    assert len(texts) == 1

    recorded = RecordedOutputs({("Q1", "", 0): "B"}, "outputs.jsonl")
    assert recorded.answer(InferenceRequest(""), Item(external_id="Q1")) == "B"
    with pytest.raises(LookupError, match="outputs.jsonl has no output for item 'Q1' variant 'flip'"):
        recorded.answer(InferenceRequest("", variant="flip"), Item(external_id="Q1"))
