"""#45: Hypo3D's missing conditions, run as the paper ran them on the strict loopback endpoint
(tests/chat_server.py): Table 2's "w. camera" (the scene's camera-view image after the map, its side
in the prompt, 2D VLMs only), Table 14 (the top view alone vs the top view then the views around the
room, on sampled scenes), Table 1's tokens and layout per model; and the docs' recipe table, written
from the recipe declarations, every setting with its source."""

import base64
import io
from pathlib import Path

import pytest
from django.core.management import call_command
from PIL import Image

from benchmarks.models import AssetRole
from benchmarks.services import store_asset
from core.errors import DomainError
from modeleval import recipes
from modeleval.models import Run
from modeleval.recipes import settings_table
from tests.chat_server import user_text
from tests.factories import BenchmarkFactory, ItemFactory
from tests.modeleval.test_recipe_requests import by_model, endpoint_model, launch, parts, server

pytestmark = pytest.mark.django_db

RED, GREEN, BLUE = (200, 30, 30), (30, 200, 30), (30, 30, 200)
SYSTEM = "You are a AI assistant for 3D scene understanding. Answer should be a single word or short phrase."
# PROTOCOLS.md 1.3 (h): the GPT-4o script at d51a478, `{}` #1 the room side of camera_view/axis_definition.csv.
CAMERA = ("Given a top-view of a 3D scene and a reference frame image where the items were on the {} side of the room, "
          "first mentally align the top-view with the frame image.\n\n"
          "Now, given a context change, imagine how the scene would look after the change has been applied. Then, "
          "answer a question based on the changed scene.\n\n"
          "Context Change: {}\nQuestion: {}\n\n"
          "The answer should be a single word or short phrase.\n\n"
          "The answer is:")


