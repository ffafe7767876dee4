"""Each family's recipe run live against the loopback OpenAI-compatible server: every request carries
the paper's prompt text byte for byte (../shared/PROTOCOLS.md), the recipe's settings and the
pictures the run shows, and the results come back as labelled rows and ablation tables."""

import io
import json
import re

import pytest
from django.core.management import call_command
from PIL import Image

from benchmarks.services import store_asset
from core import roles
from core.errors import DomainError
from modeleval import recipes
from modeleval.models import ModelSpec, PromptTemplate, Run
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

# PROTOCOLS.md 1.3 (a), Fig. 11 (2D VLM line), and (b), Fig. 12.
FIG11 = ("Given a top-view of a 3D scene, mentally rotate the image to align with the orientation.\n\n"
         "Scene Orientation: {}\n\n"
         "Now, given a context change, imagine how the scene would appear after the change has been applied. Then, "
         "answer a question based on the modified scene.\n\n"
         "Context Change: {} Question: {}\n\n"
         "The answer should be a single word or a short phrase.\n\n"
         "The answer is:")
FIG12 = ("Given a top-view of a 3D scene and a context change, imagine how the scene would appear after the change "
         "has been applied. Then, answer a question based on the modified scene.\n\n"
         "Context Change: {} Question: {}\n\n"
         "The answer should be a single word or a short phrase.\n\n"
         "The answer is:")
# PROTOCOLS.md 1.3 (h): the camera-view prompt of the GPT-4o script at d51a478.
CAMERA = ("Given a top-view of a 3D scene and a reference frame image where the items were on the {} side of the "
          "room, first mentally align the top-view with the frame image.\n\n"
          "Now, given a context change, imagine how the scene would look after the change has been applied. Then, "
          "answer a question based on the changed scene.\n\n"
          "Context Change: {}\nQuestion: {}\n\n"
          "The answer should be a single word or short phrase.\n\n"
          "The answer is:")
# PROTOCOLS.md 2.3 (a): VLMEvalKit's prompt, its last line ending in a space and a newline.
VLMEVALKIT = "Question: {}\nOptions:\nA. {}\nB. {}\nPlease select the correct answer from the options above. \n"
# PROTOCOLS.md 3.3 (a): eval.py.
CAUSAL = "{}\n\nWrite your response into this json template: {{'Reasoning': '<your reasons>', 'Answer': '<Your answer>'}}"
# PROTOCOLS.md 5.3, Fig. 18 (vision-blind) with the single-answer line.
M3VERSE = ("Your task is to answer questions based on the provided videos and options.\n"
           "Question: {}\noptions: A. {}\nB. {}\n"
           "Return ONLY the letter(s) corresponding to the correct option(s) (e.g., A, B, C, or A,C for multiple "
           "correct answers)\nThere is only one correct option for this question.")


