"""Agreement statistics against hand-computed values, and consensus deciding what is released."""

import pytest

from benchmarks.releases.life import export_release
from core import roles
from review import agreement, consensus
from tests.factories import ItemFactory, UserFactory

# Fleiss (1971) as reproduced on Wikipedia's "Fleiss' kappa" page: 10 subjects, 14 raters, 5 categories.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_matches_the_textbook_table():
    assert agreement.item_agreement(FLEISS_TABLE[1]) == pytest.approx(0.253, abs=5e-4)
    assert agreement.percent_agreement(FLEISS_TABLE) == pytest.approx(0.378, abs=5e-4)
    assert agreement.fleiss_kappa(FLEISS_TABLE) == pytest.approx(0.210, abs=5e-4)


def test_small_example_computed_by_hand():
    # P_i = 1, 1/3, 1 -> P-bar = 7/9; p_a = 5/9, p_b = 4/9 -> P_e = 41/81; kappa = (63-41)/(81-41) = 0.55.
    labels = [["a", "a", "a"], ["a", "a", "b"], ["b", "b", "b"]]
    categories, rows = agreement.count_table(labels)
    assert categories == ["a", "b"] and rows == [[3, 0], [2, 1], [0, 3]]
    assert agreement.percent_agreement(rows) == pytest.approx(7 / 9)
    assert agreement.fleiss_kappa(rows) == pytest.approx(0.55)
    summary = agreement.agreement_summary(labels)
    assert {key: summary[key] for key in ("n_items", "percent_agreement", "fleiss_kappa")} == {
        "n_items": 3, "percent_agreement": 0.7778, "fleiss_kappa": 0.55}


def test_edge_cases_of_agreement():
    assert agreement.fleiss_kappa([[3, 0], [3, 0]]) == 1.0  # everyone agrees on one category
    assert agreement.fleiss_kappa([[1, 0]]) is None  # one answer says nothing about agreement
    assert agreement.percent_agreement([]) is None
    assert agreement.answer_label(" The Window. ", False) == agreement.answer_label("window", False)
    assert agreement.answer_label("c, a", True) == agreement.answer_label(["A", "C"], True) == "A,C"
    assert agreement.consensus_reached(["a", "a", "b"], 2 / 3) and not agreement.consensus_reached(["a", "b", "c"], 2 / 3)


@pytest.mark.django_db
def test_items_without_consensus_are_flagged_and_left_out_of_releases_until_adjudicated():
    agreed = ItemFactory(answers=["window"])
    disputed = ItemFactory(change__scene__benchmark=agreed.benchmark, answers=["desk"])
    answerers = [UserFactory(role=roles.REVIEWER) for _ in range(3)]
    for user, answer in zip(answerers, ["window", "Window.", "the window"], strict=True):
        consensus.record_independent_answer(agreed.pk, user, answer)
    for user, answer in zip(answerers, ["desk", "chair", "bookshelf"], strict=True):
        consensus.record_independent_answer(disputed.pk, user, answer)
    agreed.refresh_from_db()
    disputed.refresh_from_db()
    assert agreed.consensus == "reached" and agreed.agreement == 1.0
    assert disputed.consensus == "flagged" and disputed.agreement == 0.0

    first = export_release(agreed.benchmark, "1.0.0", None, inline=True)
    assert list(first.items.all()) == [agreed]

    adjudicator = UserFactory(role=roles.REVIEWER)
    consensus.adjudicate_item(disputed.pk, adjudicator, disputed.version, ["desk"])
    second = export_release(agreed.benchmark, "1.1.0", None, inline=True)
    assert set(second.items.all()) == {agreed, disputed}
    assert second.diff == {"added": [str(disputed.pk)], "removed": [], "changed": []}


@pytest.mark.django_db
def test_majority_that_contradicts_the_gold_is_flagged():
    item = ItemFactory(answers=["window"])
    for _ in range(3):
        consensus.record_independent_answer(item.pk, UserFactory(), "desk")
    item.refresh_from_db()
    assert item.consensus == "flagged" and item.agreement == 1.0


