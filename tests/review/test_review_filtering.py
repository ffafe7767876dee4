"""Bulk filtering of drafted questions: keep (possibly edited) or drop with a reason; keep rate per type."""

import pytest

from benchmarks.models import Item
from core import roles
from review import services
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def post(client, url, data):
    return client.post(url, data, content_type="application/json")


def drafts(benchmark=None, **kwargs):
    kwargs.setdefault("status", "draft")
    kwargs.setdefault("provenance", {"source": "model"})
    if benchmark is not None:
        kwargs["change__scene__benchmark"] = benchmark
    return ItemFactory(**kwargs)


def test_keep_edit_and_drop_and_the_keep_rate_per_type(client):
    reviewer = UserFactory(role=roles.REVIEWER)
    client.force_login(reviewer)
    kept = drafts(tags={"question_type": ["Direction"]})
    edited = drafts(kept.benchmark, tags={"question_type": ["Direction"]})
    dropped = drafts(kept.benchmark, tags={"question_type": ["Direction", "Scale"]})
    assert list(services.filtering_queue(reviewer)) == [kept, edited, dropped]
    assert post(client, f"/api/v1/items/{kept.pk}/filter/", {"action": "keep", "version": 1}).status_code == 200
    ok = post(client, f"/api/v1/items/{edited.pk}/filter/",
              {"action": "keep", "version": 1, "question": "Which object now stands left of the chair?"})
    assert ok.status_code == 200 and ok.json()["question"] == "Which object now stands left of the chair?"
    no_reason = post(client, f"/api/v1/items/{dropped.pk}/filter/", {"action": "drop", "version": 1})
    assert no_reason.status_code == 400 and "reason" in no_reason.json()
    assert Item.objects.get(pk=dropped.pk).status == "draft"
    assert post(client, f"/api/v1/items/{dropped.pk}/filter/",
                {"action": "drop", "version": 1, "reason": "Answerable from common sense."}).status_code == 200
    assert list(Item.objects.order_by("pk").values_list("status", flat=True)) == ["approved", "approved", "rejected"]
    assert edited.revisions.count() == 2
    rates = client.get(f"/api/v1/benchmarks/{kept.benchmark.slug}/keep-rates/").json()
    assert rates == {"Direction": {"kept": 2, "dropped": 1, "keep_rate": 0.6667},
                     "Scale": {"kept": 0, "dropped": 1, "keep_rate": 0.0}}
    page = client.get("/review/filtering/").content.decode()
    assert 'id="keep-rates"' in page and "67%" in page


def test_only_drafts_are_filtered_and_not_by_their_author(client):
    author = UserFactory(role=roles.REVIEWER)
    own = drafts(author=author)
    approved = ItemFactory(change__scene__benchmark=own.benchmark)
    client.force_login(author)
    assert post(client, f"/api/v1/items/{own.pk}/filter/", {"action": "keep", "version": 1}).status_code == 403
    client.force_login(UserFactory(role=roles.REVIEWER))
    again = post(client, f"/api/v1/items/{approved.pk}/filter/", {"action": "keep", "version": 1})
    assert again.status_code == 400 and "item" in again.json()
    stale = post(client, f"/api/v1/items/{own.pk}/filter/", {"action": "keep", "version": 5})
    assert stale.status_code == 409 and stale.json()["current"]["version"] == 1
