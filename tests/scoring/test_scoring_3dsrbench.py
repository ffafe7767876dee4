"""3DSRBench: MMBench-style letter extraction and the vanilla / circular / flip / flip+circular settings."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring import score
from scoring.threedsrbench import NO_OPTION, extract_letter, infer_option, infer_text

OPTIONS = {"A": "left", "B": "right"}
FOUR = {"A": "higher", "B": "lower", "C": "same height", "D": "cannot tell"}


def row(item_id, answer="A", choices=("left", "right"), category="orientation_on_the_left", group=None):
    gold = {
        "id": item_id,
        "answer_format": "single",
        "question": "Is the mug on the left or right of the laptop?",
        "choices": list(choices),
        "answer": answer,
        "tags": {"category": category},
    }
    if group is not None:
        gold["group"] = group
    return gold


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("B", "B"),
        ("(A)", "A"),
        ("B. right", "B"),
        ("The answer is B.", "B"),
        ("**Answer:** A", "A"),
        ("A chair hides it, so the correct answer is **B**", "B"),
        ("Z", NO_OPTION),
        ("Cannot determine the answer from this image", NO_OPTION),
    ],
)
def test_option_letters_are_read_like_can_infer_option(output, letter):
    assert extract_letter(output, OPTIONS) == letter


def test_a_lone_letter_counts_only_among_the_last_four_tokens():
    assert infer_option("B is the answer", OPTIONS) == "B"
    assert infer_option("B is my answer here", OPTIONS) is None
    assert infer_option("B is what I would say if the mug were not hidden", OPTIONS) is None


def test_a_letter_outside_the_options_is_not_an_option():
    assert infer_option("C", OPTIONS) is None


def test_option_text_is_matched_when_exactly_one_option_text_occurs_in_a_short_output():
    assert infer_text("It is on the Right", OPTIONS) == "B"
    assert infer_text("left or right", OPTIONS) is None
    assert (
        infer_text("it is clearly to the right of the laptop", OPTIONS) is None
    )  # longer than 2x option texts
    assert extract_letter("same height", FOUR) == "C"


def test_an_api_failure_skips_the_letter_rules_but_not_the_text_rule():
    assert extract_letter("Failed to obtain answer via API: B", OPTIONS) is None
    options = {"A": "Failed to obtain answer", "B": "other"}
    assert extract_letter("Failed to obtain answer via API", options) == "A"


def test_unresolved_output_is_wrong_unless_the_callers_judge_resolves_it():
    gold = [row("Q0000001", answer="B")]
    preds = [{"id": "Q0000001", "output": "I believe the mug is to the east"}]
    assert score("3dsrbench", gold, preds)["overall"]["vanilla"] == 0.0
    asked = []

    def judge(question, options, output):
        asked.append((question, options, output))
        return "B"

    assert score("3dsrbench", gold, preds, judge=judge)["overall"]["vanilla"] == 100.0
    assert asked == [(gold[0]["question"], OPTIONS, preds[0]["output"])]


def test_circular_groups_rotations_and_keeps_flips_as_their_own_question():
    gold = [
        row("VIN6MS3J", "A", ("left", "right")),
        row("VIN6MS3J-1", "B", ("right", "left")),
        row("VIN6MS3J-flip", "B", ("left", "right")),
        row("VIN6MS3J-flip-1", "A", ("right", "left")),
        row("HGT00001", "C", tuple(FOUR.values()), "height_higher"),
    ]
    outputs = {
        "VIN6MS3J": "A",
        "VIN6MS3J-1": "B",
        "VIN6MS3J-flip": "right",
        "VIN6MS3J-flip-1": "B",
        "HGT00001": "C",
    }
    preds = [{"id": item_id, "output": output} for item_id, output in outputs.items()]
    result = score("3dsrbench", gold, preds)
    # rows 4/5; circular groups X, X-flip, HGT: 2/3; flip pairs (X, X-flip), (X-1, X-flip-1), HGT: 2/3;
    # questions X (rotations and flips), HGT: 1/2
    assert result["overall"] == {"vanilla": 80.0, "circular": 66.67, "flip": 66.67, "flip_circular": 50.0}


def test_breakdown_by_the_4_categories_and_12_subtypes():
    gold = [
        row("LOC00001", "A", category="location_above"),
        row("LOC00001-1", "A", category="location_above"),
        row("MOB00001", "B", category="multi_object_facing"),
    ]
    preds = [
        {"id": "LOC00001", "output": "A"},
        {"id": "LOC00001-1", "output": "B"},
        {"id": "MOB00001", "output": "B"},
    ]
    by = score("3dsrbench", gold, preds, by=["category", "subtype"])["by"]
    assert list(by) == [
        "category=location",
        "category=multi_object",
        "subtype=location_above",
        "subtype=multi_object_facing",
    ]
    assert by["category=location"] == {"vanilla": 50.0, "circular": 0.0, "flip": 50.0, "flip_circular": 0.0}
    assert by["subtype=multi_object_facing"]["circular"] == 100.0


def test_a_circular_group_takes_the_tag_of_its_first_row():
    gold = [row("MIX00001", "A", category="location_above"), row("MIX00001-1", "A", category="height_higher")]
    preds = [{"id": "MIX00001", "output": "A"}, {"id": "MIX00001-1", "output": "A"}]
    by = score("3dsrbench", gold, preds, by=["category"])["by"]
    assert by["category=location"]["circular"] == 100.0
    assert by["category=height"]["circular"] is None


def test_a_gold_group_overrides_the_id_convention():
    gold = [row("q1", "A", group="G"), row("q2", "A", group="G")]
    preds = [{"id": "q1", "output": "A"}, {"id": "q2", "output": "B"}]
    assert score("3dsrbench", gold, preds)["overall"]["circular"] == 0.0


def test_letters_refer_to_the_order_shown():
    gold = [row("Q0000001", "A", ("left", "right"))]
    preds = [{"id": "Q0000001", "output": "B", "choices": ["right", "left"]}]
    assert score("3dsrbench", gold, preds)["overall"]["vanilla"] == 100.0
    wrong_options = [{"id": "Q0000001", "output": "B", "choices": ["up", "down"]}]
    result = score("3dsrbench", gold, wrong_options)
    assert result["overall"]["vanilla"] == 0.0
    assert result["errors"] == ["id 'Q0000001': 'choices' shown are not a reordering of the gold choices"]


@given(
    st.lists(
        st.tuples(st.sampled_from([2, 4]), st.lists(st.booleans(), min_size=4, max_size=4)),
        min_size=1,
        max_size=6,
    )
)
def test_a_question_is_circular_correct_iff_every_rotation_is_correct(questions):
    gold, preds, expected = [], [], {}
    for number, (n_choices, correct) in enumerate(questions):
        base = f"Q{number:07d}"
        rotations = correct[:n_choices]
        expected[f"q={number}"] = 100.0 if all(rotations) else 0.0
        for rotation, is_correct in enumerate(rotations):
            item_id = base if rotation == 0 else f"{base}-{rotation}"
            choices = ["higher", "lower", "same", "unknown"][:n_choices]
            answer = "ABCD"[rotation % n_choices]
            gold.append({**row(item_id, answer, choices), "tags": {"q": number}})
            chosen = answer if is_correct else "ABCD"[(rotation + 1) % n_choices]
            preds.append({"id": item_id, "output": f"The answer is {chosen}"})
    result = score("3dsrbench", gold, preds, by=["q"])
    assert {key: metrics["circular"] for key, metrics in result["by"].items()} == expected
