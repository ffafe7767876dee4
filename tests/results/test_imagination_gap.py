"""#47 the imagination gap (HypoLab's, not in any paper) on a constructed example: a model's run imagining
each change and its run given the changed scene, a human study of each condition, with known exact
matches per item; the table's differences per change type are the hand-computed ones and its paired
results the paired bootstrap on those items (results API and the results page)."""

import pytest

from benchmarks.services import store_asset
from core import roles
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.sessions import answer_item, current_item, start_session
from modeleval import services as modeleval_services
from modeleval.models import Prediction, Run
from modeleval.runs import run_scoring
from results import services as results_services
from scoring.comparison import paired_tallies
from scoring.ranking import TABLE_RESAMPLES
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

EDIT = {"objects": [{"instance_id": 2, "translation": [0.5, 0.0, 0.0]}], "added": []}
# q0-q3 movement, q4-q7 removal; the items each condition gets right
IMAGINED_RIGHT, CHANGED_RIGHT = {0, 4, 5}, {0, 1, 2, 3, 4, 5}
# by hand: All 3/8 -> 6/8 (+37.5), movement 1/4 -> 4/4 (+75), removal 2/4 -> 2/4 (0)
EXPECTED = {"All": (37.5, 75.0, 37.5), "Movement": (25.0, 100.0, 75.0), "Removal": (50.0, 50.0, 0.0)}


@pytest.fixture
def bench_items():
    bench = BenchmarkFactory()
    scene = SceneFactory(benchmark=bench)
    items = [ItemFactory(change__scene=scene, change__edit=EDIT, change__change_type="movement" if k < 4 else "removal",
                         benchmark=bench, external_id=f"q{k}", answers=["window"],
                         tags={"change_type": "movement" if k < 4 else "removal", "question_type": ["Direction"]})
             for k in range(8)]
    for item in items:
        store_asset(scene, "topview_plain", "after.png", b"after", {"after_state": item.change_id})
    return bench, items


def scored_run(bench, items, right, inputs, **fields):
    run = Run.objects.create(model=modeleval_services.ensure_baseline_model(), benchmark=bench, total=len(items),
                             status=Run.Status.SCORING, inputs=inputs, **fields)
    run.items.set(items)
    Prediction.objects.bulk_create(Prediction(run=run, item=item, output="window" if k in right else "door")
                                   for k, item in enumerate(items))
    run_scoring.score_run(run.pk)
    return run


def human_study(bench, items, right, scene_state):
    study = create_study(bench, StudyDesign(f"Study {scene_state}", [item.pk for item in items], shuffle_choices=False,
                                            participants_per_item=1, scene_state=scene_state), None)
    position = {item.pk: k for k, item in enumerate(items)}
    evaluator = UserFactory(role=roles.EVALUATOR)
    session = start_session(study, evaluator)
    for _ in items:
        response = current_item(session.pk, evaluator).on_screen.response
        answer_item(session.pk, evaluator, response.item_id, "window" if position[response.item_id] in right else "door")
    current_item(session.pk, evaluator)
    return study


def paired_by_hand(items, key):
    """The paired bootstrap on the column's items, each scored 0/1, changed minus imagined."""
    chosen = [k for k, item in enumerate(items) if key is None or item.tags["change_type"] == key]
    ones = [1] * len(chosen)
    return paired_tallies([int(k in CHANGED_RIGHT) for k in chosen], ones, [int(k in IMAGINED_RIGHT) for k in chosen],
                          ones, resamples=TABLE_RESAMPLES)


def test_the_gap_table_has_the_hand_computed_differences_and_paired_results(client, bench_items):
    bench, items = bench_items
    imagined = scored_run(bench, items, IMAGINED_RIGHT, {"scene_state": "imagined"})
    scored_run(bench, items, {1}, {}, settings={"temperature": 0.5})  # closer, but another setting: no partner
    changed = scored_run(bench, items, CHANGED_RIGHT, {"scene_state": "changed"})
    human_study(bench, items, IMAGINED_RIGHT, "imagined")
    human_study(bench, items, CHANGED_RIGHT, "changed")

    gap = results_services.benchmark_results(bench)["imagination_gap"]
    assert gap["columns"] == ["All", "Movement", "Removal", "Attribute", "Addition", "Replacement"]
    model, human = gap["rows"]
    assert (model["kind"], model["changed"], model["imagined"]) == ("model", changed.pk, imagined.pk)
    assert human["kind"] == "human" and human["name"] == "Human — Study changed"
    for row in (model, human):
        cells = {cell["column"]: cell for cell in row["cells"]["EM"]}
        for column, (before, after, difference) in EXPECTED.items():
            cell = cells[column]
            assert (cell["imagined"], cell["changed"], cell["difference"]) == (before, after, difference), column
            by_hand = paired_by_hand(items, None if column == "All" else column.lower())
            assert (cell["ci"], cell["p_value"], cell["n_items"]) == (by_hand["ci"], by_hand["p_value"],
                                                                    by_hand["n_units"])
        assert cells["Removal"]["p_value"] == 1.0  # no difference
        assert cells["Movement"]["ci"][0] > 0  # every resample of the movement items favours the changed scene
        assert cells["Attribute"]["difference"] is None  # no item of the type
        assert set(row["cells"]) == {"EM", "PM"}
    tested = [cell for row in gap["rows"] for line in row["cells"].values() for cell in line if cell["p_value"]]
    assert all(cell["p_holm"] >= cell["p_value"] for cell in tested)

    client.force_login(UserFactory(role=roles.ADMIN))
    api = client.get(f"/api/v1/benchmarks/{bench.slug}/results/").json()
    assert api["imagination_gap"]["rows"][0]["cells"]["EM"][1]["difference"] == 75.0
    page = client.get(f"/benchmarks/{bench.slug}/results/").content.decode()
    table = page[page.index('id="imagination-gap"'):].split("</section>")[0]
    assert 'id="imagination-gap-table"' in table and table.count('class="model-row gap-row"') == 2
    assert table.count('class="human-row gap-row"') == 2
    assert '<strong class="gap-difference">+75.0</strong>' in table and "25.0 → 100.0" in table


def test_no_gap_table_without_a_changed_scene_pair(client, bench_items):
    bench, items = bench_items
    scored_run(bench, items, IMAGINED_RIGHT, {})
    scored_run(bench, items, CHANGED_RIGHT, {"scene_state": "changed", "top_view": "not_aligned"})  # differs more
    assert results_services.benchmark_results(bench)["imagination_gap"] is None
    client.force_login(UserFactory(role=roles.ADMIN))
    assert 'id="imagination-gap"' not in client.get(f"/benchmarks/{bench.slug}/results/").content.decode()
