"""Humans see what models see: for each family, every piece of context the model's prompt carries
(modeleval.prompting.prompts.build_request with the family's main template) is on the evaluator's item as the
session API gives it to the page: world-frame sentences, the context change as refined, the question,
the option texts in the order shown, the same images (the mirrored twin where the model's image
is mirrored), the before and after videos named as such, and what the prompt says about the answer.
Never the gold.

Parity both ways: the arrows, start boxes and bounding boxes laid over an image for the evaluator
(the image's own overlays and the item's marks, in the session API's `overlays`) are printed into the
model's pixels. Each image test renders what the evaluator's page shows (the served image with the
API's overlays, drawn by benchmarks.overlays.draw, the shapes image-viewer.js lays over it) and
compares it with the model's image byte for byte; where there are marks, the model's pixels under
them differ from the raw image's."""

import io
import json

import pytest
from django.test import Client
from PIL import Image, ImageDraw

from benchmarks import overlays, protocols
from benchmarks.models import WorldFrame
from benchmarks.protocols import Variant
from benchmarks.services import store_asset
from core import roles
from humaneval.models import SessionItem
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.sessions import start_session
from humaneval.services.stimuli import question_as_shown, shown_choices
from modeleval.models import ModelSpec
from modeleval.prompting import prompts, visual_inputs
from modeleval.prompting.prompts import build_request, latest_template
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

GOLD_KEYS = {"answers", "answer", "gold", "correct"}


def png(seed: int, size=(64, 40)) -> bytes:
    """A small asymmetric PNG, so the mirrored image differs from the original."""
    image = Image.new("RGB", size, (230, 230, 230))
    ImageDraw.Draw(image).rectangle((2, 2, 10 + seed, 20), fill=(200, 30 + seed, 30))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def model(modality: str) -> ModelSpec:
    return ModelSpec(name=f"parity-{modality}", adapter=ModelSpec.Adapter.RANDOM_BASELINE, modality=modality)


def evaluator_items(client, item, participants: int = 1, **design) -> list[tuple[dict, SessionItem]]:
    """Each participant's item as GET /api/v1/sessions/<id>/current/ gives it to the session page,
    with the plan entry (variant, option order) it was shown from."""
    study = create_study(
        item.benchmark, StudyDesign("Parity", [item.pk], 60, 600, participants_per_item=participants,
                                    **design), UserFactory())
    shown = []
    for _ in range(participants):
        evaluator = UserFactory(role=roles.EVALUATOR)
        session = start_session(study, evaluator)
        client.force_login(evaluator)
        response = client.get(f"/api/v1/sessions/{session.pk}/current/")
        assert response.status_code == 200, response.content
        shown.append((response.json()["item"], session.plan.get(item=item)))
    return shown


def served(client, url: str) -> bytes:
    """The bytes the evaluator's browser gets for a stimulus URL."""
    response = client.get(url)
    assert response.status_code == 200, url
    return b"".join(response.streaming_content) if response.streaming else response.content


def as_shown(client, image: dict) -> bytes:
    """What the evaluator's page shows of one image: the served file with the API's overlays on it."""
    return overlays.draw(served(client, image["url"]), image["overlays"])


def pixel(data: bytes, xy) -> tuple:
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB").getpixel(tuple(int(v) for v in xy))


def stored(url: str) -> bytes:
    """The bytes stored under a URL, as staff read them: a participant reads only the files their
    screen shows (benchmarks.media.may_read_asset), not, say, the image their item shows mirrored."""
    staff = Client()
    staff.force_login(UserFactory(role=roles.REVIEWER))
    return served(staff, url)


