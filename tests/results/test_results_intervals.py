"""Intervals on the platform: a finished run's stored scores carry each metric's interval and its
units' tallies; the results tables pair runs on them, so "best" is bold only where a paired test
separates it, and the pages and API return the intervals without the long tallies."""

import pytest

from modeleval import services as modeleval_services
from modeleval.models import Prediction, Run
from modeleval.runs import run_scoring
from results import services as results_services
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


def finished_run(bench, items, model, right: set[int]) -> Run:
    run = Run.objects.create(model=model, benchmark=bench, total=len(items), status=Run.Status.SCORING)
    run.items.set(items)
    Prediction.objects.bulk_create(
        Prediction(run=run, item=item, output="window" if k in right else "door") for k, item in enumerate(items)
    )
    run_scoring.score_run(run.pk)
    run.refresh_from_db()
    return run


@pytest.fixture
def bench_with_runs():
    bench = BenchmarkFactory()
    scene = SceneFactory(benchmark=bench)
    items = [ItemFactory(change=None, scene=scene, benchmark=bench, external_id=f"q{k}", answers=["window"],
                         tags={"change_type": "movement" if k % 2 else "removal", "question_type": ["Direction"]})
             for k in range(60)]
    model = modeleval_services.ensure_baseline_model()
    strong = finished_run(bench, items, model, set(range(54)))
    weak = finished_run(bench, items, model, set(range(15)))
    return bench, strong, weak


def test_runs_store_intervals_and_the_best_is_bold_where_the_paired_test_separates_it(client, bench_with_runs):
    bench, strong, weak = bench_with_runs
    assert strong.scores["overall"]["EM"] == 90.0
    low, high = strong.scores["overall"]["ci"]["EM"]
    assert low < 90.0 < high and strong.scores["units"]["ids"][:2] == ["q0", "q1"]
    data = results_services.benchmark_results(bench)
    table = data["tables"][0]
    rows = {row["name"]: row for row in table["rows"]}
    strong_row = next(row for name, row in rows.items() if f"run {strong.pk})" in name)
    overall_em = strong_row["cells"][0][0]
    assert overall_em["best"] and overall_em["separated"] is True and overall_em["ci"] == [low, high]
    assert overall_em["interval"].startswith("± ")
    assert "paired bootstrap" in table["best_rule"]
    assert all("units" not in (row["result"] or {}) for row in data["rows"])

    client.force_login(UserFactory(role="admin"))
    page = client.get(f"/benchmarks/{bench.slug}/results/")
    assert page.status_code == 200
    assert table["best_rule"].encode() in page.content and overall_em["interval"].encode() in page.content
    assert b'"units"' not in client.get(f"/api/v1/benchmarks/{bench.slug}/results/").content


def test_the_planner_gives_participants_per_cell_from_the_pilot_or_an_assumed_half(client, bench_with_runs):
    from scoring.comparison import participants_needed

    bench, _, _ = bench_with_runs
    client.force_login(UserFactory(role="admin"))
    plan = client.get(f"/api/v1/benchmarks/{bench.slug}/plan/?half_width=5&items_per_participant=20&icc=0.1")
    assert plan.status_code == 200, plan.content
    plan = plan.json()
    assert plan["pilot"] is None and plan["metric"] == "EM" and plan["cells"][0]["column"] == "Overall"
    expected = participants_needed(0.5, 5.0, 20, 0.1)
    assert all(cell["assumed"] and cell["participants"] == expected["participants"] for cell in plan["cells"])
    assert plan["participants"] == expected["participants"]
    for query, field in [("half_width=0&items_per_participant=20", "half_width"),
                         ("half_width=5&items_per_participant=x", "items_per_participant"),
                         ("half_width=5&items_per_participant=20&icc=2", "icc")]:
        refused = client.get(f"/api/v1/benchmarks/{bench.slug}/plan/?{query}")
        assert refused.status_code == 400 and field in refused.json(), query
    client.force_login(UserFactory(role="reviewer"))
    assert client.get(f"/api/v1/benchmarks/{bench.slug}/plan/?half_width=5&items_per_participant=20").status_code == 403
