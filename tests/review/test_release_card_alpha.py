"""Krippendorff's alpha in the dataset card (#31): review answers the release export's
`release_card_extras` with the agreement of the release's items (benchmarks does not import review),
the same summary the agreement page gives, shown on the release page and written with the card."""

import pytest

from benchmarks.releases.life import export_release
from core import roles
from review import agreement, consensus
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_the_dataset_card_carries_krippendorffs_alpha_of_the_released_items(client):
    first = ItemFactory(answers=["window"], status="approved")
    bench = first.benchmark
    second = ItemFactory(change__scene__benchmark=bench, benchmark=bench, answers=["desk"], status="approved")
    third = ItemFactory(change__scene__benchmark=bench, benchmark=bench, answers=["door"], status="approved")
    answerers = [UserFactory(role=roles.REVIEWER) for _ in range(3)]
    labels = {first.pk: ["window", "window", "window"], second.pk: ["desk", "desk", "chair"],
              third.pk: ["door", "door"]}
    for item_id, answers in labels.items():
        for user, answer in zip(answerers, answers, strict=False):
            consensus.record_independent_answer(item_id, user, answer)
    release = export_release(bench, "1.0.0", None, inline=True)
    card = release.card["agreement"]
    expected = agreement.agreement_summary(list(labels.values()))
    assert card == expected and card["n_items"] == 3
    assert card["krippendorff_alpha"] is not None and card["krippendorff_alpha"] == expected["krippendorff_alpha"]
    assert card["fleiss_kappa"] is not None  # the kappa beside it

    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/releases/{release.pk}/").content.decode()
    assert 'id="card-alpha"' in page and str(card["krippendorff_alpha"]) in page


def test_a_release_without_independent_answers_says_alpha_is_not_measured():
    item = ItemFactory(status="approved")
    card = export_release(item.benchmark, "1.0.0", None, inline=True).card["agreement"]
    assert card["n_items"] == 0 and card["krippendorff_alpha"] is None
