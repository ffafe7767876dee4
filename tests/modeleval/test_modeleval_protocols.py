"""Model runs under circular and flip protocols: one prediction per (item, variant, repeat), scores
with CircularEval/FlipEval keys, resume writes nothing new, Random++ keeps its guess across orders."""

import io
from collections import defaultdict

import pytest
from django.core.management import call_command
from PIL import Image

from benchmarks.protocols import Variant, shown_choices
from benchmarks.services import store_asset
from core.errors import DomainError
from modeleval import services
from modeleval.models import ModelSpec, Prediction, Run
from modeleval.prompting.prompts import build_request
from modeleval.runs import inference
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory

pytestmark = pytest.mark.django_db


def _png() -> bytes:
    image = Image.new("RGB", (8, 4))
    image.putpixel((0, 0), (255, 0, 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def srbench_items():
    """3DSRBench-style items on one image: a left/right item whose answer swaps on the mirrored
    image (2 rotations x 2), a 4-choice item whose answer stays (4 x 2), an item with no mirrored copy
    (flip decision `none`: 2)."""
    benchmark = BenchmarkFactory(family="3dsrbench")
    scene = SceneFactory(benchmark=benchmark)
    store_asset(scene, "image", "photo.png", _png())
    common = {"benchmark": benchmark, "scene": scene, "change": None, "answer_format": "single"}
    return [
        ItemFactory(question="Is the cup on the left or right of the plate?", choices=["left", "right"],
                    answers=["A"], tags={"subtype": "orientation_on_the_left", "flip": "swap"}, **common),
        ItemFactory(question="Which is highest?", choices=["cup", "plate", "lamp", "table"], answers=["C"],
                    tags={"subtype": "height_higher", "flip": "same"}, **common),
        ItemFactory(question="Is the cup closer to the camera?", choices=["yes", "no"], answers=["B"],
                    tags={"subtype": "location_closer_to_camera", "flip": "none"}, **common),
    ]


def _model(adapter="random_baseline", **extra):
    return ModelSpec.objects.create(name=f"{adapter} {ModelSpec.objects.count()}", adapter=adapter,
                                    modality="image", **extra)


def test_circular_flip_run_predicts_every_variant_once_and_scores_circular_and_flip(
    srbench_items, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(_model().pk, srbench_items[0].benchmark, None, batch_size=2, repeats=2,
                                  protocol={"circular": True, "flip": True})
    run.refresh_from_db()
    assert run.status == "finished" and run.total == (4 + 8 + 2) * 2
    assert run.predictions.count() == run.total
    assert set(run.predictions.filter(item=srbench_items[0]).values_list("variant", flat=True)) == {
        "", "1", "flip", "flip-1"
    }
    assert not run.predictions.exclude(error="").exists()
    overall = run.scores["overall"]
    assert set(overall) >= {"vanilla", "circular", "flip", "flip_circular"}
    # 3 questions; rotations of each group into one circular row, flips into their own groups
    assert run.scores["n_items"] == 14

    # A redelivered batch and a resume write nothing new.
    before = set(run.predictions.values_list("item_id", "variant", "repeat", "output"))
    Run.objects.filter(pk=run.pk).update(status="running")
    assert inference.infer_items(run.pk, [i.pk for i in srbench_items]) == 0
    Run.objects.filter(pk=run.pk).update(status="cancelled")
    with django_capture_on_commit_callbacks(execute=True):
        services.resume_run(run.pk)
    assert set(run.predictions.values_list("item_id", "variant", "repeat", "output")) == before


def test_resume_fills_only_the_missing_variants(srbench_items, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(_model().pk, srbench_items[0].benchmark, None, protocol={"circular": True})
    assert run.predictions.count() == 2 + 4 + 2
    run.predictions.filter(item=srbench_items[1], variant__in=["1", "3"]).delete()
    Run.objects.filter(pk=run.pk).update(status="cancelled")
    kept = dict(run.predictions.values_list("id", "output"))
    with django_capture_on_commit_callbacks(execute=True):
        services.resume_run(run.pk)
    run.refresh_from_db()
    assert run.status == "finished" and run.predictions.count() == 8
    assert dict(run.predictions.filter(pk__in=kept).values_list("id", "output")) == kept


def test_prompts_show_the_rotated_options_and_the_mirrored_image(srbench_items):
    model = _model()
    item = srbench_items[1]
    plain, rotated = build_request(model, None, item), build_request(model, None, item, Variant(1, True))
    assert "A. cup\nB. plate" in plain.prompt and "A. plate\nB. lamp\nC. table\nD. cup" in rotated.prompt
    assert rotated.choices == shown_choices(item.choices, Variant(1)) and rotated.variant == "flip-1"
    with Image.open(io.BytesIO(rotated.images[0])) as image:
        assert image.getpixel((7, 0)) == (255, 0, 0)


def test_random_plus_plus_picks_one_option_text_for_every_rotation(
    srbench_items, django_capture_on_commit_callbacks
):
    model = _model("random_plus_plus", seed=3)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(model.pk, srbench_items[0].benchmark, None, repeats=3,
                                  protocol={"circular": True, "flip": True})
    chosen = defaultdict(set)
    for prediction in Prediction.objects.filter(run=run).select_related("item"):
        variant = Variant.parse(prediction.variant)
        text = shown_choices(prediction.item.choices, variant)["ABCD".index(prediction.output)]
        chosen[(prediction.item_id, prediction.repeat, variant.flip)].add(text)
    assert len(chosen) == (2 * 2 + 1) * 3  # the untagged item has no flipped question
    assert all(len(texts) == 1 for texts in chosen.values())
    run.refresh_from_db()
    assert run.status == "finished" and "circular" in run.scores["overall"]

    plain = _model(seed=3)
    with django_capture_on_commit_callbacks(execute=True):
        random_run = services.launch_run(plain.pk, srbench_items[0].benchmark, None, repeats=3,
                                         protocol={"circular": True})
    texts = defaultdict(set)
    for prediction in random_run.predictions.select_related("item"):
        shown = shown_choices(prediction.item.choices, Variant.parse(prediction.variant))
        texts[(prediction.item_id, prediction.repeat)].add(shown["ABCD".index(prediction.output)])
    assert any(len(found) > 1 for found in texts.values())  # plain random guesses each rotation anew


def test_protocols_the_items_or_model_cannot_carry_are_400s(srbench_items):
    benchmark = srbench_items[0].benchmark
    caption = ModelSpec.objects.create(name="caption model", adapter="random_baseline")
    with pytest.raises(DomainError, match="shown images") as error:
        services.launch_run(caption.pk, benchmark, None, protocol={"flip": True})
    assert error.value.field == "protocol"
    with pytest.raises(DomainError, match="true or false"):
        services.launch_run(_model().pk, benchmark, None, protocol={"flip": "yes"})
    ItemFactory(benchmark=benchmark, scene=srbench_items[0].scene, change=None, answer_format="single",
                question="Where is it?", choices=["red", "blue", "left", "up"], answers=["A"], tags={"flip": "swap"})
    with pytest.raises(DomainError, match="no left/right counterpart"):
        services.launch_run(_model().pk, benchmark, None, protocol={"flip": True})
    assert not Run.objects.exists()


@pytest.mark.django_db(transaction=True)  # the command waits for tasks that run on commit
def test_run_eval_command_takes_circular_and_flip(srbench_items, capsys):
    model = _model()
    call_command("run_eval", "--benchmark", srbench_items[0].benchmark.slug, "--model", model.name,
                 "--circular", "--flip", "--timeout", "10")
    run = Run.objects.get()
    assert run.protocol == {"circular": True, "flip": True} and run.predictions.count() == 14
    assert '"flip_circular"' in capsys.readouterr().out
