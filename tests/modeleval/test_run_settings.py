"""Every generation setting reaches the request or is refused at launch; repeats are independent
samples (each its own seed, recorded); list-valued tags select subsets; the loopback endpoint is as
strict as the APIs it stands for."""

import json

import pytest

from core import roles
from core.errors import DomainError
from modeleval import services
from modeleval.models import ModelSpec, Prediction
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def endpoint_model(endpoint, name="served-model", **config) -> ModelSpec:
    return ModelSpec.objects.create(name=name, adapter="openai_compatible", modality="caption_only",
                                    config={"endpoint": endpoint.url, "model": name, "max_retries": 0, **config})


def hypo3d_items(n=2):
    first = ItemFactory()
    return [first] + [ItemFactory(change__scene__benchmark=first.benchmark) for _ in range(n - 1)]


def launch(model, benchmark, capture, **options):
    with capture(execute=True):
        run = services.launch_run(model.pk, benchmark, None, **options)
    run.refresh_from_db()
    return run


def test_a_live_run_sends_its_settings_and_a_seed_of_its_own_per_repeat(chat_servers,
                                                                       django_capture_on_commit_callbacks):
    items = hypo3d_items()
    endpoint = chat_servers(reply="window")
    model = endpoint_model(endpoint)
    settings = {"temperature": 0.7, "max_tokens": 2048}
    run = launch(model, items[0].benchmark, django_capture_on_commit_callbacks, repeats=3, settings=settings)
    assert run.status == "finished" and endpoint.refused == []
    bodies = [request["body"] for request in endpoint.requests]
    assert len(bodies) == 6
    assert all(body["temperature"] == 0.7 and body["max_tokens"] == 2048 for body in bodies)
    assert len({json.dumps(body, sort_keys=True) for body in bodies}) == 6  # no two repeats the same request
    seeds = {(p.item_id, p.repeat): p.seed for p in Prediction.objects.filter(run=run)}
    assert len(set(seeds.values())) == 6 and None not in seeds.values()
    assert sorted(seeds.values()) == sorted(body["seed"] for body in bodies)  # recorded as sent

    # the same run again sends the same seeds; another run seed, others
    again = launch(model, items[0].benchmark, django_capture_on_commit_callbacks, repeats=3, settings=settings)
    assert {(p.item_id, p.repeat): p.seed for p in again.predictions.all()} == seeds
    other = launch(model, items[0].benchmark, django_capture_on_commit_callbacks, repeats=3,
                   settings={**settings, "seed": 7})
    assert not set(other.predictions.values_list("seed", flat=True)) & set(seeds.values())


def test_without_run_settings_the_models_defaults_are_sent(chat_servers, django_capture_on_commit_callbacks):
    items = hypo3d_items(1)
    endpoint = chat_servers(reply="window")
    model = endpoint_model(endpoint)
    model.max_new_tokens, model.temperature = 512, 0.2
    model.save()
    launch(model, items[0].benchmark, django_capture_on_commit_callbacks)
    body = endpoint.requests[0]["body"]
    assert body["max_tokens"] == 512 and body["temperature"] == 0.2 and isinstance(body["seed"], int)


def test_repeats_at_temperature_zero_are_a_warning_at_launch(client, chat_servers):
    items = hypo3d_items(1)
    model = endpoint_model(chat_servers(reply="window"))
    client.force_login(UserFactory(role=roles.ADMIN))
    body = {"model": model.pk, "benchmark": items[0].benchmark.slug, "repeats": 3}
    response = client.post("/api/v1/runs/", body, content_type="application/json")
    assert response.status_code == 201 and "temperature 0" in response.json()["warnings"][0]
    sampled = client.post("/api/v1/runs/", {**body, "settings": {"temperature": 0.7}}, content_type="application/json")
    assert sampled.status_code == 201 and sampled.json()["warnings"] == []


@pytest.mark.parametrize(("config", "params", "named"), [
    ({}, {"thinking_budget": 1024}, "thinking_budget"),  # OpenAI takes reasoning_effort
    ({}, {"enable_thinking": False}, "enable_thinking"),  # a vLLM chat-template switch
    ({}, {"reasoning_effort": "low"}, "reasoning_effort"),  # not a reasoning model
    ({"provider": "anthropic"}, {"seed": 3}, "seed"),
    ({"provider": "vllm"}, {"thinking_budget": 128}, "thinking_budget"),
    ({"model": "gpt-5-mini"}, {"temperature": 0.7}, "temperature"),  # reasoning models: the default only
])
def test_a_setting_the_model_cannot_honour_is_a_400_naming_it(client, chat_servers, config, params, named):
    items = hypo3d_items(1)
    model = endpoint_model(chat_servers(reply="window"), **config)
    client.force_login(UserFactory(role=roles.ADMIN))
    body = {"model": model.pk, "benchmark": items[0].benchmark.slug, "settings": params}
    response = client.post("/api/v1/runs/", body, content_type="application/json")
    assert response.status_code == 400 and named in response.json()["settings"][0]
    assert not model.runs.exists()