def assert_no_gold(human: dict, *gold_texts: str) -> None:
    def keys(value):
        if isinstance(value, dict):
            for key, inner in value.items():
                yield key
                yield from keys(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from keys(inner)

    assert not GOLD_KEYS & set(keys(human))
    dumped = json.dumps(human)
    for text in gold_texts:
        assert text not in dumped


def assert_question_and_options(human: dict, request) -> None:
    """The question and every option text as the model reads them, the options in the order shown."""
    assert human["question"] in request.prompt
    assert human["choices"] == request.choices
    for text in request.choices:
        assert text in request.prompt


# --- Hypo3D -------------------------------------------------------------------------------------


@pytest.fixture
def hypo3d_item():
    benchmark = BenchmarkFactory(family="hypo3d")
    scene = SceneFactory(benchmark=benchmark, object_labels=["door", "desk", "chair", "window"])
    door, window = scene.scene_objects.get(label="door"), scene.scene_objects.get(label="window")
    WorldFrame.objects.create(scene=scene, anchor=door, side="front",
                              text="The door was located at the front of the scene.")
    WorldFrame.objects.create(scene=scene, anchor=window, side="left",
                              text="The window was located on the left of the scene.")
    store_asset(scene, "topview_plain", "plain.png", png(1), {"width": 64, "height": 40, "labels": []})
    store_asset(scene, "topview_semantic", "semantic.png", png(2), {"width": 64, "height": 40, "labels": []})
    change = ChangeFactory(scene=scene, status="approved", raw_text="chair moved to window",
                           refined_text="The chair has been moved next to the window.")
    return ItemFactory(change=change, question="What is now in front of the chair?",
                       answers=["a potted fern"])


@pytest.mark.parametrize(("modality", "map_url"), [("top_view_plain", "topview_plain_url"),
                                                  ("top_view_semantic", "topview_semantic_url")])
def test_hypo3d_evaluator_sees_world_frame_change_question_and_the_models_map(client, hypo3d_item, modality, map_url):
    request = build_request(model(modality), latest_template("hypo3d"), hypo3d_item)
    [(human, _)] = evaluator_items(client, hypo3d_item)

    # The world-frame sentences, every one, in the order the prompt joins them.
    assert human["world_frame"] == ["The door was located at the front of the scene.",
                                    "The window was located on the left of the scene."]
    assert f"Scene Orientation: {' '.join(human['world_frame'])}\n" in request.prompt
    # The compass turns on the latest frame's anchor, which the viewer is given.
    assert human["scene"]["world_frame"]["side"] == "left"
    anchor = human["scene"]["world_frame"]["anchor_instance_id"]
    assert anchor in [o["instance_id"] for o in human["scene"]["objects"]]
    # The context change the model gets is the refined text, and so is the evaluator's.
    assert human["context_change"] == "The chair has been moved next to the window."
    assert f"Context Change: {human['context_change']} " in request.prompt
    assert "chair moved to window" not in request.prompt + json.dumps(human)
    assert f"Question: {human['question']}\n" in request.prompt
    assert human["answer_hint"] and human["answer_hint"] in request.prompt
    # The map the model is shown is the map the evaluator's top view shows.
    assert request.images == [served(client, human["scene"][map_url])]
    assert_no_gold(human, "a potted fern")


# --- 3DSRBench ----------------------------------------------------------------------------------


def srbench_item(**fields):
    benchmark = BenchmarkFactory(family="3dsrbench")
    scene = SceneFactory(benchmark=benchmark, object_labels=[])
    original = store_asset(scene, "image", "street.png", png(3), {"overlays": []})
    item = ItemFactory(change=None, scene=scene, benchmark=benchmark, answer_format="single",
                       question="Is the red car on the left or the right of the bus?",
                       choices=["on the left", "on the right"], answers=["A"], **fields)
    return item, original


def test_3dsrbench_evaluator_sees_the_question_options_in_the_rotation_and_the_same_image(client):
    item, _ = srbench_item(tags={"category": "location"})
    shown = evaluator_items(client, item, participants=2, circular_variants=True)
    assert {entry.variant for _, entry in shown} == {"", "1"}
    for human, entry in shown:
        request = build_request(model("image"), latest_template("3dsrbench"), item, Variant.parse(entry.variant))
        assert_question_and_options(human, request)
        assert f"Options:\n{prompts.lettered(human['choices'])}\n" in request.prompt
        assert [as_shown(client, image) for image in human["images"]] == request.images
        assert_no_gold(human)


def test_3dsrbench_flipped_variant_shows_the_mirrored_twin_the_model_gets(client):
    item, original = srbench_item(tags={"category": "location", "flip": "swap"})
    shown = evaluator_items(client, item, participants=2, flip_images=True, shuffle_choices=False)
    assert {entry.variant for _, entry in shown} == {"", "flip"}
    for human, entry in shown:
        variant = Variant.parse(entry.variant)
        request = build_request(model("image"), latest_template("3dsrbench"), item, variant)
        assert_question_and_options(human, request)
        # each participant's browser fetches the files of the item on its own screen
        client.force_login(entry.session.participant)
        seen = [as_shown(client, image) for image in human["images"]]
        assert seen == request.images
        assert (seen == [stored(original.file.url)]) is not variant.flip


def flipped_row_item():
    """An item imported from a `-flip` row: its scene carries the mirrored twin of the image."""
    item, original = srbench_item(tags={"category": "location", "image_variant": "flipped"})
    store_asset(item.scene, "image_flipped", "street_flip.png", protocols.mirror_image(png(3)),
                {protocols.TWIN_OF: original.pk, "overlays": []})
    return item, original


def test_3dsrbench_item_from_a_flip_row_shows_the_scenes_mirrored_twin(client):
    item, original = flipped_row_item()
    [(human, entry)] = evaluator_items(client, item)
    assert entry.variant == ""
    twin = protocols.flipped_twin(original)
    assert [served(client, image["url"]) for image in human["images"]] == [served(client, twin.file.url)]
    assert served(client, twin.file.url) != stored(original.file.url)
    # the image the screen shows mirrored is not on it: the participant cannot read it
    assert client.get(original.file.url).status_code == 404


def test_3dsrbench_item_from_a_flip_row_gives_model_and_evaluator_the_same_twin(client):
    item, _ = flipped_row_item()
    [(human, _)] = evaluator_items(client, item)
    request = build_request(model("image"), latest_template("3dsrbench"), item)
    assert [as_shown(client, image) for image in human["images"]] == request.images


# --- CausalSpatial and Spatial457 ---------------------------------------------------------------


def image_item(family: str, n_images: int = 2, **fields):
    benchmark = BenchmarkFactory(family=family)
    scene = SceneFactory(benchmark=benchmark, object_labels=[])
    for i in range(n_images):
        store_asset(scene, "image", f"view{i}.png", png(10 + i),
                    {"overlays": [{"type": "arrow", "from": [5, 5], "to": [30, 20]}]})
    return ItemFactory(change=None, scene=scene, benchmark=benchmark, **fields)


def test_causalspatial_evaluator_sees_the_models_question_with_its_options_and_images(client):
    item = image_item("causalspatial", question="If the ball rolls along the arrow, will it hit the vase? "
                      "(A) Yes (B) No (C) Not sure", choices=["Yes", "No", "Not sure"], answers=["B"],
                      answer_format="single", tags={"task": "collision", "level": "L1", "not_sure": "C"})
    request = build_request(model("image"), latest_template("causalspatial"), item)
    [(human, _)] = evaluator_items(client, item, shuffle_choices=False)
    assert human["question"] == item.question and item.question in request.prompt
    assert_question_and_options(human, request)
    assert [as_shown(client, image) for image in human["images"]] == request.images
    assert len(request.images) == 2 and all(image["overlays"] for image in human["images"])
    # the images' own arrows are in the model's pixels: on the arrow they are not the raw image's
    for image, sent in zip(human["images"], request.images, strict=True):
        assert pixel(sent, (17, 12)) == RED != pixel(served(client, image["url"]), (17, 12))
    assert_no_gold(human)


RED, GREEN, GREY = (255, 59, 48), (52, 199, 89), (230, 230, 230)
ARROW = {"image": 1, "type": "arrow", "from": [0.1, 0.8], "to": [0.9, 0.8]}  # (6.4, 32) -> (57.6, 32)
START_BOX = {"image": 0, "type": "start_box", "x": 0.5, "y": 0.1, "width": 0.3, "height": 0.5}  # left edge x=32


def test_causalspatial_items_arrow_and_start_box_are_in_the_models_pixels_as_the_evaluator_sees_them(client):
    item = image_item("causalspatial", question="If the ball moves along the arrow, will it hit the vase?",
                      choices=["Yes", "No", "Not sure"], answers=["A"], answer_format="single",
                      tags={"task": "collision", "level": "L1", "not_sure": "C"},
                      overlays=overlays.validate([ARROW, START_BOX], 2))
    request = build_request(model("image"), latest_template("causalspatial"), item)
    [(human, _)] = evaluator_items(client, item, shuffle_choices=False)
    first, second = human["images"]
    # the evaluator's API gives the item's marks in the shown image's pixels, beside the image's own arrow
    assert first["overlays"][1] == {"type": "start_box", "x": 32.0, "y": 4.0, "width": 19.2, "height": 20.0,
                                    "colour": "#34c759"}
    assert second["overlays"][1] == {"type": "arrow", "from": [6.4, 32.0], "to": [57.6, 32.0], "colour": "#ff3b30"}
    assert [as_shown(client, image) for image in human["images"]] == request.images
    raw = [served(client, image["url"]) for image in human["images"]]
    assert pixel(request.images[0], (32, 14)) == GREEN and pixel(raw[0], (32, 14)) == GREY
    assert pixel(request.images[1], (32, 32)) == RED and pixel(raw[1], (32, 32)) == GREY
    assert pixel(request.images[0], (32, 32)) == GREY  # the arrow is on the second image only
    assert pixel(request.images[1], (63, 0)) == pixel(raw[1], (63, 0))  # the rest is the raw image


def test_3dsrbench_red_box_is_mirrored_with_the_image_for_model_and_evaluator(client):
    box = {"type": "box", "x": 0.05, "y": 0.5, "width": 0.3, "height": 0.4}  # left edge x=3.2; mirrored, right edge x=60.8
    item, _ = srbench_item(tags={"category": "location", "flip": "swap"}, overlays=overlays.validate([box], 1))
    shown_items = evaluator_items(client, item, participants=2, flip_images=True, shuffle_choices=False)
    for human, entry in shown_items:
        variant = Variant.parse(entry.variant)
        request = build_request(model("image"), latest_template("3dsrbench"), item, variant)
        client.force_login(entry.session.participant)
        assert [as_shown(client, image) for image in human["images"]] == request.images
        [sent] = request.images
        assert (pixel(sent, (60, 28)) == RED) is variant.flip
        assert (pixel(sent, (3, 28)) == RED) is not variant.flip


def test_spatial457_bounding_box_is_in_the_models_pixels(client):
    box = {"type": "box", "x": 0.5, "y": 0.1, "width": 0.3, "height": 0.5, "colour": "#FF0000"}
    item = image_item("spatial457", n_images=1, question="Which direction is the bus in the red box facing?",
                      choices=[], answers=["left"], answer_format="open", tags={"level": "L4_pose"},
                      overlays=overlays.validate([box], 1))
    request = build_request(model("image"), latest_template("spatial457"), item)
    [(human, _)] = evaluator_items(client, item)
    assert [as_shown(client, image) for image in human["images"]] == request.images
    assert pixel(request.images[0], (32, 14)) == (255, 0, 0) != pixel(served(client, human["images"][0]["url"]), (32, 14))


def test_options_written_into_the_question_follow_the_order_the_buttons_show():
    item = image_item("causalspatial", question="Will it hit the vase? (A) Yes (B) No (C) Not sure",
                      choices=["Yes", "No", "Not sure"], answers=["B"], answer_format="single")
    entry = SessionItem(item=item, choice_order=[2, 0, 1])
    assert question_as_shown(item, entry.choice_order) == "Will it hit the vase? (A) Not sure (B) Yes (C) No"
    assert shown_choices(entry) == ["Not sure", "Yes", "No"]
    assert question_as_shown(item, [0, 1, 2]) == item.question


def test_spatial457_evaluator_sees_the_question_the_answer_form_and_the_image(client):
    item = image_item("spatial457", n_images=1, question="How many red cubes are left of the bus?",
                      choices=[], answers=["7"], answer_format="open", tags={"level": "L3_2d_spatial"})
    request = build_request(model("image"), latest_template("spatial457"), item)
    [(human, _)] = evaluator_items(client, item)
    assert request.prompt.endswith(f"\n\n{human['question']}") and human["choices"] == request.choices == []
    assert human["answer_hint"] and human["answer_hint"] in request.prompt
    assert [as_shown(client, image) for image in human["images"]] == request.images
    assert_no_gold(human)


# --- M3-Verse -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("answer_format", "answers", "count"), [
    ("single", ["B"], "only one correct option"),
    ("multi", ["A", "C"], "more than one correct option"),
])
def test_m3verse_evaluator_sees_before_and_after_as_the_model_orders_them(
    client, monkeypatch, answer_format, answers, count
):
    benchmark = BenchmarkFactory(family="m3verse")
    scene = SceneFactory(benchmark=benchmark, object_labels=[])
    store_asset(scene, "video", "before.mp4", b"video of the room before", {"which": "before", "fps": 25.0})
    store_asset(scene, "video", "after.mp4", b"video of the room after", {"which": "after", "fps": 25.0})
    item = ItemFactory(change=None, scene=scene, benchmark=benchmark, answer_format=answer_format,
                       question="What changed between the two videos?", answers=answers,
                       choices=["the cup moved", "the lamp turned on", "the door opened"])
    # Each video stands for its frames: the model's images are its videos' bytes, in the order it reads them.
    monkeypatch.setattr(visual_inputs, "frame_set", lambda video, n, size: [video.file.open("rb").read()])
    request = build_request(model("video_frames"), latest_template("m3verse"), item)
    [(human, entry)] = evaluator_items(client, item, shuffle_choices=False)
    assert_question_and_options(human, request)
    assert f"options: {prompts.lettered(human['choices'])}\n" in request.prompt
    # The first half of the frames is 'before', the second 'after': the evaluator's labelled videos.
    assert "the first video (the 'before' state)" in request.prompt
    assert request.images == [served(client, human["videos"]["before"]), served(client, human["videos"]["after"])]
    assert count in request.prompt and count in human["answer_count_note"]
    assert_no_gold(human)