def png(colour, size=(16, 12)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def colours(body) -> list[tuple]:
    """The colour of each picture of the user turn, in order."""
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    pictures = [part["image_url"]["url"].split(",", 1)[1] for part in user if part["type"] == "image_url"]
    return [Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB").getpixel((0, 0)) for data in pictures]


def direction_item(benchmark=None, **scene):
    extra = {"change__scene__benchmark": benchmark, "benchmark": benchmark} if benchmark else {}
    item = ItemFactory(tags={"change_type": "movement", "question_type": ["Direction"]},
                       **{f"change__scene__{k}": v for k, v in scene.items()}, **extra)
    item.scene.meta = {"object_captions": [f"object {n} is here." for n in range(40)]}
    item.scene.save(update_fields=["meta"])
    store_asset(item.scene, AssetRole.TOPVIEW_SEMANTIC, "semantic.png", png(RED), {})
    return item


def test_hypo3d_table2_w_camera_sends_the_camera_view_after_the_map_with_its_side_to_2d_vlms_only(
        chat_servers, django_capture_on_commit_callbacks):
    item = direction_item()
    store_asset(item.scene, AssetRole.RENDER, "camera.png", png(GREEN), {"set": "camera_view", "side": "back"})
    endpoint = server(chat_servers, "openai", "window")
    models = [endpoint_model(endpoint, "Qwen2-VL-72B-Instruct", "top_view_plain"),
              endpoint_model(endpoint, "gpt-4o", "top_view_plain"),
              endpoint_model(endpoint, "Llama-3.2-3B-Instruct", "caption_only")]
    runs = launch("hypo3d-table2", item.benchmark, models, django_capture_on_commit_callbacks)
    assert endpoint.refused == []
    # Table 2: w. camera for Qwen2-VL and GPT-4o; "-" for Llama 3.2
    assert [(run.model.name, run.recipe["entry"]) for run in runs] == [
        ("Qwen2-VL-72B-Instruct", "w-anchor"), ("Qwen2-VL-72B-Instruct", "wo-frame"),
        ("Qwen2-VL-72B-Instruct", "w-camera"), ("gpt-4o", "w-anchor"), ("gpt-4o", "wo-frame"),
        ("gpt-4o", "w-camera"), ("Llama-3.2-3B-Instruct", "w-anchor"), ("Llama-3.2-3B-Instruct", "wo-frame")]
    camera = {body["model"]: body for body in (r["body"] for r in endpoint.requests)
              if user_text(body) == CAMERA.format("back", item.change.text, item.question)}
    assert set(camera) == {"Qwen2-VL-72B-Instruct", "gpt-4o"}
    # GPT-4o script @ d51a478: its system message, the text, the top view, then the camera view
    assert camera["gpt-4o"]["messages"][0] == {"role": "system", "content": SYSTEM}
    assert parts(camera["gpt-4o"]) == ["text", "image_url x 2"] and colours(camera["gpt-4o"]) == [RED, GREEN]
    assert camera["gpt-4o"]["max_tokens"] == 1024 and camera["gpt-4o"]["temperature"] == 1.0
    # Qwen2-VL's evaluate.py: the images first (the map, then the camera view), no system message
    qwen = camera["Qwen2-VL-72B-Instruct"]
    assert parts(qwen) == ["image_url x 2", "text"] and colours(qwen) == [RED, GREEN] and len(qwen["messages"]) == 1
    assert qwen["max_tokens"] == 128 and qwen["temperature"] == 0.01
    w_camera = next(run for run in runs if run.recipe["entry"] == "w-camera")
    assert w_camera.inputs == {"camera_view": True} and w_camera.prompt_template.condition == "paper-camera-view"


def test_w_camera_is_refused_naming_the_scene_without_a_camera_view_and_nothing_is_launched():
    item = direction_item(external_id="scene0011_00")
    qwen = endpoint_model(type("Endpoint", (), {"url": "http://127.0.0.1:9/v1"}), "Qwen2-VL-7B-Instruct",
                          "top_view_plain")
    with pytest.raises(DomainError, match="Scene scene0011_00 has no camera view") as refused:
        recipes.launch_recipe("hypo3d-table2", item.benchmark, [qwen.pk])
    assert '"set": "camera_view"' in refused.value.message and refused.value.field == "inputs"
    assert not Run.objects.exists()
    store_asset(item.scene, AssetRole.RENDER, "camera.png", png(GREEN), {"set": "camera_view", "side": "above"})
    with pytest.raises(DomainError, match="has no camera view"):  # a side the paper does not name is none
        recipes.launch_recipe("hypo3d-table2", item.benchmark, [qwen.pk])


def scanned_scene(benchmark, external_id: str):
    """A scene with a semantic map and its stored multi_view:4 renders (the scan is not read again)."""
    item = direction_item(benchmark, external_id=external_id)
    store_asset(item.scene, AssetRole.POINT_CLOUD, "scan.ply", b"ply\n", {})
    for index, colour in enumerate([BLUE, GREEN, (90, 90, 90), (250, 250, 0)]):
        store_asset(item.scene, AssetRole.RENDER, f"multi_view-4-{index}.png", png(colour),
                    {"set": "multi_view:4", "index": index})
    return item


@pytest.mark.django_db(transaction=True)  # the command waits for tasks that run on commit
def test_hypo3d_table14_from_run_eval_top_view_alone_vs_the_top_view_then_the_views(chat_servers, capsys):
    benchmark = BenchmarkFactory(family="hypo3d")
    items = [scanned_scene(benchmark, f"scene000{n}_00") for n in range(2)]
    endpoint = chat_servers(reply="window")
    endpoint_model(endpoint, "Qwen2-VL-7B-Instruct", "top_view_plain")
    call_command("run_eval", "--benchmark", benchmark.slug, "--recipe", "hypo3d-table14", "--model",
                 "Qwen2-VL-7B-Instruct", "--timeout", "20")
    assert endpoint.refused == [] and len(endpoint.requests) == 4
    top, multi = Run.objects.filter(model__name="Qwen2-VL-7B-Instruct").order_by("pk")
    assert top.status == multi.status == "finished"
    assert (top.recipe["entry"], top.visual_input, multi.recipe["entry"], multi.visual_input) == (
        "top", "top_view_semantic", "multi", "multi_view:4")
    sent = {run.pk: [r["body"] for r in endpoint.requests if user_text(r["body"]).startswith(intro)]
            for run, intro in ((top, "Given a top-view"), (multi, "Given a 3D scene"))}
    # App. B.3.5: the top view only; top, then the views around the room (the semantic map first)
    assert all(parts(body) == ["image_url x 1", "text"] and colours(body) == [RED] for body in sent[top.pk])
    assert all(parts(body) == ["image_url x 5", "text"] and colours(body) == [RED, BLUE, GREEN, (90, 90, 90),
                                                                                 (250, 250, 0)]
               for body in sent[multi.pk])
    assert len(sent[multi.pk]) == 2 and all(b["max_tokens"] == 128 and b["temperature"] == 0.01
                                            for b in sent[multi.pk])
    assert multi.inputs["map_first"] == "top_view_semantic"
    assert multi.recipe["scene_sample"] == {"scenes": 50, "seed": 0, "drawn": ["scene0000_00", "scene0001_00"]}
    assert sorted(multi.items.values_list("pk", flat=True)) == sorted(item.pk for item in items)
    assert "Qwen2-VL-7B-Instruct · paper-fig11 · multi_view:4" in capsys.readouterr().out


def test_a_scene_sample_scores_one_run_on_the_drawn_scenes_only(chat_servers, django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="hypo3d")
    items = [scanned_scene(benchmark, f"scene000{n}_00") for n in range(3)]
    recipe = recipes.find("hypo3d-table14")
    recipe["runs"][1]["scene_sample"] = {"scenes": 2, "seed": 0}
    endpoint = chat_servers(reply="window")
    top, multi = launch(recipe, benchmark, [endpoint_model(endpoint, "LLaVA-OneVision-72B", "top_view_plain")],
                        django_capture_on_commit_callbacks)
    drawn = multi.recipe["scene_sample"]["drawn"]
    assert len(drawn) == 2 and top.items.count() == 3  # the Top row is Table 1's, over every item
    assert sorted(multi.items.values_list("pk", flat=True)) == sorted(i.pk for i in items if i.scene.external_id in drawn)
    again = recipes.launch_recipe(recipe, benchmark, [top.model.pk])[1]
    assert again.recipe["scene_sample"]["drawn"] == drawn  # seeded
    assert all(r["body"]["max_tokens"] == 128 and r["body"]["temperature"] == 0.7 for r in endpoint.requests)
    with pytest.raises(DomainError, match="A scene sample is"):
        recipe["runs"][1]["scene_sample"] = {"scenes": 0}
        recipes.launch_recipe(recipe, benchmark, [top.model.pk])


def test_hypo3d_table1_sends_each_2d_vlm_its_table_8_tokens_and_its_scripts_layout(
        chat_servers, django_capture_on_commit_callbacks):
    item = direction_item()
    openai, anthropic = server(chat_servers, "openai", "window"), server(chat_servers, "anthropic", "window")
    models = [endpoint_model(anthropic, "claude-3-5-sonnet-20241022", "top_view_plain", provider="anthropic"),
              endpoint_model(openai, "llava-onevision-qwen2-72b-ov", "top_view_plain"),
              endpoint_model(openai, "Qwen2-VL-7B-Instruct", "top_view_plain")]
    recipe = recipes.find("hypo3d-table1")
    launch({**recipe, "runs": recipe["runs"][1:]}, item.benchmark, models, django_capture_on_commit_callbacks)
    assert openai.refused == anthropic.refused == []
    sent = by_model([openai, anthropic])
    claude = sent["claude-3-5-sonnet-20241022"]
    # 2D-VLM/Claude/evaluate.py: its system field says "an"; the image before the text; Table 8: 40 / 1.0
    assert claude["messages"][0] == {"role": "system", "content": SYSTEM.replace("a AI", "an AI")}
    assert parts(claude) == ["image_url x 1", "text"] and (claude["max_tokens"], claude["temperature"]) == (40, 1.0)
    for name, tokens, temperature in (("llava-onevision-qwen2-72b-ov", 128, 0.7), ("Qwen2-VL-7B-Instruct", 128, 0.01)):
        body = sent[name]
        assert parts(body) == ["image_url x 1", "text"] and len(body["messages"]) == 1
        assert (body["max_tokens"], body["temperature"]) == (tokens, temperature)


def test_the_docs_recipe_table_is_the_commands_output_and_every_declared_setting_has_a_source(capsys):
    call_command("recipe_table")
    assert capsys.readouterr().out == (Path(__file__).parents[2] / "docs" / "RECIPES.md").read_text(encoding="utf-8")
    assert {recipe["name"]: settings_table.unsourced(recipe) for recipe in recipes.shipped()} == {
        recipe["name"]: [] for recipe in recipes.shipped()}
    written = settings_table.markdown(recipes.shipped())
    assert "| run `w-camera` | camera_view | true |" in written and "## `hypo3d-table14` (version 1)" in written
    assert "| `internvl-?3[._]?5\\|videollama-?3` · shown video_frames | frames_per_video | 60 |" in written
    assert "| every run | temperature | unset (provider default) | eval.py @ 3f4ca5b sends none" in written
    unsourced = recipes.find("hypo3d-table15")
    unsourced["runs"][0].pop("sources")
    unsourced["model_settings"][0].pop("source")
    assert settings_table.unsourced(unsourced) == ["`llama-?3\\.2`: max_tokens", "`llama-?3\\.2`: temperature",
                                                   "run `captions-30`: object_captions"]