@pytest.mark.django_db
def test_agreement_report_per_question_type_and_benchmark(client):
    direction = ItemFactory(answers=["window"], tags={"question_type": ["Direction"]})
    scale = ItemFactory(change__scene__benchmark=direction.benchmark, answers=["2"], tags={"question_type": ["Scale"]})
    users = [UserFactory() for _ in range(3)]
    for user, a, b in zip(users, ["window", "window", "window"], ["2", "3", "2"], strict=True):
        consensus.record_independent_answer(direction.pk, user, a)
        consensus.record_independent_answer(scale.pk, user, b)
    client.force_login(UserFactory(role=roles.REVIEWER))
    report = client.get(f"/api/v1/benchmarks/{direction.benchmark.slug}/agreement/").json()
    assert report["by_question_type"]["Direction"]["percent_agreement"] == 1.0
    assert report["by_question_type"]["Scale"]["percent_agreement"] == pytest.approx(0.3333, abs=1e-4)
    # Both items: P-bar = (1 + 1/3) / 2; labels window x3, 2 x2, 3 x1 -> P_e = (9 + 4 + 1) / 36.
    pe = 14 / 36
    assert report["benchmark"]["fleiss_kappa"] == pytest.approx(round((2 / 3 - pe) / (1 - pe), 4))
    assert report["flagged"] == 0


@pytest.mark.django_db
def test_authors_do_not_answer_their_own_items_and_nobody_answers_twice(client):
    author = UserFactory(role=roles.REVIEWER)
    item = ItemFactory(author=author)
    client.force_login(author)
    own = client.post(f"/api/v1/items/{item.pk}/answers/", {"answer": "window"}, content_type="application/json")
    assert own.status_code == 403
    other = UserFactory(role=roles.REVIEWER)
    client.force_login(other)
    assert client.post(f"/api/v1/items/{item.pk}/answers/", {"answer": "window"},
                       content_type="application/json").status_code == 201
    again = client.post(f"/api/v1/items/{item.pk}/answers/", {"answer": "desk"}, content_type="application/json")
    assert again.status_code == 409 and "item" in again.json()
    assert item.independent_answers.count() == 1


@pytest.mark.django_db
def test_agreement_page_lists_flagged_items(client):
    item = ItemFactory(answers=["window"])
    for answer in ("desk", "chair", "window"):
        consensus.record_independent_answer(item.pk, UserFactory(), answer)
    client.force_login(UserFactory(role=roles.REVIEWER))
    page = client.get(f"/review/agreement/{item.benchmark.slug}/").content.decode()
    assert 'id="agreement-table"' in page and f'href="/review/items/{item.pk}/"' in page
    assert "1 flagged" in page


@pytest.mark.django_db
def test_the_agreement_page_says_what_it_needs_and_how_many_answers_overlap(client):
    once = ItemFactory(answers=["window"])
    twice = ItemFactory(change__scene__benchmark=once.benchmark, answers=["desk"])
    client.force_login(UserFactory(role=roles.REVIEWER))
    empty = client.get(f"/review/agreement/{once.benchmark.slug}/").content.decode()
    assert "two or more people answered it" in empty and "Nothing can be measured yet" in empty
    first, second = UserFactory(), UserFactory()
    consensus.record_independent_answer(once.pk, first, "window")
    consensus.record_independent_answer(twice.pk, first, "desk")
    consensus.record_independent_answer(twice.pk, second, "desk")
    assert consensus.agreement_report(once.benchmark)["overlap"] == {
        "n_answers": 3, "n_answerers": 2, "n_items_answered": 2, "n_items_overlapping": 1, "answers_needed": 3}
    page = client.get(f"/review/agreement/{once.benchmark.slug}/").content.decode()
    assert '<span id="overlapping-items">1</span> item answered by two or more' in page
    assert "Nothing can be measured yet" not in page
