"""Options spelled inside a question follow the order shown, on the study page as in the model's
prompt (benchmarks.option_text): each published wording is rewritten letter for letter; the wording a
CausalSpatial item written with a list of choices gets reads back as those choices; a question that
spells other options than its stored ones is never rotated or shuffled for evaluators."""

import pytest

from benchmarks import option_text
from benchmarks.importers.causalspatial import parse_options
from tests.benchmarks.test_stimulus_parity import evaluator_items
from tests.factories import BenchmarkFactory, ItemFactory

pytestmark = pytest.mark.django_db

# PROTOCOLS.md 3.3 (c): the dataset's wordings.
WORDINGS = [
    ("Answer by (A) Yes, (B) No or (C) Not sure.", ["Yes", "No", "Not sure"],
     "Answer by (A) Not sure, (B) Yes or (C) No."),
    ("Answer by (A) Revealed; (B) Not sure; (C) Occluded.", ["Revealed", "Not sure", "Occluded"],
     "Answer by (A) Occluded; (B) Revealed; (C) Not sure."),
    ("Which?\n- (A) Remove the vase;\n- (B) There is no collision;\n- (C) Not sure.\n\nIf you determine there is "
     "no collision, please select the option indicating no collision.", ["Remove the vase", "There is no collision",
                                                                         "Not sure"],
     "Which?\n- (A) Not sure;\n- (B) Remove the vase;\n- (C) There is no collision.\n\nIf you determine there is "
     "no collision, please select the option indicating no collision."),
    ("Will it hit anything? - A. Yes; - B. No; - C. Not sure;", ["Yes", "No", "Not sure"],
     "Will it hit anything? - A. Not sure; - B. Yes; - C. No;"),
]


@pytest.mark.parametrize(("question", "choices", "rotated"), WORDINGS)
def test_each_published_wording_is_rewritten_in_the_order_shown(question, choices, rotated):
    shown = [choices[2], choices[0], choices[1]]
    assert option_text.reorderable(question, choices)
    assert option_text.question_as_shown(question, choices, shown) == rotated
    assert parse_options(rotated) == shown
    assert option_text.question_as_shown(question, choices, choices) == question


@pytest.mark.parametrize("choices", [["Yes", "No", "Not sure"],
                                     ["Remove the moon vase", "There is no collision, or is there", "Not sure"]])
def test_options_added_to_a_causalspatial_question_read_back_as_the_choices(choices):
    asked = option_text.with_options("causalspatial", "Will it hit the vase?", choices, choices, has_slot=False)
    assert asked.startswith("Will it hit the vase?\n\n") and parse_options(asked) == choices
    # a family whose prompt has an options slot gets the question alone
    assert option_text.with_options("3dsrbench", "Is it left?", ["left", "right"], ["right", "left"],
                                    has_slot=True) == "Is it left?"


def test_a_question_spelling_other_options_is_never_rotated_or_shuffled_for_evaluators(client):
    benchmark = BenchmarkFactory(family="causalspatial")
    item = ItemFactory(benchmark=benchmark, scene=None, change=None, answer_format="single", answers=["A"],
                       question="Will it hit the vase? (A) It will (B) It won't (C) Not sure",
                       choices=["Yes", "No", "Not sure"])
    assert not option_text.reorderable(item.question, item.choices)
    for design in ({"shuffle_choices": True}, {"circular_variants": True}):
        for human, entry in evaluator_items(client, item, participants=3, **design):
            assert entry.variant == "" and entry.choice_order == [0, 1, 2]
            assert human["question"] == item.question and human["choices"] == item.choices
