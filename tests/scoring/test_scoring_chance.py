"""Chance levels computed analytically: the papers' Random and Random++ rows."""

import pytest

from scoring import FAMILIES, chance_levels


def mcq(item_id, n_choices, answer="A", **extra):
    choices = ["one", "two", "three", "four", "five", "six"][:n_choices]
    return {"id": item_id, "answer_format": "single", "choices": choices, "answer": answer, **extra}


def test_3dsrbench_random_and_random_plus_plus_on_full_circular_groups():
    two = [mcq("TWO00001", 2), mcq("TWO00001-1", 2)]
    four = [mcq("FOUR0001", 4)] + [mcq(f"FOUR0001-{k}", 4) for k in (1, 2, 3)]
    levels = chance_levels("3dsrbench", two)
    assert levels["random"]["overall"]["circular"] == 25.0  # (1/2)^2
    assert levels["random++"]["overall"]["circular"] == 50.0  # one guess for both rotations
    levels = chance_levels("3dsrbench", four)
    assert levels["random"]["overall"] == {"vanilla": 25.0, "circular": 0.39, "flip": 25.0, "flip_circular": 0.39}
    assert levels["random++"]["overall"]["circular"] == 25.0


def test_3dsrbench_flips_are_independent_guesses_even_for_random_plus_plus():
    rows = [mcq("FLP00001", 2), mcq("FLP00001-1", 2), mcq("FLP00001-flip", 2), mcq("FLP00001-flip-1", 2)]
    levels = chance_levels("3dsrbench", rows)
    assert levels["random++"]["overall"] == {"vanilla": 50.0, "circular": 50.0, "flip": 25.0, "flip_circular": 25.0}
    assert levels["random"]["overall"]["flip_circular"] == 6.25


def test_causalspatial_guesses_uniformly_over_the_options_including_not_sure():
    rows = [mcq("Collision_Level_1_0", 3, not_sure="C"), mcq("Occlusion_Level_2_0", 4)]
    levels = chance_levels("causalspatial", rows, by=["task"])
    assert levels["random"]["overall"] == {"accuracy": 29.17, "not_sure_rate": 16.67}
    assert levels["random"]["by"]["task=collision"] == {"accuracy": 33.33, "not_sure_rate": 33.33}
    assert levels["random++"] == levels["random"]


def test_spatial457_uses_the_reference_random_answer_pools():
    rows = [
        {"id": "1", "answer_format": "open", "answer": "Yes"},
        {"id": "2", "answer_format": "open", "answer": "suv"},
        {"id": "3", "answer_format": "open", "answer": "7"},
        {"id": "4", "answer_format": "open", "answer": "cube"},
    ]
    levels = chance_levels("spatial457", rows)
    # yes/no 1/2; 5 car shapes among 21 shapes; one digit in ten; an unknown kind is never guessed
    assert levels["random"]["overall"]["accuracy"] == pytest.approx(
        100 * (1 / 2 + 5 / 21 + 1 / 10) / 4, abs=0.01
    )


def test_m3verse_one_uniform_option_scores_one_over_the_option_count():
    rows = [
        {"id": "1", "answer_format": "multi", "choices": ["a", "b", "c", "d"], "answer": ["A", "B"]},
        {
            "id": "2",
            "answer_format": "single",
            "choices": ["a", "No correct option is listed.", "c", "d", "e"],
            "answer": "B",
        },
    ]
    levels = chance_levels("m3verse", rows)
    assert levels["random"]["overall"] == {"score": 22.5, "hallucination_score": 20.0, "factual_score": 25.0}


def test_open_hypo3d_has_no_chance_level():
    levels = chance_levels("hypo3d", [{"id": "1", "answer_format": "open", "answer": "left"}])
    assert levels["random"] is None and levels["random++"] is None


def test_items_without_options_are_left_out_and_reported():
    levels = chance_levels("causalspatial", [{**mcq("Collision_Level_1_0", 3), "choices": []}])
    assert levels["n_items"] == 0
    assert levels["errors"] == ["id 'Collision_Level_1_0': no choices, so no chance level; left out"]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_answers_without_items(family):
    assert chance_levels(family, [])["n_items"] == 0
