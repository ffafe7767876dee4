"""#26 run inputs against the loopback OpenAI-compatible server: M3-Verse's frame-count sweep (frames per
video as a run setting, the sweep as a table in the API and a line chart on the results page), the
chained caption-then-reason run (HCTR: captions stored once and reused by every reasoning model), runs
augmented with per-item frames imported from elsewhere (CausalSpatial's COW), and recipes launched from
the manage page."""

import io
import json
import re

import pytest
from django.core.management import call_command
from PIL import Image

from benchmarks.models import AssetRole
from benchmarks.services import store_asset
from core import roles
from modeleval import recipes, services
from modeleval.analysis import labels
from modeleval.models import ChainOutput, ItemFrame, ModelSpec, Run
from tests.chat_server import user_text
from tests.clips import clip_bytes
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

# PROTOCOLS.md 5.3, Figs. 20-22 (the placeholders filled).
FIG20 = ("This is a video clip segment from a video.\nTotal video duration: {}\nThis video clip segment duration "
         "time: {}\nPlease describe the video content in detail.\nFocus on the environment spatial layout, objects, "
         "including their spatial layout, detailed information, and the flow of the video.\nPlease describe in "
         "clear and concise language.")
FIG21 = ("Please synthesize the following descriptions of different segments of a video into a single, coherent, "
         "and detailed overall caption for the entire video.\nSegment Descriptions:\n{}\nFocus on the environment "
         "spatial layout, objects, including their spatial layout, detailed information, and the flow of the video."
         "\nPlease describe in clear and concise language.")
FIG22 = ("Based on the following context information, answer the question: Context: {}\nQuestion: {}\nOptions: {}\n"
         "Return ONLY the option letter(s) (e.g., \u201cA\u201d, \u201cB\u201d, \u201cC\u201d). For multiple correct "
         "options, concatenate the letters (e.g., \u201cABC\u201d). AVOID ANY OTHER OUTPUT CONTENT.")
# PROTOCOLS.md 3.3 (b): eval.py --COW.
COW = ("{}Note that, the first image is the initial state. The subsequent images are simulated scenarios according "
       "to the first image and motion context provided in the question. These two images might help you to analyze "
       "and reason the question.\n\nWrite your response into this json template: {{'Reasoning': '<your reasons>', "
       "'Answer': '<Your answer>'}}")


