"""Paired comparisons against statsmodels (McNemar, Holm), the paired bootstrap on known cases, and the
study planner against the normal approximation."""

import random

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar as statsmodels_mcnemar
from statsmodels.stats.multitest import multipletests

from scoring.comparison import (
    answers_needed,
    holm,
    icc_from_pilot,
    mcnemar,
    normal_half_width,
    paired_bootstrap,
    participants_needed,
    plan_cells,
)


def paired_rows(both, only_a, only_b, neither):
    a = [1] * both + [1] * only_a + [0] * only_b + [0] * neither
    b = [1] * both + [0] * only_a + [1] * only_b + [0] * neither
    return a, b


@pytest.mark.parametrize("cells", [(40, 12, 3, 45), (10, 0, 0, 5), (100, 25, 30, 45), (5, 1, 9, 2)])
@pytest.mark.parametrize("exact", [True, False])
def test_mcnemar_matches_statsmodels_on_the_same_table(cells, exact):
    both, only_a, only_b, neither = cells
    a, b = paired_rows(*cells)
    ours = mcnemar(a, b, exact=exact)
    if only_a + only_b:
        theirs = statsmodels_mcnemar([[both, only_a], [only_b, neither]], exact=exact, correction=True)
        assert ours["p_value"] == pytest.approx(theirs.pvalue, rel=1e-9)
        assert ours["statistic"] == pytest.approx(theirs.statistic)
    else:
        assert ours["p_value"] == 1.0
    assert ours["only_a"] == only_a and ours["only_b"] == only_b
    assert ours["difference"] == round(100 * (only_a - only_b) / sum(cells), 2)


def test_mcnemar_refuses_rows_of_different_lengths():
    with pytest.raises(ValueError):
        mcnemar([1, 0], [1])


@pytest.mark.parametrize("p_values", [[0.01, 0.04, 0.03, 0.5], [0.2, 0.2, 0.001], [0.04], [0.6, 0.01, 0.02, 0.9, 0.03]])
def test_holm_matches_statsmodels(p_values):
    expected = multipletests(p_values, method="holm")[1]
    assert holm(p_values) == pytest.approx(list(expected))


def test_the_paired_bootstrap_finds_no_difference_between_equal_rows():
    a = [random.Random(1).random() for _ in range(200)]
    result = paired_bootstrap(a, a)
    assert result["difference"] == 0 and result["p_value"] == 1.0 and result["ci"] == [0.0, 0.0]


def test_the_paired_bootstrap_agrees_with_mcnemar_on_a_clear_difference():
    a, b = paired_rows(300, 40, 10, 150)
    result = paired_bootstrap(a, b, seed=3)
    assert result["difference"] == 6.0 and result["ci"][0] > 0 and result["p_value"] < 0.01
    assert mcnemar(a, b)["p_value"] < 0.01
    close = paired_bootstrap(*paired_rows(300, 12, 10, 178), seed=3)
    assert close["ci"][0] < 0 < close["ci"][1] and close["p_value"] > 0.5


def test_the_paired_bootstrap_is_wider_when_rows_are_clustered_by_participants_who_differ():
    rng = random.Random(5)
    a, b, who = [], [], []
    for person in range(10):
        skill = 0.9 if person % 2 else 0.2
        for _ in range(40):
            a.append(int(rng.random() < skill))
            b.append(int(rng.random() < 0.5))
            who.append(person)
    plain = paired_bootstrap(a, b, seed=1)
    clustered = paired_bootstrap(a, b, units=who, seed=1)
    assert clustered["n_units"] == 10 and plain["n_units"] == 400
    assert clustered["ci"][1] - clustered["ci"][0] > plain["ci"][1] - plain["ci"][0]
    assert paired_bootstrap(a, b, units=who, seed=1) == clustered


def test_the_planner_gives_the_normal_approximations_n():
    # n = z^2 p (1 - p) / h^2: 0.5 at +-5 points, 95 % -> 384.1 -> 385
    assert answers_needed(0.5, 5.0) == 385
    for p, h in [(0.3, 4.0), (0.62, 2.1), (0.9, 3.0)]:
        n = answers_needed(p, h)
        assert normal_half_width(p, n) <= h < normal_half_width(p, n - 1)


def test_the_planner_scales_participants_by_the_design_effect():
    alone = participants_needed(0.6, 5.0, items_per_participant=50)
    clustered = participants_needed(0.6, 5.0, items_per_participant=50, icc=0.1)
    assert alone == {"answers": answers_needed(0.6, 5.0), "participants": -(-answers_needed(0.6, 5.0) // 50),
                     "design_effect": 1.0}
    assert clustered["design_effect"] == pytest.approx(5.9)
    assert clustered["answers"] == answers_needed(0.6, 5.0, design_effect=5.9)
    plan = plan_cells({"movement": 60.0, "removal": 85.0}, 5.0, items_per_participant=50)
    assert plan["movement"]["answers"] > plan["removal"]["answers"]


def test_the_pilot_icc_is_near_zero_for_alike_participants_and_large_for_different_ones():
    rng = np.random.default_rng(0)
    alike = [list((rng.random(50) < 0.6).astype(int)) for _ in range(20)]
    different = [list((rng.random(50) < (0.95 if k % 2 else 0.15)).astype(int)) for k in range(20)]
    assert icc_from_pilot(alike) < 0.05
    assert icc_from_pilot(different) > 0.4
