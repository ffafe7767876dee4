"""Spatial457: the reference extraction regexes, correctness rules, format errors and levels."""

import pytest

from scoring import score
from scoring.spatial457 import extract_answer, is_correct


def item(item_id, answer, level="L1_single"):
    return {
        "id": item_id,
        "answer_format": "open",
        "question": "?",
        "answer": answer,
        "tags": {"level": level},
    }


@pytest.mark.parametrize(
    ("output", "answer", "format_error"),
    [
        ("{'Reasoning': 'two cars', 'Answer': 'Yes'}", "Yes", False),
        ('{"Reasoning": "blue bus", "Answer": "large"}', "large", False),
        ("{'Reasoning': 'count', 'Answer': 12}", "1", False),
        ("{'Reasoning': 'x', 'Answer': ' red '}", " red ", False),
        ("There are three.", "There are three.", True),
        ("", "", True),
    ],
)
def test_the_answer_is_extracted_by_the_reference_regexes(output, answer, format_error):
    assert extract_answer(output) == (answer, format_error)


@pytest.mark.parametrize(
    ("gold", "pred", "correct"),
    [
        ("red", "Red", True),
        ("no", "None", True),  # none -> no
        ("No", "0", True),
        ("no", "0", False),  # only a gold of exactly "No"
        ("3", "three", True),
        ("10", "Ten", True),
        ("3", "3.0", False),
        ("Yes", "7", True),  # one digit 1..9 for yes
        ("yes", "0", False),
        ("Yes", "12", False),
        ("Yes", "true", False),  # true and yes are not equated
        ("sedan", "SUV", True),  # vehicle super-class of the first word
        ("school bus", "articulated bus", True),
        ("road bike", "bicycle", True),
        ("jet", "car", False),
        ("red", " red", False),  # nothing is stripped
    ],
)
def test_correctness_rules_of_is_correct(gold, pred, correct):
    assert is_correct(gold, pred) is correct


def test_accuracy_per_level_and_format_error_count():
    gold = [
        item("1", "Yes"),
        item("2", "3", "L2_objects"),
        item("3", "sedan", "L2_objects"),
        item("4", "no", "L5_collision"),
    ]
    preds = [
        {"id": "1", "output": "{'Reasoning': 'r', 'Answer': 'yes'}"},
        {"id": "2", "output": "three"},
        {"id": "3", "output": '{"Reasoning": "r", "Answer": "minivan"}'},
        {"id": "4", "output": "I cannot tell"},
    ]
    result = score("spatial457", gold, preds, by=["level"])
    assert result["overall"] == {"accuracy": 75.0, "format_errors": 2}
    assert result["by"] == {
        "level=L1_single": {"accuracy": 100.0, "format_errors": 0},
        "level=L2_objects": {"accuracy": 100.0, "format_errors": 1},
        "level=L5_collision": {"accuracy": 0.0, "format_errors": 1},
    }
