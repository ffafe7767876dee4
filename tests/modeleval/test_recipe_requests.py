"""#45: each paper's recipe sends every model the request its authors' scripts sent, on the strict
loopback endpoint (tests/chat_server.py refuses what the real endpoint refuses): frames per video per
model, the order of a message's parts and its system turn, the keys left out where the authors sent
none, the tokens per model, image size and detail (../shared/PROTOCOLS.md, with each source)."""

import base64
import io

import pytest
from PIL import Image

from benchmarks.models import AssetRole
from benchmarks.services import store_asset
from core.errors import DomainError
from modeleval import recipes, services
from modeleval.analysis import labels
from modeleval.models import ModelSpec
from modeleval.prompting import generation
from tests.clips import clip_bytes
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory
from tests.modeleval.test_modeleval_hf import checkpoint  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


def png(size=(16, 12)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def server(chat_servers, flavour, reply="B"):
    endpoint = chat_servers(reply=reply)
    endpoint.flavour = flavour
    return endpoint


def endpoint_model(endpoint, name, modality, **config) -> ModelSpec:
    # registered with the defaults a recipe must not inherit where its paper set none
    return ModelSpec.objects.create(name=name, adapter="openai_compatible", modality=modality, max_new_tokens=128,
                                    temperature=0.0, config={"endpoint": endpoint.url, "model": name,
                                                             "max_retries": 0, "frame_size": [32, 24], **config})


def launch(recipe, benchmark, models, capture):
    with capture(execute=True):
        runs = recipes.launch_recipe(recipe, benchmark, [model.pk for model in models])
    for run in runs:
        run.refresh_from_db()
        assert run.status == "finished", list(run.predictions.values_list("error", flat=True))
    return runs


def by_model(endpoints) -> dict:
    return {request["body"]["model"]: request["body"] for endpoint in endpoints for request in endpoint.requests}


def parts(body) -> list[str]:
    """The part types of the user turn, a run of images said once with its count: ['image_url x 4', 'text']."""
    types = [part["type"] for part in [m for m in body["messages"] if m["role"] == "user"][-1]["content"]]
    runs = []
    for kind in types:
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    return [f"{kind} x {n}" if kind == "image_url" else kind for kind, n in runs]


def test_m3verse_table2_sends_each_model_its_frames_per_video_and_no_unstated_setting(
        chat_servers, django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="m3verse")
    scene = SceneFactory(benchmark=benchmark)
    for which in ("before", "after"):  # 10 s each as the meta says: 2 fps is 20 frames, 1 fps 10
        store_asset(scene, AssetRole.VIDEO, f"{which}.mp4", clip_bytes(size="64x48"),
                    {"which": which, "duration": 10.0, "fps": 10.0, "frames": 10})
    ItemFactory(benchmark=benchmark, scene=scene, change=None, answer_format="single", question="Which object moved?",
                choices=["the sofa", "the lamp"], answers=["B"], tags={})
    vllm, openai, gemini = (server(chat_servers, flavour) for flavour in ("vllm", "openai", "gemini"))
    models = [endpoint_model(vllm, "Qwen3-VL-8B-Instruct", "video_frames", provider="vllm"),
              endpoint_model(vllm, "InternVL3_5-8B", "video_frames", provider="vllm"),
              endpoint_model(vllm, "VideoLLaMA3-7B", "video_frames", provider="vllm"),
              endpoint_model(vllm, "Qwen3-VL-235B-A22B-Instruct", "video_frames", provider="vllm"),
              endpoint_model(vllm, "Qwen3-8B", "caption_only", provider="vllm"),
              endpoint_model(openai, "gpt-5", "video_frames"),
              endpoint_model(gemini, "gemini-2.5-pro", "video_frames", provider="gemini")]
    runs = launch("m3verse-table2", benchmark, models, django_capture_on_commit_callbacks)
    assert vllm.refused == openai.refused == gemini.refused == []
    sent = by_model([vllm, openai, gemini])
    # App. B.1: 200 per video for local models, 60 for InternVL3.5 and VideoLLaMA3, GPT-5 200,
    # Gemini-2.5-Pro 2 fps, Qwen3-VL-235B 1 fps; the vision-blind LLM none; frames before the text
    assert {name: parts(body) for name, body in sent.items()} == {
        "Qwen3-VL-8B-Instruct": ["image_url x 400", "text"], "InternVL3_5-8B": ["image_url x 120", "text"],
        "VideoLLaMA3-7B": ["image_url x 120", "text"], "Qwen3-VL-235B-A22B-Instruct": ["image_url x 20", "text"],
        "Qwen3-8B": ["text"], "gpt-5": ["image_url x 400", "text"], "gemini-2.5-pro": ["image_url x 40", "text"]}
    for body in sent.values():  # not stated in the paper: not sent, whatever the registration says
        assert not {"temperature", "max_tokens", "max_completion_tokens", "top_p"} & set(body)
    assert sent["gpt-5"]["reasoning_effort"] == "low"
    assert sent["gemini-2.5-pro"]["extra_body"] == {"google": {"thinking_config": {"thinking_budget": 128}}}
    assert sent["Qwen3-8B"]["chat_template_kwargs"] == {"enable_thinking": False}

    recorded = {run.model.name: run for run in runs}
    assert recorded["gemini-2.5-pro"].inputs == {"fps": 2} and recorded["InternVL3_5-8B"].inputs == {
        "frames_per_video": 60}
    assert recorded["gpt-5"].settings["max_tokens"] is None
    shown = generation.sent_settings(recorded["gpt-5"].model, recorded["gpt-5"].settings)
    assert shown["temperature"] == shown["max_tokens"] == "provider default"
    assert services.run_progress(recorded["gpt-5"])["request_settings"] == shown
    # the frames each model's paper setting gives it keep the rows of Table 2 comparable
    assert len({labels.comparable_key(run) for run in runs if run.model.modality == "video_frames"}) == 1


def test_causalspatial_sends_the_image_first_no_temperature_and_gpt_no_token_limit(
        chat_servers, django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="causalspatial")
    scene = SceneFactory(benchmark=benchmark)
    store_asset(scene, "image", "scene.png", png())
    ItemFactory(benchmark=benchmark, scene=scene, change=None, answer_format="single",
                question="If the ball rolls right, will it hit the box? Answer by (A) Yes, (B) No or (C) Not sure.",
                choices=["Yes", "No", "Not sure"], answers=["A"], external_id="Collision_Level_1_0",
                tags={"task": "collision", "level": "L1"})
    reply = "{'Reasoning': 'r', 'Answer': '(A)'}"
    vllm, openai = server(chat_servers, "vllm", reply), server(chat_servers, "openai", reply)
    models = [endpoint_model(vllm, "Qwen3-VL-8B-Instruct", "image", provider="vllm"),
              endpoint_model(openai, "gpt-5", "image"), endpoint_model(openai, "gpt-4o", "image")]
    launch("causalspatial-table2", benchmark, models, django_capture_on_commit_callbacks)
    assert vllm.refused == openai.refused == []
    bodies = [request["body"] for request in vllm.requests + openai.requests]
    assert len(bodies) == 15 and all(parts(body) == ["image_url x 1", "text"] for body in bodies)  # eval.py
    assert all("temperature" not in body and len(body["messages"]) == 1 for body in bodies)
    qwen = [body for body in bodies if body["model"] == "Qwen3-VL-8B-Instruct"]
    assert all(body["max_tokens"] == 8192 for body in qwen)
    gpt = [body for body in bodies if body["model"].startswith("gpt")]
    assert all(not {"max_tokens", "max_completion_tokens"} & set(body) for body in gpt)  # eval.py sets none
    assert len({body["seed"] for body in qwen}) == 5


def test_3dsrbench_sends_vlmevalkits_image_size_and_detail_per_gpt_model_images_first(
        chat_servers, django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="3dsrbench")
    scene = SceneFactory(benchmark=benchmark)
    store_asset(scene, "image", "photo.png", png((1024, 768)))
    ItemFactory(benchmark=benchmark, scene=scene, change=None, answer_format="single",
                question="Is the cup on the left or right of the plate?", choices=["left", "right"], answers=["A"],
                tags={"subtype": "orientation_on_the_left", "flip": "swap"})
    endpoint = server(chat_servers, "openai", "A")
    recipe = recipes.find("3dsrbench-table2")
    recipe = {**recipe, "runs": recipe["runs"][:1], "baselines": []}
    launch(recipe, benchmark, [endpoint_model(endpoint, "gpt-4o", "image"),
                               endpoint_model(endpoint, "gpt-4o-mini", "image")], django_capture_on_commit_callbacks)
    assert endpoint.refused == []
    sent = by_model([endpoint])
    assert all(parts(body) == ["image_url x 1", "text"] for body in sent.values())
    assert all(body["temperature"] == 0.0 and body["max_tokens"] == 2048 for body in sent.values())
    small, full = (sent[name]["messages"][0]["content"][0]["image_url"] for name in ("gpt-4o", "gpt-4o-mini"))
    assert small["detail"] == "low" and small["url"].startswith("data:image/jpeg;base64,")
    assert Image.open(io.BytesIO(base64.b64decode(small["url"].split(",", 1)[1]))).size == (512, 384)
    assert full["detail"] == "high" and full["url"].startswith("data:image/png;base64,")


def test_hypo3d_gpt4o_gets_its_scripts_system_message_and_the_text_before_the_map(
        chat_servers, django_capture_on_commit_callbacks):
    item = ItemFactory(tags={"change_type": "movement", "question_type": ["Direction"]})
    store_asset(item.scene, "topview_semantic", "semantic.png", png(), {})
    store_asset(item.scene, "topview_plain", "plain.png", png(), {})
    endpoint = server(chat_servers, "openai", "window")
    recipe = recipes.find("hypo3d-table1")
    launch({**recipe, "runs": recipe["runs"][:1]}, item.benchmark,
           [endpoint_model(endpoint, "gpt-4o", "top_view_plain")], django_capture_on_commit_callbacks)
    [body] = [request["body"] for request in endpoint.requests]
    assert body["messages"][0] == {"role": "system", "content": "You are a AI assistant for 3D scene "
                                   "understanding. Answer should be a single word or short phrase."}
    assert parts(body) == ["text", "image_url x 1"]  # 2D-VLM/GPT4o/evaluate.py
    assert body["max_tokens"] == 1024 and body["temperature"] == 1.0  # Table 8


@pytest.mark.parametrize("asked", [{"temperature": None, "seed": None}, {"max_tokens": None}])
def test_a_null_setting_is_recorded_and_left_out_of_the_request(asked):
    assert generation.checked_settings(asked) == asked
    fields = generation.chat_fields({"temperature": 0.5, "max_tokens": 64, "seed": 3, **asked})
    assert not set(asked) & set(fields)
    assert "max_completion_tokens" not in generation.chat_fields({"max_tokens": None}, reasoning_model=True)


@pytest.mark.parametrize("asked", [{"layout": {"images": "sideways"}}, {"layout": {"system": ""}},
                                      {"layout": {"system": "s", "system_from_prompt": True}},
                                      {"image_detail": "medium"}, {"image_size": 0}])
def test_a_malformed_layout_or_image_setting_is_refused(asked):
    with pytest.raises(DomainError):
        generation.checked_settings(asked)


def test_a_subset_requiring_a_list_tag_to_equal_a_set_takes_only_those_items():
    pure = ItemFactory(tags={"question_type": ["Direction"]})
    both = ItemFactory(change__scene__benchmark=pure.benchmark, tags={"question_type": ["Scale", "Direction"]})
    ItemFactory(change__scene__benchmark=pure.benchmark, tags={"question_type": ["Direction", "Semantic"]})
    items = services.approved_items(pure.benchmark)
    run_options = services.run_options
    exactly = run_options.checked_subset({"question_type": {"equals": ["Direction"]}})
    assert list(run_options.subset_filter(items, exactly)) == [pure]
    pair = run_options.checked_subset({"question_type": {"equals": ["Direction", "Scale"]}})
    assert list(run_options.subset_filter(items, pair)) == [both]  # a set: in any order
    with pytest.raises(DomainError):
        run_options.checked_subset({"question_type": {"equals": []}})


def test_3dsrbench_table2_runs_on_the_published_file_asking_its_stored_rotations_and_mirrored_rows(
        chat_servers, django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="3dsrbench")
    scene = SceneFactory(benchmark=benchmark)
    store_asset(scene, "image", "photo.png", png())
    rows = {"VIN6MS3J": (["left", "right"], "A", {}), "VIN6MS3J-1": (["right", "left"], "B", {}),
            "VIN6MS3J-flip": (["left", "right"], "B", {"image_variant": "flipped"}),
            "VIN6MS3J-flip-1": (["right", "left"], "A", {"image_variant": "flipped"})}
    for qid, (choices, answer, tags) in rows.items():  # as VLMEvalKit's TSV holds them (importers/threedsrbench)
        ItemFactory(benchmark=benchmark, scene=scene, change=None, answer_format="single", external_id=qid,
                    question="Is the cup on the left or right of the plate?", choices=choices, answers=[answer],
                    tags={"category": "orientation", "subtype": "orientation_on_the_left", **tags})
    endpoint = server(chat_servers, "openai", "A")
    runs = launch("3dsrbench-table2", benchmark, [endpoint_model(endpoint, "gpt-4o-mini", "image")],
                  django_capture_on_commit_callbacks)
    asked = {run.recipe["entry"]: sorted(run.items.values_list("external_id", flat=True))
             for run in runs if run.model.name == "gpt-4o-mini"}
    assert asked == {"vanilla": sorted(rows), "circular": ["VIN6MS3J", "VIN6MS3J-1"],
                     "flip": ["VIN6MS3J", "VIN6MS3J-flip"]}
    assert endpoint.refused == [] and len(endpoint.requests) == 8  # each stored row once, no variant made
    circular = next(run for run in runs if run.recipe["entry"] == "circular")
    assert set(circular.predictions.values_list("variant", flat=True)) == {""}
    assert circular.protocol == {"circular": True, "flip": False} and circular.scores["overall"]["circular"] == 0.0
    flip = next(run for run in runs if run.recipe["entry"] == "flip")
    assert flip.scores["overall"]["flip"] == 0.0 and flip.scores["overall"]["vanilla"] == 50.0


def test_3dsrbench_names_its_judge_or_says_its_table_is_exact_matching_only(
        chat_servers, django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="3dsrbench")
    ItemFactory(benchmark=benchmark, scene=None, change=None, answer_format="single", question="Is it left?",
                choices=["left", "right"], answers=["A"], tags={})
    model = endpoint_model(server(chat_servers, "openai", "A"), "gpt-4o-mini", "caption_only")
    judge = endpoint_model(server(chat_servers, "openai", "A"), "gpt-4o-mini-judge", "caption_only")
    recipe = recipes.find("3dsrbench-table2")
    recipe = {**recipe, "runs": recipe["runs"][:1], "baselines": []}
    [plain] = launch(recipe, benchmark, [model], django_capture_on_commit_callbacks)
    assert plain.recipe["extraction"] == recipes.NO_JUDGE
    with django_capture_on_commit_callbacks(execute=True):
        [judged] = recipes.launch_recipe(recipe, benchmark, [model.pk], judge_model=judge.pk)
    assert judged.recipe["extraction"] == "by rule, then the judge gpt-4o-mini-judge"


def test_a_local_checkpoint_takes_the_layout_and_leaves_unsent_settings_to_its_generation_config(checkpoint):  # noqa: F811
    from modeleval.clients.adapters import HFLocal
    from modeleval.prompting.prompts import InferenceRequest

    adapter = HFLocal(checkpoint, max_new_tokens=3, device="cpu")
    chats, generated = [], []
    template, generate = adapter.processor.apply_chat_template, adapter.model.generate
    adapter.processor.apply_chat_template = lambda messages, **kw: chats.append(messages) or template(messages, **kw)
    adapter.model.generate = lambda **kw: generated.append(set(kw)) or generate(**{"max_new_tokens": 3, **kw})
    layout = {"images": "after_text", "system": "You are a AI assistant for 3D scene understanding."}
    request = InferenceRequest(prompt="left or right", images=[png()],
                               params={"temperature": None, "max_tokens": None, "layout": layout})
    assert isinstance(adapter.answer(request, ItemFactory()), str)
    assert chats[0] == [{"role": "system", "content": layout["system"]},
                        {"role": "user", "content": [{"type": "text", "text": "left or right"}, {"type": "image"}]}]
    assert not {"max_new_tokens", "do_sample", "temperature", "top_p"} & generated[0]  # its generation config


def test_hypo3d_text_models_read_30_object_captions_of_a_scannet_scene_and_a_3rscan_scenes_caption(
        chat_servers, django_capture_on_commit_callbacks):
    scannet = ItemFactory(tags={"change_type": "movement", "question_type": ["Direction"]})
    scannet.scene.meta = {"object_captions": [f"object {n} is here." for n in range(50)]}
    scannet.scene.save(update_fields=["meta"])
    rscan = ItemFactory(change__scene__benchmark=scannet.benchmark, benchmark=scannet.benchmark,
                        change__scene__external_id="0cac7578-8d6f-2d13-8c2d-bfa7a04f8af3",
                        change__scene__caption="A bedroom with a bed and a wardrobe.",
                        question="Which furniture is closest to the wardrobe?",
                        tags={"change_type": "removal", "question_type": ["Semantic"]})
    endpoint = server(chat_servers, "openai", "bed")
    recipe = recipes.find("hypo3d-table1")
    [run] = launch({**recipe, "runs": recipe["runs"][:1]}, scannet.benchmark,
                   [endpoint_model(endpoint, "Llama-3.2-3B-Instruct", "caption_only")],
                   django_capture_on_commit_callbacks)
    assert run.inputs == {"object_captions": 30} and labels.differing_inputs(run) == {}
    described = {item.pk: prompt.split("Scene description: ")[1].split("\n")[0] for prompt in endpoint.prompts
                 for item in (scannet, rscan) if f"Question: {item.question}" in prompt}
    assert len(described[scannet.pk].split(". ")) == 30
    assert described[rscan.pk] == "A bedroom with a bed and a wardrobe."  # captions[0], as imported
