"""Item analysis: difficulty per side, the corrected item-total correlation, and the flags."""

import numpy as np
import pytest

from scoring.items import item_analysis


def graded(matrix, kinds):
    """Rows: respondents; columns: items i0, i1, ..."""
    return [(f"r{r}", kinds[r], f"i{c}", score) for r, row in enumerate(matrix) for c, score in enumerate(row)]


def test_flags_difficulty_and_discrimination_on_a_small_table():
    matrix = [
        # i0 all right, i1 none right, i2 humans only, i3 models only, i4 and i5 go together
        [1, 0, 1, 0, 1, 1],
        [1, 0, 1, 0, 1, 1],
        [1, 0, 1, 0, 0, 0],
        [1, 0, 0, 1, 1, 1],
        [1, 0, 0, 1, 0, 0],
        [1, 0, 0, 1, 0, 1],
    ]
    kinds = ["human"] * 3 + ["model"] * 3
    found = {entry["id"]: entry for entry in item_analysis(graded(matrix, kinds))}
    assert found["i0"]["flags"] == ["all_right"] and found["i1"]["flags"] == ["none_right"]
    assert found["i2"]["flags"] == ["humans_over_models"] and found["i3"]["flags"] == ["models_over_humans"]
    assert found["i4"]["flags"] == [] and found["i4"]["human_difficulty"] == round(2 / 3, 4)
    assert found["i4"]["model_difficulty"] == round(1 / 3, 4) and found["i4"]["n_human"] == 3
    # nobody differs on i0: no correlation to compute
    assert found["i0"]["discrimination"] is None
    rest = [np.mean([s for c, s in enumerate(row) if c != 4]) for row in matrix]
    expected = np.corrcoef([row[4] for row in matrix], rest)[0, 1]
    assert found["i4"]["discrimination"] == pytest.approx(expected, abs=1e-4) and expected > 0.5


def test_baselines_count_apart_from_models():
    # a random guesser wrong everywhere: as a model it would flag i0 "humans over models"
    found = {entry["id"]: entry for entry in item_analysis(graded([[1, 1], [1, 0], [0, 0]], ["human", "model", "baseline"]))}
    assert found["i0"]["flags"] == ["all_right"] and found["i0"]["baseline_difficulty"] == 0
    assert found["i0"]["n_model"] == 1 and found["i0"]["n_baseline"] == 1
    assert found["i1"]["flags"] == ["humans_over_models"] and found["i1"]["model_difficulty"] == 0


def test_a_bad_kind_is_refused():
    with pytest.raises(ValueError, match="human"):
        item_analysis([("r", "robot", "i", 1)])
