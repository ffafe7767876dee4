"""The overlay tool's result: a CausalSpatial, Spatial457 or 3DSRBench item written on an image keeps
the arrows, start boxes and bounding boxes drawn on it as data (coordinates normalised to the image,
the image's index, a colour); a bad shape is a 400 naming `overlays`; and the model's image of the
item has them printed in (benchmarks/overlays.py)."""

import io

import pytest
from PIL import Image

from annotation import services
from benchmarks import overlays
from benchmarks.models import Item
from benchmarks.services import store_asset
from core.errors import DomainError
from modeleval.models import ModelSpec
from modeleval.prompting.prompts import build_request, latest_template
from tests.annotation.test_annotation_kinds import enter, submit
from tests.factories import BenchmarkFactory, SceneFactory

pytestmark = pytest.mark.django_db

ARROW = {"image": 0, "type": "arrow", "from": [0.2, 0.5], "to": [0.8, 0.5]}
START_BOX = {"image": 0, "type": "start_box", "x": 0.05, "y": 0.1, "width": 0.2, "height": 0.3}
RED_BOX = {"image": 0, "type": "box", "x": 0.6, "y": 0.6, "width": 0.3, "height": 0.3}


def png(size=(100, 60)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (240, 240, 240)).save(out, format="PNG")
    return out.getvalue()


def pixel(data: bytes, xy) -> tuple:
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB").getpixel(xy)


def campaign_on_an_image(family: str):
    benchmark = BenchmarkFactory(family=family)
    scene = SceneFactory(benchmark=benchmark, object_labels=[])
    store_asset(scene, "image", "table.png", png(), {})
    return services.create_campaign(benchmark, "Marks", "movement", [scene], kind="choice_image",
                                    question_types={"causal": ["Causal"]}, assignments_per_scene=3)


def item_answer(**fields) -> dict:
    return {"question": "If the ball rolls along the arrow, will it hit the vase?", "choices": ["Yes", "No"],
            "correct": ["A"], "question_type": "causal", "tags": {"level": "L1", "task": "collision"},
            "not_sure": True, **fields}


def test_causalspatial_item_keeps_its_arrow_and_start_box_and_the_model_sees_them(client):
    campaign = campaign_on_an_image("causalspatial")
    written = submit(client, enter(client, campaign), item_answer(overlays=[ARROW, START_BOX]))
    assert written.status_code == 201, written.json()
    item = Item.objects.get()
    assert item.overlays == [
        {"image": 0, "type": "arrow", "from": [0.2, 0.5], "to": [0.8, 0.5], "colour": "#ff3b30"},
        {"image": 0, "type": "start_box", "x": 0.05, "y": 0.1, "width": 0.2, "height": 0.3, "colour": "#34c759"},
    ]
    model = ModelSpec(name="sees", adapter=ModelSpec.Adapter.RANDOM_BASELINE, modality="image")
    [sent] = build_request(model, latest_template("causalspatial"), item).images
    assert pixel(sent, (50, 30)) == (255, 59, 48)  # on the arrow, from (20, 30) to (80, 30)
    assert pixel(sent, (5, 15)) == (52, 199, 89)  # the start box's left edge, x = 5
    assert pixel(sent, (50, 5)) == (240, 240, 240)  # off every mark: the raw image


@pytest.mark.parametrize(("family", "tags"), [("spatial457", {"level": "L4_pose"}),
                                              ("3dsrbench", {"subtype": "location_next_to"})])
def test_bounding_boxes_are_kept_for_spatial457_and_3dsrbench(client, family, tags):
    campaign = campaign_on_an_image(family)
    written = submit(client, enter(client, campaign), item_answer(overlays=[RED_BOX], tags=tags, flip_swaps=False,
                                                                  not_sure=False))
    assert written.status_code == 201, written.json()
    assert Item.objects.get().overlays == [{**RED_BOX, "colour": "#ff3b30"}]


@pytest.mark.parametrize(("marks", "says"), [
    ({"type": "circle", "x": 0.1}, "type is one of"),
    ({"type": "arrow", "from": [0.2, 0.5]}, "'to' is a point"),
    ({"type": "arrow", "from": [0.2, 0.5], "to": [1.4, 0.5]}, "'to' is a point"),
    ({"type": "arrow", "from": [0.2, 0.5], "to": [0.2, 0.5]}, "same point"),
    ({"type": "box", "x": 0.8, "y": 0.1, "width": 0.5, "height": 0.2}, "inside the image"),
    ({"type": "box", "x": 0.1, "y": 0.1, "width": 0, "height": 0.2}, "a width and a height"),
    ({"type": "box", "x": "left", "y": 0.1, "width": 0.1, "height": 0.2}, "x, y, width and height"),
    ({**RED_BOX, "image": 1}, "'image' is the index"),
    ({**RED_BOX, "colour": "red"}, "#rrggbb"),
    ("an arrow", "an object"),
])
def test_a_bad_mark_is_a_400_naming_overlays(client, marks, says):
    campaign = campaign_on_an_image("causalspatial")
    refused = submit(client, enter(client, campaign), item_answer(overlays=[ARROW, marks]))
    assert refused.status_code == 400
    assert says in refused.json()["overlays"][0] and refused.json()["overlays"][0].startswith("Mark 2:")
    assert not Item.objects.exists()


def test_marks_are_a_list_of_at_most_twenty():
    with pytest.raises(DomainError, match="a list") as error:
        overlays.validate({"type": "arrow"}, 1)
    assert error.value.field == "overlays"
    with pytest.raises(DomainError, match="at most 20"):
        overlays.validate([RED_BOX] * 21, 1)
    with pytest.raises(DomainError, match="no image"):
        overlays.validate([RED_BOX], 0)
    assert overlays.validate(None, 0) == []


def test_marks_mirror_with_the_image():
    [placed] = [overlays.in_pixels(m, 100, 60, mirrored=True) for m in overlays.validate([RED_BOX, ARROW], 1)[:1]]
    assert placed == {"type": "box", "colour": "#ff3b30", "x": pytest.approx(10.0), "y": 36.0, "width": 30.0,
                      "height": 18.0}
    arrow = overlays.in_pixels(overlays.validate([ARROW], 1)[0], 100, 60, mirrored=True)
    assert arrow["from"] == [pytest.approx(80.0), 30.0] and arrow["to"] == [pytest.approx(20.0), 30.0]
