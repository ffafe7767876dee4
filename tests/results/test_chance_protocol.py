"""Chance rows follow the protocol of the runs beside them: items written on the platform, run under
CircularEval, give Random the probability of every rotation right (1/4 for two options), not 1/2."""

import pytest

from core import roles
from modeleval import services
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_random_under_circular_for_items_written_here(client, django_capture_on_commit_callbacks):
    benchmark = BenchmarkFactory(family="3dsrbench")
    for n in range(2):  # written here: no imported rotations, no benchmark ids
        ItemFactory(benchmark=benchmark, scene=None, change=None, answer_format="single", external_id="",
                    question=f"Is the cup left of plate {n}?", choices=["left", "right"], answers=["A"], tags={})
    client.force_login(UserFactory(role=roles.REVIEWER))
    vanilla = client.get(f"/api/v1/benchmarks/{benchmark.slug}/results/").json()
    assert next(r for r in vanilla["rows"] if r["name"] == "Random")["result"]["overall"]["vanilla"] == 50.0
    with django_capture_on_commit_callbacks(execute=True):
        services.launch_run(services.ensure_baseline_model().pk, benchmark, None, protocol={"circular": True})
    data = client.get(f"/api/v1/benchmarks/{benchmark.slug}/results/").json()
    chance = {row["name"]: row["result"]["overall"] for row in data["rows"] if row["kind"] == "chance"}
    assert chance["Random"]["circular"] == 25.0 and chance["Random++"]["circular"] == 50.0
