"""Krippendorff's alpha beside Fleiss' kappa: the published worked example, the package itself on
unequal rater counts, its bootstrap interval, and agreement of each answerer with the consensus."""

import math

import krippendorff
import numpy as np
import pytest

from review import agreement

NAN = math.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers, 12 units,
# values 1-5, some missing. Published: nominal 0.743, ordinal 0.815.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def labels_per_unit(reliability_data) -> list[list[str]]:
    units = zip(*reliability_data, strict=True)
    return [[str(int(value)) for value in unit if not math.isnan(value)] for unit in units]


def test_alpha_reproduces_the_published_worked_example():
    summary = agreement.agreement_summary(labels_per_unit(KRIPPENDORFF_2011))
    assert summary["krippendorff_alpha"] == pytest.approx(0.743, abs=5e-4)
    assert summary["krippendorff_alpha_ordinal"] == pytest.approx(0.815, abs=5e-4)
    # the unit with one value (unit 12) is not pairable: 11 items measured
    assert summary["n_items"] == 11


def test_alpha_equals_the_package_on_unequal_rater_counts_where_kappa_differs():
    rng = np.random.default_rng(4)
    labels = [list(rng.choice(["a", "b", "c"], size=rng.integers(2, 7), p=[0.6, 0.3, 0.1])) for _ in range(80)]
    coders = max(len(unit) for unit in labels)
    codes = {"a": 0, "b": 1, "c": 2}
    data = [[codes[unit[k]] if k < len(unit) else NAN for unit in labels] for k in range(coders)]
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    _, rows = agreement.count_table(labels)
    assert agreement.krippendorff_alpha(rows) == pytest.approx(expected)
    summary = agreement.agreement_summary(labels)
    assert summary["krippendorff_alpha"] == round(expected, 4)
    assert summary["krippendorff_alpha"] != summary["fleiss_kappa"]
    assert summary["krippendorff_alpha_ordinal"] is None  # letters have no order


def test_the_alpha_interval_holds_the_estimate_and_is_reproducible():
    labels = labels_per_unit(KRIPPENDORFF_2011) * 5
    summary = agreement.agreement_summary(labels)
    low, high = summary["krippendorff_alpha_ci"]
    assert low <= summary["krippendorff_alpha"] <= high and high - low > 0.05
    assert agreement.agreement_summary(labels) == summary
    low, high = summary["krippendorff_alpha_ordinal_ci"]
    assert low <= summary["krippendorff_alpha_ordinal"] <= high


def test_alpha_edge_cases():
    assert agreement.krippendorff_alpha([[3, 0], [2, 0]]) == 1.0
    assert agreement.krippendorff_alpha([[1, 0]]) is None
    assert agreement.alpha_interval([[3, 0], [2, 0]]) == [1.0, 1.0]
    assert agreement.agreement_summary([])["krippendorff_alpha"] is None


def test_each_answerer_is_compared_with_the_others_consensus():
    items = [
        {"ann": "a", "bob": "a", "cy": "b"},
        {"ann": "b", "bob": "b", "cy": "b"},
        {"ann": "c", "bob": "a", "cy": "a"},
        {"ann": "a"},
    ]
    assert agreement.consensus_agreement(items) == {
        "ann": {"n_items": 3, "agreement_with_consensus": round(2 / 3, 4)},
        "bob": {"n_items": 3, "agreement_with_consensus": 1.0},
        "cy": {"n_items": 3, "agreement_with_consensus": round(2 / 3, 4)},
    }


@pytest.mark.django_db
def test_the_agreement_report_and_page_carry_alpha_with_its_interval(client):
    from core import roles
    from review import consensus
    from tests.factories import ItemFactory, UserFactory

    first = ItemFactory(answers=["2"], tags={"question_type": ["Scale"]})
    second = ItemFactory(change__scene__benchmark=first.benchmark, answers=["3"], tags={"question_type": ["Scale"]})
    for user, a, b in zip([UserFactory() for _ in range(3)], ["2", "2", "3"], ["3", "3", "3"], strict=True):
        consensus.record_independent_answer(first.pk, user, a)
        consensus.record_independent_answer(second.pk, user, b)
    client.force_login(UserFactory(role=roles.REVIEWER))
    report = client.get(f"/api/v1/benchmarks/{first.benchmark.slug}/agreement/").json()
    expected = agreement.krippendorff_alpha([[2, 1], [0, 3]])
    assert report["benchmark"]["krippendorff_alpha"] == round(expected, 4)
    low, high = report["benchmark"]["krippendorff_alpha_ci"]
    assert low <= report["benchmark"]["krippendorff_alpha"] <= high
    assert report["benchmark"]["krippendorff_alpha_ordinal"] is not None
    # each answerer against the other two: the third answered "3" where the others said "2"
    assert sorted(a["agreement_with_consensus"] for a in report["by_answerer"]) == [0.5, 1.0, 1.0]
    assert all(a["n_items"] == 2 and not a["answerer"].isdigit() for a in report["by_answerer"])
    page = client.get(f"/review/agreement/{first.benchmark.slug}/")
    assert page.status_code == 200 and b"Krippendorff" in page.content and b"answerer-agreement" in page.content
