"""The human row in the tables (#31): a model row is set against it on the items both answered, the
participants resampled (not answers); and a human row of one participant says its interval is not
available rather than printing "± 0.00" (page, API, CSV, LaTeX)."""

import pytest

import scoring
from core import roles
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.results import study_results
from humaneval.services.sessions import answer_item, current_item, start_session
from modeleval import services as modeleval_services
from modeleval.models import Prediction, Run
from modeleval.runs import run_scoring
from results import services as results_services
from scoring.comparison import clustered_pairs, paired_tallies
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db
NOT_AVAILABLE = "not available (n=1 participant)"


def bench_and_run(n_items=10, right=range(9)):
    bench = BenchmarkFactory()
    scene = SceneFactory(benchmark=bench)
    items = [ItemFactory(change=None, scene=scene, benchmark=bench, external_id=f"q{k}", answers=["window"],
                         tags={"change_type": "movement" if k % 2 else "removal", "question_type": ["Direction"]})
             for k in range(n_items)]
    run = Run.objects.create(model=modeleval_services.ensure_baseline_model(), benchmark=bench, total=n_items,
                             status=Run.Status.SCORING)
    run.items.set(items)
    Prediction.objects.bulk_create(Prediction(run=run, item=item, output="window" if k in right else "door")
                                   for k, item in enumerate(items))
    run_scoring.score_run(run.pk)
    return bench, items, run


def human_study(bench, items, right_per_participant: list[set[int]]):
    """Each participant answers every item, right on its set of item positions."""
    study = create_study(bench, StudyDesign("Pilot", [item.pk for item in items], shuffle_choices=False,
                                            participants_per_item=len(right_per_participant)), None)
    position = {item.pk: k for k, item in enumerate(items)}
    for right in right_per_participant:
        evaluator = UserFactory(role=roles.EVALUATOR)
        session = start_session(study, evaluator)
        for _ in items:
            response = current_item(session.pk, evaluator).on_screen.response
            answer_item(session.pk, evaluator, response.item_id,
                        "window" if position[response.item_id] in right else "door")
        current_item(session.pk, evaluator)
    return study


def human_row(table):
    return next(row for row in table["rows"] if row["kind"] == "human")


def test_a_one_participant_human_row_says_its_interval_is_not_available(client):
    bench, items, _ = bench_and_run()
    human_study(bench, items, [set(range(6))])
    data = results_services.benchmark_results(bench)
    overall = human_row(data["tables"][0])["cells"][0][0]
    assert overall["value"] == 60.0 and overall["ci"] is None and overall["interval"] == NOT_AVAILABLE

    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/benchmarks/{bench.slug}/results/").content.decode()
    human_html = page[page.index('class="human-row"'):].split("</tr>")[0]
    assert f"60.0 <span class=\"ci muted\">{NOT_AVAILABLE}</span>" in human_html and "± 0.00" not in human_html
    api = client.get(f"/api/v1/benchmarks/{bench.slug}/results/").json()
    assert human_row(api["tables"][0])["cells"][0][0]["interval"] == NOT_AVAILABLE
    csv_text = client.get(f"/benchmarks/{bench.slug}/results/?format=csv").content.decode()
    human_line = next(line for line in csv_text.splitlines() if line.startswith("Human"))
    assert f"60.0,{NOT_AVAILABLE},{NOT_AVAILABLE}" in human_line
    latex = client.get(f"/benchmarks/{bench.slug}/results/?format=latex").content.decode()
    human_tex = next(line for line in latex.splitlines() if line.startswith("Human"))
    assert f"60.00 ({NOT_AVAILABLE})" in human_tex and r"$\pm$ 0.00" not in human_tex
    # the model row beside it keeps its interval
    model = next(row for row in data["tables"][0]["rows"] if row["kind"] == "model")
    assert model["cells"][0][0]["interval"].startswith("± ")


def test_two_participants_give_the_human_row_an_interval():
    bench, items, _ = bench_and_run()
    human_study(bench, items, [set(range(2)), set(range(8))])
    overall = human_row(results_services.benchmark_results(bench)["tables"][0])["cells"][0][0]
    assert overall["value"] == 50.0 and overall["ci"][0] < 50.0 < overall["ci"][1]
    assert overall["interval"].startswith("± ")