def png(colour=(200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 12), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def endpoint_model(endpoint, name, modality, **config) -> ModelSpec:
    return ModelSpec.objects.create(name=name, adapter="openai_compatible", modality=modality,
                                    config={"endpoint": endpoint.url, "model": name, "max_retries": 0, **config})


def launch(recipe, benchmark, models, capture):
    with capture(execute=True):
        runs = recipes.launch_recipe(recipe, benchmark, [model.pk for model in models])
    for run in runs:
        run.refresh_from_db()
        assert run.status == "finished", list(run.predictions.values_list("error", flat=True))
    return runs


def image_parts(request) -> int:
    return sum(part["type"] == "image_url" for part in request["body"]["messages"][0]["content"])


def test_hypo3d_table2_direction_questions_with_and_without_the_world_frame(client, chat_servers,
                                                                          django_capture_on_commit_callbacks):
    direction = ItemFactory(tags={"change_type": "movement", "question_type": ["Direction"]})
    benchmark = direction.benchmark
    ItemFactory(change__scene__benchmark=benchmark, tags={"change_type": "removal", "question_type": ["Semantic"]})
    # not a pure direction question: Table 2 leaves it out
    ItemFactory(change__scene__benchmark=benchmark, tags={"change_type": "removal",
                                                          "question_type": ["Semantic", "Direction"]})
    scene = direction.scene
    scene.meta = {"object_captions": [f"object {n} is here." for n in range(40)]}  # ScanRefer's, imported
    scene.save(update_fields=["meta"])
    store_asset(scene, "topview_semantic", "semantic.png", png(), {})
    # Hypo3D's camera_view/ image of the scene, its side from axis_definition.csv (Table 2, w. camera)
    store_asset(scene, "render", "camera.png", png((30, 200, 30)), {"set": "camera_view", "side": "left"})
    scene.world_frames.create(anchor=scene.scene_objects.first(), side="left",
                              text="The desk was located at the left of the scene.")
    vlm_endpoint, llm_endpoint = chat_servers(reply="window"), chat_servers(reply="window")
    vlm = endpoint_model(vlm_endpoint, "Qwen2-VL-72B-Instruct", "top_view_plain")
    llm = endpoint_model(llm_endpoint, "Llama-3.2-3B-Instruct", "caption_only")
    runs = launch("hypo3d-table2", benchmark, [vlm, llm], django_capture_on_commit_callbacks)
    assert len(runs) == 5 and vlm_endpoint.refused == llm_endpoint.refused == []  # w. camera: the 2D VLM only

    change, question = direction.change.text, direction.question
    assert vlm_endpoint.prompts == [FIG11.format("The desk was located at the left of the scene.", change, question),
                                    FIG12.format(change, question), CAMERA.format("left", change, question)]
    # only the Direction item, as Table 2; the semantic map, then (w. camera) the camera view
    assert [image_parts(request) for request in vlm_endpoint.requests] == [1, 1, 2]
    # Qwen2-VL's evaluate.py: the image, then the text, no system message
    assert [[part["type"] for part in r["body"]["messages"][0]["content"]] for r in vlm_endpoint.requests] == [
        ["image_url", "text"], ["image_url", "text"], ["image_url", "image_url", "text"]]
    # LLM/llama/evaluate.py sends its system message
    assert all(r["body"]["messages"][0] == {"role": "system", "content": "You are a AI assistant for 3D scene "
                                            "understanding. Answer should be a single word or short phrase."}
               for r in llm_endpoint.requests)
    assert all(r["body"]["max_tokens"] == 128 and r["body"]["temperature"] == 0.01 for r in vlm_endpoint.requests)
    # the caption model's ablation prompt names what it is given, not a top view
    without_frame = llm_endpoint.prompts[1]
    assert without_frame.startswith("Given a 3D scene description and a context change, imagine how the scene")
    # the LLM reads 30 of the scene's object captions joined with ". " (§4.2), not its one-line caption
    described = re.search(r"Scene description: (.*?)\n", without_frame).group(1)
    assert len(described.split(". ")) == 30 and "A small office" not in described
    assert all(r["body"]["max_tokens"] == 32 and r["body"]["temperature"] == 0.6 for r in llm_endpoint.requests)

    client.force_login(UserFactory(role=roles.REVIEWER))
    data = client.get(f"/api/v1/benchmarks/{benchmark.slug}/results/").json()
    names = {row["run"]: row["name"] for row in data["rows"] if row["kind"] == "model"}
    assert names[runs[1].pk] == (f"Qwen2-VL-72B-Instruct · paper-fig12 · top_view_semantic · "
                                 f"question_type=={{Direction}} (run {runs[1].pk})")
    condition = next(table for table in data["ablations"] if table["axis"] == "condition")
    assert [(row["model"], row["value"], row["main"]) for row in condition["rows"]] == [
        ("Qwen2-VL-72B-Instruct", "paper-fig11", True), ("Qwen2-VL-72B-Instruct", "paper-fig12", False),
        ("Llama-3.2-3B-Instruct", "paper-fig11", True), ("Llama-3.2-3B-Instruct", "paper-fig12", False)]
    # the w. camera row differs in its inputs too, so it is no row of the condition table
    assert condition["fixed"] == {"subset": "question_type=={Direction}"}


def test_3dsrbench_table2_runs_vanilla_circular_and_flip_beside_random_and_random_plus_plus(
        chat_servers, django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="3dsrbench")
    scene = SceneFactory(benchmark=benchmark)
    store_asset(scene, "image", "photo.png", png())
    item = ItemFactory(benchmark=benchmark, scene=scene, change=None, answer_format="single",
                       question="Is the cup on the left or right of the plate?", choices=["left", "right"],
                       answers=["A"], tags={"subtype": "orientation_on_the_left", "flip": "swap"})
    endpoint = chat_servers(reply="A")
    runs = launch("3dsrbench-table2", benchmark, [endpoint_model(endpoint, "gpt-4o", "image")],
                  django_capture_on_commit_callbacks)
    assert [(run.model.name, run.recipe["entry"]) for run in runs] == [
        ("gpt-4o", "vanilla"), ("gpt-4o", "circular"), ("gpt-4o", "flip"),
        ("Random baseline (seed 0)", "vanilla"), ("Random baseline (seed 0)", "circular"),
        ("Random baseline (seed 0)", "flip"), ("Random++ (seed 0)", "vanilla"), ("Random++ (seed 0)", "circular"),
        ("Random++ (seed 0)", "flip")]
    assert endpoint.refused == []
    assert endpoint.prompts[0] == VLMEVALKIT.format(item.question, "left", "right")
    assert VLMEVALKIT.format(item.question, "right", "left") in endpoint.prompts  # a rotation
    assert all(r["body"]["temperature"] == 0.0 and r["body"]["max_tokens"] == 2048 for r in endpoint.requests)
    assert all(image_parts(request) == 1 for request in endpoint.requests)
    assert {"circular", "flip"} <= set(runs[1].scores["overall"]) | set(runs[2].scores["overall"])


def test_causalspatial_five_independent_repeats_with_the_official_prompt(chat_servers,
                                                                        django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="causalspatial")
    scene = SceneFactory(benchmark=benchmark)
    store_asset(scene, "image", "scene.png", png())
    question = ("If the red ball rolls to the right, will it hit the blue box? Answer by (A) Yes, (B) No or "
                "(C) Not sure.")
    ItemFactory(benchmark=benchmark, scene=scene, change=None, answer_format="single", question=question,
                choices=["Yes", "No", "Not sure"], answers=["A"], external_id="Collision_Level_1_0",
                tags={"task": "collision", "level": "L1"})
    endpoint = chat_servers(reply="{'Reasoning': 'it rolls into it', 'Answer': '(A)'}")
    endpoint.flavour = "vllm"
    model = endpoint_model(endpoint, "Qwen3-VL-8B-Instruct", "image", provider="vllm")
    [run] = launch("causalspatial-table2", benchmark, [model], django_capture_on_commit_callbacks)
    assert endpoint.refused == [] and run.repeats == 5 and run.predictions.count() == 5
    assert set(endpoint.prompts) == {CAUSAL.format(question)}
    bodies = [request["body"] for request in endpoint.requests]
    assert all(b["max_tokens"] == 8192 and "temperature" not in b for b in bodies)  # eval.py sends none
    assert len({b["seed"] for b in bodies}) == 5  # five samples, not one request five times
    assert run.scores["overall"]["accuracy"] == 100.0 and run.scores["overall"]["accuracy_std"] == 0.0


def test_spatial457_levels_each_get_the_papers_prompt(chat_servers, django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="spatial457")
    scene = SceneFactory(benchmark=benchmark)
    store_asset(scene, "image", "scene.png", png())
    questions = {"L1_single": "What is the color of the large bus?",
                 "L5_6d_spatial": "Is the car on the left of the bus from the bus's perspective?"}
    for level, question in questions.items():
        ItemFactory(benchmark=benchmark, scene=scene, change=None, question=question, answers=["Red"],
                    tags={"level": level}, external_id=f"{level}/0")
    endpoint = chat_servers(reply="{'Reasoning': 'r', 'Answer': 'Red'}")
    [run] = launch("spatial457-levels", benchmark, [endpoint_model(endpoint, "gpt-4o", "image")],
                   django_capture_on_commit_callbacks)
    # PROTOCOLS.md 4.2 (a): System: the level's block; User: the question (after the image)
    assert sorted(endpoint.prompts) == sorted(questions.values())  # sent at once: in any order
    assert all([part["type"] for part in r["body"]["messages"][1]["content"]] == ["image_url", "text"]
               for r in endpoint.requests)
    level = {question: tag for tag, question in questions.items()}
    sent = {level[r["body"]["messages"][1]["content"][1]["text"]]: r["body"]["messages"][0]["content"] + "\n\n"
            + r["body"]["messages"][1]["content"][1]["text"] for r in endpoint.requests}
    assert all(r["body"]["messages"][0]["role"] == "system" for r in endpoint.requests)
    # level intro, INSTRUCTIONS:, Step 1 (A or B), Step 2, the level's output line
    intro = ("You are an intelligent chatbot designed to answer questions based on an image. Your task is to analyze "
             "the images, identify attributes of ")
    assert sent["L1_single"].startswith(intro + "the objects and then determine the answer to the question.\n"
                                        "INSTRUCTIONS:\nStep 1: Identify the objects mentioned in the question, "
                                        "noting each object's shape, color, size and their locations.")
    assert sent["L1_single"].endswith("Output your response using this JSON format: { 'Reasoning': '<reasoning>', "
                                      "'Answer': '<answer>'}\n\nWhat is the color of the large bus?")
    assert sent["L5_6d_spatial"].startswith(
        intro + "multiple objects and their spatial relationship from objects' perspective in 3D space, and then "
        "determine the answer to the question.\nINSTRUCTIONS:\nStep 1: Identify the objects mentioned in the "
        "question, noting each object's shape, color, size, and direction which facing at.")
    assert "'direction': '<direction>', ...]\n\nIs the car on the left" in sent["L5_6d_spatial"]
    assert "(3) 'Yes' or 'No' for questions asking 'Is there.'\n" in sent["L5_6d_spatial"]
    assert all(r["body"]["max_tokens"] == 512 and r["body"]["temperature"] == 0.0 for r in endpoint.requests)
    assert run.prompt_templates["by"] == "level" and len(run.prompt_templates["templates"]) == 7


@pytest.mark.django_db(transaction=True)  # the command waits for tasks that run on commit
def test_m3verse_vision_blind_prompt_with_thinking_off_and_the_recipe_from_run_eval(chat_servers, tmp_path,
                                                                                    capsys):
    benchmark = BenchmarkFactory(family="m3verse")
    ItemFactory(benchmark=benchmark, scene=SceneFactory(benchmark=benchmark), change=None, answer_format="single",
                question="Which object moved?", choices=["the sofa", "the lamp"], answers=["B"], tags={})
    endpoint = chat_servers(reply="B")
    endpoint.flavour = "vllm"
    endpoint_model(endpoint, "Qwen3-8B", "caption_only", provider="vllm")
    call_command("run_eval", "--benchmark", benchmark.slug, "--recipe", "m3verse-table2", "--model", "Qwen3-8B",
                 "--timeout", "10")
    assert endpoint.refused == []
    assert endpoint.prompts == [M3VERSE.format("Which object moved?", "the sofa", "the lamp")]
    assert endpoint.requests[0]["body"]["chat_template_kwargs"] == {"enable_thinking": False}
    printed = capsys.readouterr().out
    assert "Qwen3-8B · paper-fig19 (run " in printed and "Random baseline (seed 0)" in printed

    # a team's copy, edited as data: another prompt version, the same recipe machinery
    copy = json.loads(json.dumps(recipes.find("m3verse-table2")))
    copy["prompts"]["paper-fig19"]["text"] = "Edited: {question}\n{choices}"
    copy["baselines"] = []
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(copy))
    call_command("run_eval", "--benchmark", benchmark.slug, "--recipe", str(path), "--model", "Qwen3-8B",
                 "--timeout", "10", "--json")
    assert endpoint.prompts[-1] == "Edited: Which object moved?\nA. the sofa\nB. the lamp"
    assert PromptTemplate.objects.get(family="m3verse", condition="paper-fig19", version=2)
    report = json.loads(capsys.readouterr().out)
    assert report["runs"][0]["recipe"]["name"] == "m3verse-table2"


