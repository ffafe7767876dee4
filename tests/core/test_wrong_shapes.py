"""#44: serializers refuse wrong shapes with a 400 naming the field, and nothing is written: a campaign's
`question_types` is {fine type: [coarse types]} (a list was accepted, and every crowd submit in the
campaign then answered 500)."""

import pytest
from django.test import Client

from annotation.models import Campaign
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff():
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    return client


@pytest.mark.parametrize("shape", [["where", "what"], "where", 3, {"where": "not a list"}, {"where": [1, {"x": 1}]},
                                   {"where": ["a" * 101]}])
def test_a_campaigns_question_types_of_the_wrong_shape_are_refused(staff, shape):
    benchmark = BenchmarkFactory()
    scene = SceneFactory(benchmark=benchmark)
    payload = {"benchmark": benchmark.slug, "name": "Questions", "scenes": [scene.pk], "question_types": shape}
    answer = staff.post("/api/v1/campaigns/", payload, content_type="application/json")
    assert answer.status_code == 400 and "question_types" in answer.json(), answer.content[:300]
    assert not Campaign.objects.exists()
    good = staff.post("/api/v1/campaigns/", {**payload, "question_types": {"where": ["location"]}},
                      content_type="application/json")
    assert good.status_code == 201, good.content[:300]
    assert Campaign.objects.get().question_types == {"where": ["location"]}