def png(colour=(200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 12), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def endpoint_model(endpoint, name, modality="video_frames", **config) -> ModelSpec:
    return ModelSpec.objects.create(name=name, adapter="openai_compatible", modality=modality,
                                    config={"endpoint": endpoint.url, "model": name, "max_retries": 0,
                                            "frame_size": [32, 24], **config})


def image_parts(request) -> int:
    return sum(part["type"] == "image_url" for part in request["body"]["messages"][0]["content"])


def finished(runs):
    for run in runs:
        run.refresh_from_db()
        assert run.status == "finished", list(run.predictions.values_list("error", flat=True))
    return runs


@pytest.fixture
def m3verse():
    benchmark = BenchmarkFactory(family="m3verse")
    scene = SceneFactory(benchmark=benchmark)
    for which, pattern in (("before", "testsrc"), ("after", "smptebars")):
        store_asset(scene, AssetRole.VIDEO, f"{which}.mp4", clip_bytes(pattern=pattern, size="64x48"),
                    {"which": which, "duration": 1.0, "fps": 10.0, "frames": 10})
    item = ItemFactory(benchmark=benchmark, scene=scene, change=None, answer_format="single",
                       question="Which object moved?", choices=["the sofa", "the lamp"], answers=["B"], tags={})
    return benchmark, item


def test_frame_count_sweep_sends_each_count_and_is_a_table_and_a_line_chart(client, m3verse, chat_servers,
                                                                           django_capture_on_commit_callbacks):
    benchmark, _ = m3verse
    endpoint = chat_servers(reply="B")
    models = [endpoint_model(endpoint, "Qwen3-VL-4B-Instruct"), endpoint_model(endpoint, "Video-XL-2")]
    sweep = json.loads(json.dumps(recipes.find("m3verse-frame-sweep")))
    sweep["runs"] = [{"key": f"frames-{n}", "inputs": {"frames_per_video": n}} for n in (4, 2, 6)]
    with django_capture_on_commit_callbacks(execute=True):
        runs = recipes.launch_recipe(sweep, benchmark, [model.pk for model in models])
    finished(runs)
    assert endpoint.refused == []
    # two videos, each sampled at the run's count; the paper's Fig. 19 prompt
    assert [image_parts(request) for request in endpoint.requests] == [8, 4, 12, 8, 4, 12]
    assert endpoint.prompts[0].startswith("Your task is to answer questions based on the provided videos and options.")
    assert [run.inputs for run in runs[:3]] == [{"frames_per_video": 4}, {"frames_per_video": 2},
                                                {"frames_per_video": 6}]

    client.force_login(UserFactory(role=roles.ADMIN))
    data = client.get(f"/api/v1/benchmarks/{benchmark.slug}/results/").json()
    names = {row["run"]: row["name"] for row in data["rows"] if row["kind"] == "model"}
    assert names[runs[1].pk] == f"Qwen3-VL-4B-Instruct · paper-fig19 · frames_per_video=2 (run {runs[1].pk})"
    assert data["sweep"]["x"] == "frames per video"
    assert [(line["name"], [p["frames"] for p in line["points"]]) for line in data["sweep"]["series"]] == [
        ("Qwen3-VL-4B-Instruct", [2, 4, 6]), ("Video-XL-2", [2, 4, 6])]
    assert all(p["value"] == 100.0 for line in data["sweep"]["series"] for p in line["points"])
    inputs = next(table for table in data["ablations"] if table["axis"] == "inputs")
    assert [(row["value"], row["main"]) for row in inputs["rows"][:3]] == [
        ("frames_per_video=4", True), ("frames_per_video=2", False), ("frames_per_video=6", False)]

    page = client.get(f"/results/{benchmark.slug}/").content.decode()
    assert 'id="sweep-chart"' in page and page.count('class="sweep-series"') == 2
    assert page.count("<polyline") == 2 and 'id="sweep-table"' in page and "6 frames</th>" in page


def test_fps_samples_by_duration_and_a_frame_setting_needs_video(m3verse, chat_servers,
                                                                 django_capture_on_commit_callbacks):
    benchmark, _ = m3verse
    endpoint = chat_servers(reply="B")
    model = endpoint_model(endpoint, "gemini-2.5-pro")
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(model.pk, benchmark, None, inputs={"fps": 3})
    finished([run])
    assert image_parts(endpoint.requests[0]) == 6  # 1 s at 3 fps, each video
    caption = endpoint_model(endpoint, "llm", "caption_only")
    for inputs, message in (({"frames_per_video": 4}, "frames_per_video samples video frames"),
                            ({"frames_per_video": 0}, "frames_per_video is a whole number"),
                            ({"fps": 2, "frames_per_video": 4}, "give one"), ({"n": 1}, "Unknown input")):
        shown = "caption_only" if "samples" in message else "video_frames"
        with pytest.raises(Exception, match=message) as error:
            services.launch_run((caption if shown == "caption_only" else model).pk, benchmark, None, inputs=inputs)
        assert error.value.field == "inputs"


def test_chained_run_captions_once_and_a_second_reasoning_model_reuses_them(m3verse, chat_servers,
                                                                           django_capture_on_commit_callbacks):
    benchmark, item = m3verse
    captioner = chat_servers(reply="a caption")
    captioner.contents = ["before clip 1", "before clip 2", "before summary", "after clip 1", "after clip 2",
                          "after summary"]
    first, second = chat_servers(reply="B"), chat_servers(reply="A")
    caption_model = endpoint_model(captioner, "Qwen3-VL-8B-Instruct")
    reasoners = [endpoint_model(first, "Qwen3-8B", "caption_only"), endpoint_model(second, "Qwen3-32B", "caption_only")]
    recipe = recipes.find("m3verse-hctr")
    recipes.install_prompts(recipe)
    chain = {"caption_model": caption_model.name, "clips": 2, "clip_frames": 3}
    runs = []
    for model in reasoners:
        with django_capture_on_commit_callbacks(execute=True):
            runs.append(services.launch_run(model.pk, benchmark, None, condition="hctr-answer",
                                            visual_input="video_frames", inputs={"chain": chain}))
    finished(runs)
    assert captioner.refused == first.refused == second.refused == []
    assert captioner.prompts == [FIG20.format("1.0s", "0.0s - 0.5s"), FIG20.format("1.0s", "0.5s - 1.0s"),
                                 FIG21.format("before clip 1\nbefore clip 2"),
                                 FIG20.format("1.0s", "0.0s - 0.5s"), FIG20.format("1.0s", "0.5s - 1.0s"),
                                 FIG21.format("after clip 1\nafter clip 2")]
    assert [image_parts(request) for request in captioner.requests] == [3, 3, 0, 3, 3, 0]
    context = "This is the first video: before summary\nThis is the second video: after summary"
    answer = FIG22.format(context, "Which object moved?", "A. the sofa\nB. the lamp")
    assert first.prompts == [answer] and second.prompts == [answer]  # the second model: no caption request
    assert len(captioner.requests) == 6 and ChainOutput.objects.count() == 6
    assert all(image_parts(request) == 0 for request in first.requests + second.requests)
    assert runs[0].scores["overall"] != runs[1].scores["overall"]
    assert "chain=captions by Qwen3-VL-8B-Instruct, 2 clips, 3 frames each" in labels.run_label(runs[1])


def test_the_shipped_hctr_recipe_captions_with_the_model_itself_by_clip_length(m3verse, chat_servers,
                                                                               django_capture_on_commit_callbacks):
    benchmark, _ = m3verse
    endpoint = chat_servers(reply="B")
    model = endpoint_model(endpoint, "InternVL3_5-8B-Instruct")
    with django_capture_on_commit_callbacks(execute=True):
        runs = recipes.launch_recipe("m3verse-hctr", benchmark, [model.pk])
    finished(runs)
    # 10 frames per video, clip length 200: one clip of 50 frames, its summary, per video; then the answer
    assert [image_parts(request) for request in endpoint.requests] == [50, 0, 50, 0, 0]
    assert endpoint.prompts[-1].startswith("Based on the following context information, answer the question: ")


def test_world_model_frames_imported_per_item_reach_the_request(client, tmp_path, chat_servers,
                                                                django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="causalspatial")
    scene = SceneFactory(benchmark=benchmark)
    store_asset(scene, "image", "scene.png", png())
    questions = {"Collision_Level_1_0": "If the red ball rolls right, will it hit the box? Answer by (A) Yes, (B) No "
                                        "or (C) Not sure.",
                 "Occlusion_Level_1_3": "If the cup moves left, is the plate revealed? Answer by (A) Revealed, (B) "
                                        "Occluded or (C) Not sure."}
    for external_id, question in questions.items():
        ItemFactory(benchmark=benchmark, scene=scene, change=None, answer_format="single", question=question,
                    choices=["Yes", "No", "Not sure"], answers=["A"], external_id=external_id,
                    tags={"task": external_id.split("_")[0].lower(), "level": "L1"})
    endpoint = chat_servers(reply="{'Reasoning': 'r', 'Answer': '(A)'}")
    model = endpoint_model(endpoint, "Qwen3-VL-30B-A3B-Instruct", "image")
    client.force_login(UserFactory(role=roles.ADMIN))
    # not imported yet: refused at launch, naming the item and the field
    response = client.post("/api/v1/runs/", {"model": model.pk, "benchmark": benchmark.slug,
                                              "inputs": {"extra_frames": "cow"}}, content_type="application/json")
    assert response.status_code == 400 and "no cow frames" in response.json()["inputs"][0]

    folder = tmp_path / "cow" / "Collision_Level_1_0"
    folder.mkdir(parents=True)
    for index, colour in enumerate(((0, 0, 255), (0, 255, 0), (255, 0, 0))):
        (folder / f"frame_{index + 1}.png").write_bytes(png(colour))
    call_command("import_item_frames", str(tmp_path / "cow"), "--benchmark", benchmark.slug, "--source", "cow")
    upload = [io.BytesIO(png((9, 9, 9))), io.BytesIO(png((8, 8, 8)))]
    for index, handle in enumerate(upload):
        handle.name = f"{index}.png"
    response = client.post("/api/v1/item-frames/", {"benchmark": benchmark.slug, "source": "cow",
                                                     "item": "Occlusion_Level_1_3", "files": upload})
    assert response.status_code == 201 and response.json() == {"items": 1, "frames": 2}
    bad = client.post("/api/v1/item-frames/", {"benchmark": benchmark.slug, "source": "cow", "item": "nope",
                                               "files": [io.BytesIO(b"x")]})
    assert bad.status_code == 400 and "files" in bad.json()
    assert ItemFrame.objects.count() == 5

    with django_capture_on_commit_callbacks(execute=True):
        runs = recipes.launch_recipe("causalspatial-cow", benchmark, [model.pk])
    finished(runs)
    assert endpoint.refused == []
    plain = [r for r in endpoint.requests if "Note that" not in user_text(r["body"])]
    cow = [r for r in endpoint.requests if r not in plain]
    assert len(plain) == len(cow) == 6  # two items, three repeats each
    assert {image_parts(r) for r in plain} == {1}
    by_question = {}
    for request in cow:
        by_question[user_text(request["body"])] = image_parts(request)
    assert by_question == {COW.format(questions["Collision_Level_1_0"]): 4, COW.format(questions["Occlusion_Level_1_3"]): 3}
    first = next(r for r in cow if "red ball" in user_text(r["body"]))
    urls = [part["image_url"]["url"] for part in first["body"]["messages"][0]["content"] if part["type"] == "image_url"]
    sent = [Image.open(io.BytesIO(__import__("base64").b64decode(url.split(",", 1)[1]))).getpixel((0, 0))
            for url in urls]
    assert sent == [(200, 30, 30), (0, 0, 255), (0, 255, 0), (255, 0, 0)]  # the image, then frames 1, 3, 5
    assert all(r["body"]["max_tokens"] == 8192 for r in endpoint.requests)
    assert runs[1].inputs == {"extra_frames": "cow"} and "extra_frames=cow" in json.dumps(
        client.get(f"/api/v1/benchmarks/{benchmark.slug}/results/").json()["rows"])


def test_manage_page_launches_every_run_of_a_recipe_and_shows_errors_at_the_form(client, m3verse):
    benchmark, _ = m3verse
    guesser = ModelSpec.objects.create(name="guesser", adapter="random_baseline")
    other = ModelSpec.objects.create(name="guesser 2", adapter="random_baseline", seed=1)
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/manage/{benchmark.slug}/").content.decode()
    assert 'id="recipe-form"' in page and '<option value="m3verse-frame-sweep">' in page
    assert '<option value="hypo3d-table1">' not in page  # only the benchmark's family's recipes
    key = re.search(r'id="recipe-form">.*?name="form_key" value="([0-9a-f]+)"', page, re.S).group(1)
    response = client.post(f"/manage/{benchmark.slug}/recipes/", {"recipe": "m3verse-table2",
                                                                   "models": [guesser.pk, other.pk], "form_key": key})
    assert response.status_code == 302 and response["Location"].endswith("#runs")
    launched = Run.objects.filter(benchmark=benchmark)
    assert sorted(launched.values_list("model__name", flat=True)) == ["Random baseline (seed 0)", "guesser",
                                                                     "guesser 2"]
    assert {run.recipe["name"] for run in launched} == {"m3verse-table2"}

    key = re.search(r'name="form_key" value="([0-9a-f]+)"', client.get(f"/manage/{benchmark.slug}/").content.decode())
    response = client.post(f"/manage/{benchmark.slug}/recipes/", {"recipe": "m3verse-table2", "models": [],
                                                                   "form_key": key.group(1)})
    assert response.status_code == 400
    form = re.search(r'id="recipe-form">(.*?)</form>', response.content.decode(), re.S).group(1)
    assert "Name at least one model." in form and 'role="alert"' in form


def test_hypo3d_tables_11_13_15_aligned_maps_shots_from_items_and_object_caption_counts(
        client, chat_servers, django_capture_on_commit_callbacks):
    direction = ItemFactory(tags={"change_type": "movement", "question_type": ["Direction"]}, answers=["left"])
    benchmark, scene = direction.benchmark, direction.scene
    for index in range(3):
        ItemFactory(change__scene=scene, benchmark=benchmark, answers=[f"answer {index}"],
                    tags={"change_type": "removal", "question_type": ["Semantic"]})
    colours = {("topview_semantic", False): (200, 0, 0), ("topview_semantic", True): (0, 0, 200),
               ("topview_plain", False): (0, 200, 0), ("topview_plain", True): (90, 90, 90)}
    for (role, aligned), colour in colours.items():
        store_asset(scene, role, f"{role}-{aligned}.png", png(colour), {"aligned": True} if aligned else {})
    scene.meta = {**(scene.meta or {}), "object_captions": [f"object {n} is here." for n in range(250)]}
    scene.save(update_fields=["meta"])
    vlm_endpoint, llm_endpoint = chat_servers(reply="left"), chat_servers(reply="left")
    vlm = endpoint_model(vlm_endpoint, "Qwen2-VL-72B-Instruct", "top_view_plain")
    llm = endpoint_model(llm_endpoint, "Llama-3.2-3B-Instruct", "caption_only")

    with django_capture_on_commit_callbacks(execute=True):
        table11 = recipes.launch_recipe("hypo3d-table11", benchmark, [vlm.pk])
    finished(table11)
    sent = [Image.open(io.BytesIO(__import__("base64").b64decode(
        r["body"]["messages"][0]["content"][0]["image_url"]["url"].split(",", 1)[1]))).getpixel((0, 0))
        for r in vlm_endpoint.requests]
    assert sent == [(200, 0, 0), (0, 0, 200), (0, 200, 0), (90, 90, 90)]  # one Direction item per run
    assert [run.visual_input for run in table11] == ["top_view_semantic"] * 2 + ["top_view_plain"] * 2
    # the aligned map, stored last, is a condition: a run that does not ask for it is shown the people's map
    vlm_endpoint.requests.clear()
    with django_capture_on_commit_callbacks(execute=True):
        main = services.launch_run(vlm.pk, benchmark, None)
    finished([main])
    assert {Image.open(io.BytesIO(__import__("base64").b64decode(part["image_url"]["url"].split(",", 1)[1]))
                       ).getpixel((0, 0))
            for r in vlm_endpoint.requests for m in r["body"]["messages"] if isinstance(m["content"], list)
            for part in m["content"] if part["type"] == "image_url"} == {(0, 200, 0)}
    client.force_login(UserFactory(role=roles.ADMIN))
    data = client.get(f"/api/v1/benchmarks/{benchmark.slug}/results/").json()
    inputs = [t for t in data["ablations"] if t["axis"] == "inputs"]
    assert {(row["value"], row["main"]) for t in inputs for row in t["rows"]} >= {
        ("top_view=not_aligned", True), ("top_view=aligned", False)}

    with django_capture_on_commit_callbacks(execute=True):
        table13 = recipes.launch_recipe("hypo3d-table13", benchmark, [llm.pk])
    finished(table13)
    assert len(table13[1].examples) == 3 and table13[0].examples == []
    shots = [p for p in llm_endpoint.prompts if p.startswith("Example question: Context Change: ")]
    assert len(shots) == 1 and all(p.count("Example answer: ") == 3 for p in shots)
    # the three shots are held out of both runs: each scores the same one item
    scored = [set(run.items.values_list("pk", flat=True)) for run in table13]
    assert scored[0] == scored[1] and len(scored[0]) == 1

    llm_endpoint.requests.clear()
    with django_capture_on_commit_callbacks(execute=True):
        table15 = recipes.launch_recipe("hypo3d-table15", benchmark, [llm.pk])
    finished(table15)
    per_run = [llm_endpoint.prompts[i * 4] for i in range(4)]
    counts = [len(re.search(r"Scene description: (.*?)\n", prompt).group(1).split(". ")) for prompt in per_run]
    assert counts == [30, 50, 100, 200]
    assert "object_captions=200" in next(row["name"] for row in client.get(
        f"/api/v1/benchmarks/{benchmark.slug}/results/").json()["rows"] if row.get("run") == table15[3].pk)
    with pytest.raises(Exception, match="object_captions make a caption model's scene text"):
        services.launch_run(vlm.pk, benchmark, None, inputs={"object_captions": 30})