def test_a_recipe_of_another_family_or_an_unhonoured_setting_launches_nothing(client, chat_servers):
    benchmark = BenchmarkFactory(family="m3verse")
    ItemFactory(benchmark=benchmark, scene=None, change=None, answer_format="single", question="q",
                choices=["a", "b"], answers=["A"], tags={})
    model = endpoint_model(chat_servers(reply="A"), "gemini-2.5-pro", "caption_only")  # an OpenAI-kind endpoint
    client.force_login(UserFactory(role=roles.ADMIN))
    body = {"recipe": "hypo3d-table1", "benchmark": benchmark.slug, "models": [model.pk]}
    response = client.post("/api/v1/recipes/launch/", body, content_type="application/json")
    assert response.status_code == 400 and "recipe" in response.json()
    # Gemini's thinking budget on an endpoint not marked as Gemini is refused, and no run is left behind
    response = client.post("/api/v1/recipes/launch/", {**body, "recipe": "m3verse-table2"},
                           content_type="application/json")
    assert response.status_code == 400 and "thinking_budget" in response.json()["settings"][0]
    assert not Run.objects.exists()
    assert {recipe["name"] for recipe in client.get("/api/v1/recipes/").json()} >= {
        "hypo3d-table1", "hypo3d-table2", "hypo3d-table12", "3dsrbench-table2", "causalspatial-table2",
        "spatial457-levels", "m3verse-table2"}
    with pytest.raises(DomainError, match="No recipe"):
        recipes.find("nope")


@pytest.mark.parametrize("recipe", [
    {"name": "x", "family": "m3verse", "runs": [{"key": "a", "settings": "hot"}]},
    {"name": "x", "family": "m3verse", "runs": [{"key": "a", "condition": "no spaces allowed"}]},
    {"name": "x", "family": "m3verse", "runs": [{"key": "a"}], "model_settings": [{"match": "(", "settings": {}}]},
    {"name": "x", "family": "m3verse", "runs": [{"key": "a"}], "prompts": {"p": {"text": 3}}},
    {"name": "x", "family": "m3verse", "runs": [{"key": "a"}], "baselines": [{}]},
    {"name": "x", "family": "m3verse", "runs": [{"key": "a", "temperature": 2}]},
    7,
])
def test_a_malformed_recipe_is_a_400_naming_the_recipe(client, recipe):
    benchmark = BenchmarkFactory(family="m3verse")
    client.force_login(UserFactory(role=roles.ADMIN))
    model = ModelSpec.objects.create(name="m", adapter="random_baseline")
    response = client.post("/api/v1/recipes/launch/", {"recipe": recipe, "benchmark": benchmark.slug,
                                                       "models": [model.pk]}, content_type="application/json")
    assert response.status_code == 400 and "recipe" in response.json()
