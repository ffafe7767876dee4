"""CausalSpatial: the letter parse of `score.py`, accuracy, Not-Sure rate, levels x tasks, repeats."""

import pytest

from scoring import score
from scoring.causalspatial import gold_letter, not_sure_letter, parse_answer


def item(item_id="Collision_Level_1_0", answer="A", not_sure="C", choices=("Yes", "No", "Not sure")):
    return {
        "id": item_id,
        "answer_format": "single",
        "question": "Will the ball hit the box?",
        "choices": list(choices),
        "answer": answer,
        "not_sure": not_sure,
    }


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("{'Reasoning': 'it rolls on', 'Answer': '(B) No'}", "B"),
        ('{"Reasoning": "...", "Answer": "c"}', "C"),
        ("Answer: d. behind the box", "D"),
        ("Answer: b) no", "B"),
        ("Answer: Not sure", "N"),
        ("{'Answer': 'A'} on reflection {'Answer': 'B'}", "B"),
        ("Answer: A\nthinking again... Answer: B", "A"),  # an unquoted value runs on to the next quote
        ('{"""Answer""": "b"}', "B"),  # no `Answer:` match: the {...} span is read as a Python literal
        ("The ball will hit the box.", None),
        ("Answer: 42", None),
        ("{'Answer': }", None),
    ],
)
def test_answer_letter_is_parsed_like_score_py(output, letter):
    assert parse_answer(output) == letter


def test_gold_and_not_sure_letters():
    assert gold_letter("(c)") == "C"
    assert gold_letter("B") == "B"
    assert not_sure_letter("(D)") == "D"
    assert not_sure_letter("E") == "E"
    # the script reads a parenthesised not-sure letter from A-F only: "(G)" gives "("
    assert not_sure_letter("(G)") == "("
    assert not_sure_letter(None) == ""


def test_accuracy_and_not_sure_rate_are_over_all_items():
    gold = [
        item("Collision_Level_1_0"),
        item("Collision_Level_1_1"),
        item("Collision_Level_1_2"),
        item("Occlusion_Level_2_0"),
    ]
    preds = [
        {"id": "Collision_Level_1_0", "output": "Answer: A"},
        {"id": "Collision_Level_1_1", "output": "Answer: C"},
        {"id": "Collision_Level_1_2", "output": "no idea"},
    ]
    result = score("causalspatial", gold, preds)
    assert result["overall"] == {"accuracy": 25.0, "not_sure_rate": 25.0}
    assert result["errors"] == ["id 'Occlusion_Level_2_0': no prediction, scored as wrong"]


def test_levels_and_tasks_come_from_the_id_and_can_be_crossed():
    gold = [item("Collision_Level_1_0"), item("Occlusion_Level_2_0"), item("Occlusion_Level_2_1")]
    preds = [{"id": g["id"], "output": "Answer: A"} for g in gold]
    preds[2]["output"] = "Answer: B"
    by = score("causalspatial", gold, preds, by=["level", "task", "level+task"])["by"]
    assert by["level=L1"]["accuracy"] == 100.0
    assert by["task=occlusion"]["accuracy"] == 50.0
    assert by["level+task=L2+occlusion"] == {"accuracy": 50.0, "not_sure_rate": 0.0}


def test_tags_given_by_the_gold_win_over_the_id():
    gold = [{**item("Collision_Level_1_0"), "tags": {"task": "physics", "level": "L2"}}]
    by = score("causalspatial", gold, [{"id": "Collision_Level_1_0", "output": "Answer: A"}], by=["task"])[
        "by"
    ]
    assert list(by) == ["task=physics"]


def test_repeats_report_the_mean_and_population_std_of_per_repeat_percentages():
    gold = [item("Collision_Level_1_0"), item("Collision_Level_1_1")]
    outputs = {0: ("A", "A"), 1: ("A", "C"), 2: ("C", "C")}
    preds = [
        {"id": g["id"], "output": f"Answer: {letters[i]}", "repeat": repeat}
        for repeat, letters in outputs.items()
        for i, g in enumerate(gold)
    ]
    assert score("causalspatial", gold, preds)["overall"] == {
        "accuracy": 50.0,
        "not_sure_rate": 50.0,
        "accuracy_std": 40.82,
        "not_sure_rate_std": 40.82,
    }


def test_a_missing_prediction_in_one_repeat_is_wrong_in_that_repeat():
    gold = [item("Collision_Level_1_0"), item("Collision_Level_1_1")]
    preds = [
        {"id": "Collision_Level_1_0", "output": "Answer: A", "repeat": 0},
        {"id": "Collision_Level_1_1", "output": "Answer: A", "repeat": 0},
        {"id": "Collision_Level_1_0", "output": "Answer: A", "repeat": 1},
    ]
    result = score("causalspatial", gold, preds)
    assert result["overall"]["accuracy"] == 75.0
    assert result["overall"]["accuracy_std"] == 25.0
    assert result["errors"] == ["id 'Collision_Level_1_1' repeat 1: no prediction, scored as wrong"]


def test_letters_shown_in_another_order_are_scored_as_the_option_they_show():
    gold = [item(answer="A", not_sure="C")]
    shown = ["Not sure", "Yes", "No"]
    assert score("causalspatial", gold, [{"id": gold[0]["id"], "output": "Answer: (B)", "choices": shown}])[
        "overall"
    ] == {"accuracy": 100.0, "not_sure_rate": 0.0}
    assert score("causalspatial", gold, [{"id": gold[0]["id"], "output": "Answer: (A)", "choices": shown}])[
        "overall"
    ] == {"accuracy": 0.0, "not_sure_rate": 100.0}


def test_items_without_choices_are_scored_on_the_raw_letter():
    gold = [{**item(), "choices": []}]
    assert (
        score("causalspatial", gold, [{"id": gold[0]["id"], "output": "Answer: a"}])["overall"]["accuracy"]
        == 100.0
    )
