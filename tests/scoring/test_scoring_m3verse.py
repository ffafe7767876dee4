"""M3-Verse: our letter extraction, the paper's partial credit, and the hallucination / factual split."""

import pytest

from scoring import score
from scoring.m3verse import extract_letters, partial_credit

LETTERS = "ABCD"


def item(item_id, answer, choices=("Apple", "Mug", "No correct option is listed.", "Laptop"), **tags):
    answer_format = "multi" if isinstance(answer, list) else "single"
    return {
        "id": item_id,
        "answer_format": answer_format,
        "question": "?",
        "choices": list(choices),
        "answer": answer,
        "tags": tags,
    }


@pytest.mark.parametrize(
    ("output", "letters"),
    [
        ("A", {"A"}),
        ("A, C", {"A", "C"}),
        ("AC", {"A", "C"}),
        ("(B)", {"B"}),
        ("B.", {"B"}),
        ("E", {"E"}),  # the whole output is letters: a letter outside the options is kept, and wrong
        ("The answer is B and D.", {"B", "D"}),
        ("I think (C)", {"C"}),
        ("Apple and laptop", set()),
        ("", set()),
    ],
)
def test_letter_extraction(output, letters):
    assert extract_letters(output, LETTERS) == letters


@pytest.mark.parametrize(
    ("chosen", "correct", "credit"),
    [
        ({"A"}, {"A", "D"}, 0.5),
        ({"A", "D"}, {"A", "D"}, 1.0),
        ({"A", "B"}, {"A", "D"}, 0.0),
        (set(), {"A"}, 0.0),
    ],
)
def test_partial_credit_is_the_share_of_correct_letters_unless_any_is_wrong(chosen, correct, credit):
    assert partial_credit(chosen, correct) == credit


def test_score_overall_by_state_and_capability_and_hallucination_split():
    gold = [
        item(
            "s-1", ["A", "D"], state_type="inter-states", capabilities=["temporal understanding", "reasoning"]
        ),
        item("s-2", "C", state_type="intra-state", capabilities=["reasoning"]),
        item("s-3", "B", state_type="intra-state", capabilities=["spatial understanding"]),
    ]
    preds = [{"id": "s-1", "output": "A"}, {"id": "s-2", "output": "C"}, {"id": "s-3", "output": "B, E"}]
    result = score("m3verse", gold, preds, by=["state_type", "capabilities"])
    assert result["profile"] == "paper"
    assert result["overall"] == {"score": 50.0, "hallucination_score": 100.0, "factual_score": 25.0}
    assert result["by"]["state_type=intra-state"] == {
        "score": 50.0,
        "hallucination_score": 100.0,
        "factual_score": 0.0,
    }
    assert result["by"]["capabilities=reasoning"]["score"] == 75.0
    assert result["by"]["capabilities=temporal understanding"]["hallucination_score"] is None


def test_a_hallucination_tag_in_the_gold_wins_over_the_none_option_rule():
    gold = [item("s-1", "C", hallucination=False)]
    assert score("m3verse", gold, [{"id": "s-1", "output": "C"}])["overall"]["factual_score"] == 100.0


def test_letters_are_read_in_the_order_shown():
    gold = [item("s-1", ["A", "D"])]
    shown = ["Laptop", "Apple", "Mug", "No correct option is listed."]
    result = score("m3verse", gold, [{"id": "s-1", "output": "A, B", "choices": shown}])
    assert result["overall"]["score"] == 100.0
