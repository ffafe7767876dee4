"""Each family's default prompt is data, versioned, and renders what its paper's evaluation asks for."""

import pytest

from benchmarks.models import Family
from modeleval.models import ModelSpec
from modeleval.prompting.prompts import build_request, latest_template
from tests.factories import BenchmarkFactory, ItemFactory

pytestmark = pytest.mark.django_db


def choice_item(family: str, answer_format: str = "single", **fields):
    benchmark = BenchmarkFactory(family=family)
    return ItemFactory(change__scene__benchmark=benchmark, answer_format=answer_format,
                       question=fields.pop("question", "Which object is closer to the camera?"),
                       choices=fields.pop("choices", ["the red car", "the blue bus"]), answers=["A"], **fields)


@pytest.mark.parametrize("family", [f.value for f in Family])
def test_every_family_has_a_versioned_main_template(family):
    template = latest_template(family)
    assert template is not None and template.version == 1 and template.condition == "main"


def test_3dsrbench_lists_the_options_with_letters_in_the_order_shown():
    item = choice_item("3dsrbench")
    model = ModelSpec(name="blind", adapter=ModelSpec.Adapter.RANDOM_BASELINE, modality=ModelSpec.Modality.CAPTION_ONLY)
    prompt = build_request(model, latest_template("3dsrbench"), item).prompt
    assert "Question: Which object is closer to the camera?\nOptions:\nA. the red car\nB. the blue bus\n" in prompt


@pytest.mark.parametrize("family", ["causalspatial", "spatial457"])
def test_json_answer_families_ask_for_reasoning_and_answer_keys(family):
    item = choice_item(family, question="Will the ball hit the vase? (A) Yes (B) No (C) Not sure")
    model = ModelSpec(name="blind", adapter=ModelSpec.Adapter.RANDOM_BASELINE, modality=ModelSpec.Modality.CAPTION_ONLY)
    prompt = build_request(model, latest_template(family), item).prompt
    assert "'Reasoning': '<reasoning>'" in prompt and "'Answer':" in prompt
    assert "Will the ball hit the vase? (A) Yes (B) No (C) Not sure" in prompt


@pytest.mark.parametrize(("answer_format", "statement"), [
    ("single", "There is only one correct option for this question."),
    ("multi", "There are more than one correct option for this question."),
])
def test_m3verse_states_whether_one_or_several_options_are_correct(answer_format, statement):
    item = choice_item("m3verse", answer_format, choices=["the cup moved", "the lamp turned on", "nothing"])
    model = ModelSpec(name="frames", adapter=ModelSpec.Adapter.RANDOM_BASELINE,
                      modality=ModelSpec.Modality.CAPTION_ONLY)
    prompt = build_request(model, latest_template("m3verse"), item).prompt
    assert prompt.endswith(statement) and prompt.count("correct option for this") + prompt.count(
        "correct options for this") == 1
    assert "options: A. the cup moved\nB. the lamp turned on\nC. nothing" in prompt