def test_a_local_checkpoint_refuses_what_generate_cannot_take(client):
    items = hypo3d_items(1)
    model = ModelSpec.objects.create(name="local", adapter="hf_local", config={"checkpoint": "/nowhere"})
    with pytest.raises(DomainError, match="reasoning_effort cannot be honoured by local"):
        services.launch_run(model.pk, items[0].benchmark, None, settings={"reasoning_effort": "low"})


@pytest.mark.parametrize(("flavour", "config", "params", "sent"), [
    ("vllm", {"provider": "vllm"}, {"enable_thinking": False},
     {"chat_template_kwargs": {"enable_thinking": False}}),
    ("anthropic", {"provider": "anthropic"}, {"thinking_budget": 2048, "max_tokens": 8192},
     {"thinking": {"type": "enabled", "budget_tokens": 2048}, "max_tokens": 8192}),
    ("gemini", {"provider": "gemini"}, {"thinking_budget": 128},
     {"extra_body": {"google": {"thinking_config": {"thinking_budget": 128}}}}),
    ("openai", {"model": "gpt-5"}, {"reasoning_effort": "low", "max_tokens": 4096},
     {"reasoning_effort": "low", "max_completion_tokens": 4096}),
])
def test_thinking_controls_go_in_each_providers_shape(chat_servers, django_capture_on_commit_callbacks, flavour,
                                                      config, params, sent):
    items = hypo3d_items(1)
    endpoint = chat_servers(reply="window")
    endpoint.flavour = flavour
    run = launch(endpoint_model(endpoint, name=f"m-{flavour}", **config), items[0].benchmark,
                 django_capture_on_commit_callbacks, settings=params)
    assert endpoint.refused == [] and run.predictions.get().error == ""
    body = endpoint.requests[0]["body"]
    assert {key: body.get(key) for key in sent} == sent
    if config.get("model") == "gpt-5":  # a reasoning model: no max_tokens, no temperature
        assert "max_tokens" not in body and "temperature" not in body


def test_the_loopback_endpoint_refuses_what_the_api_refuses(chat_servers, django_capture_on_commit_callbacks):
    from tests.chat_server import Refused, check_request

    message = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    good = {"model": "m", "messages": [message], "max_tokens": 8, "temperature": 0.5, "seed": 1}
    check_request(good)
    for bad, param in (({**good, "top_k": 5}, "top_k"), ({**good, "temperature": 3}, "temperature"),
                       ({**good, "model": "o3"}, "max_tokens"), ({**good, "messages": []}, "messages"),
                       ({**good, "chat_template_kwargs": {}}, "chat_template_kwargs"),
                       ({**good, "stop": ["a", "b", "c", "d", "e"]}, "stop")):
        with pytest.raises(Refused) as refused:
            check_request(bad)
        assert refused.value.param == param
    check_request({**good, "top_k": 5, "chat_template_kwargs": {"enable_thinking": False}}, "vllm")

    items = hypo3d_items(1)
    endpoint = chat_servers(reply="window")
    model = endpoint_model(endpoint)
    for mode, expected in (("fail_with", "HTTP 500"), ("malformed", "")):
        setattr(endpoint, mode, 500 if mode == "fail_with" else True)
        run = launch(model, items[0].benchmark, django_capture_on_commit_callbacks)
        error = run.predictions.get().error
        assert error and expected in error and run.status == "finished"
        setattr(endpoint, mode, None if mode == "fail_with" else False)


def test_a_list_valued_tag_selects_the_items_that_hold_the_value(django_capture_on_commit_callbacks):
    first = ItemFactory(tags={"change_type": "movement", "question_type": ["Direction", "Scale"]})
    benchmark = first.benchmark
    semantic = ItemFactory(change__scene__benchmark=benchmark, tags={"question_type": ["Semantic"]})
    direction = ItemFactory(change__scene__benchmark=benchmark, tags={"question_type": ["Direction"]})
    plain = ItemFactory(change__scene__benchmark=benchmark, tags={"question_type": "Direction"})
    run = launch(services.ensure_baseline_model(), benchmark, django_capture_on_commit_callbacks,
                 subset={"question_type": ["Direction"]})
    assert set(run.items.values_list("pk", flat=True)) == {first.pk, direction.pk, plain.pk}
    assert semantic.pk not in set(run.predictions.values_list("item_id", flat=True))
    with pytest.raises(DomainError, match="subset"):
        services.launch_run(services.ensure_baseline_model().pk, benchmark, None, subset={"question_type": ["Size"]})