def test_models_are_set_against_the_human_row_with_participants_resampled(client):
    bench, items, _ = bench_and_run(n_items=20, right=range(19))
    # participants differ a lot: the clustered comparison resamples them, not their 20 answers each
    study = human_study(bench, items, [set(range(4)), set(range(18)), set(range(6)), set(range(16))])
    table = results_services.benchmark_results(bench)["tables"][0]
    overall = [entry for entry in table["human_comparisons"] if entry["column"] == "Overall" and entry["metric"] == "EM"]
    assert len(overall) == 1
    entry = overall[0]
    assert entry["difference"] == 95.0 - 55.0 and entry["n_participants"] == 4
    low, high = entry["ci"]
    assert low <= 40.0 <= high and entry["p_holm"] is not None and entry["separated"] in (True, False)
    # every comparison of the table is Holm-corrected together: an adjusted p is never under its raw p
    assert all(c["p_holm"] >= c["p_value"] for c in table["human_comparisons"])

    # the same answers paired item by item, as if all 80 answers were independent, give a narrower interval
    human = study_results(study, units=True)
    column = "|EM"
    assert human["units"]["clusters"].count(human["units"]["clusters"][0]) == 20
    tallies = human["units"]["tallies"][column]
    model_right = {f"q{k}": 1.0 if k < 19 else 0.0 for k in range(20)}
    names = [human["units"]["items"][u] for u in tallies["unit"]]
    unclustered = paired_tallies([model_right[name] for name in names], [1] * len(names), tallies["sum"],
                                 tallies["n"], resamples=1000)
    assert unclustered["difference"] == entry["difference"]
    assert unclustered["ci"][1] - unclustered["ci"][0] < high - low

    client.force_login(UserFactory(role=roles.REVIEWER))
    api = client.get(f"/api/v1/benchmarks/{bench.slug}/results/").json()
    assert api["tables"][0]["human_comparisons"][0]["n_participants"] == 4
    assert all("units" not in (row["result"] or {}) for row in api["rows"])
    client.force_login(UserFactory(role=roles.ADMIN))
    assert b"Models against the human row" in client.get(f"/benchmarks/{bench.slug}/results/").content


def test_clustered_pairs_on_known_tallies():
    """A model right on q0 and q1, wrong on q2; two participants: one answered q0 (wrong) and q2 (right),
    the other q1 (right). Paired on their answers: model 2/3, humans 2/3 right: no difference; a model
    item no participant answered is left out."""
    human = {"ids": ["s1/q0", "s1/q2", "s2/q1"], "clusters": ["a", "a", "b"],
             "items": ["q0", "q2", "q1"],
             "tallies": {"|EM": {"unit": [0, 1, 2], "sum": [0, 1, 1], "n": [1, 1, 1]}}}
    model = {"ids": ["q0", "q1", "q2", "q3"], "tallies": {"|EM": {"unit": [0, 1, 2, 3], "sum": [1, 1, 0, 1],
                                                                 "n": [1, 1, 1, 1]}}}
    found = clustered_pairs(human, model, "|EM", resamples=500)
    assert found["difference"] == 0.0 and found["n_clusters"] == 2 and found["p_value"] == 1.0
    one = clustered_pairs({**human, "clusters": ["a", "a", "a"]}, model, "|EM")
    assert one["ci"] is None and one["p_value"] is None and one["n_clusters"] == 1
    assert clustered_pairs(human, model, "movement|EM") is None


def test_a_clustered_interval_needs_two_participants_in_its_group():
    gold = [{"id": f"r{k}", "answer": "window", "answer_format": "open", "tags": {"participant": "p1" if k < 3 else "p2",
                                                        "change_type": "removal" if k < 3 else "movement"}}
            for k in range(6)]
    preds = [{"id": f"r{k}", "output": "window" if k % 2 else "door"} for k in range(6)]
    result = scoring.score("hypo3d", gold, preds, by=["change_type"], sbert=False, ci=0.95, cluster="participant")
    assert result["overall"]["ci"]["EM"] is not None  # two participants overall
    assert result["by"]["change_type=removal"]["ci"]["EM"] is None  # one participant's group
    plain = scoring.score("hypo3d", gold, preds, by=["change_type"], sbert=False, ci=0.95)
    assert plain["by"]["change_type=removal"]["ci"]["EM"] is not None  # items as units: always an interval
