"""The leaderboard's radar chart by question type (Hypo3D Fig. 5): one series per human or model row
over the benchmark's question types, in the page as inline SVG and in the JSON export."""

import pytest

from core import roles
from frontend.radar import radar_svg
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.sessions import answer_item, current_item, start_session
from modeleval import services
from modeleval.analysis.labels import run_label
from modeleval.models import Prediction, Run
from modeleval.runs import run_scoring
from scoring import score
from scoring.tables import breakdowns, radar_chart
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

# (question types, gold, model output, human answer); an item of two types counts in each
ITEMS = [
    (["Scale"], "2", "two", "2"),
    (["Direction"], "left", "right", "left"),
    (["Semantic"], "chair", "the chair", "table"),
    (["Scale", "Direction"], "front", "front", "back"),
]
# EM by hand: model Scale 2/2, Direction 1/2, Semantic 1/1; human Scale 1/2, Direction 1/2, Semantic 0/1
AXES = ["Scale", "Direction", "Semantic"]  # the paper's order (Family.question_types)
MODEL_EM = [100.0, 50.0, 100.0]
HUMAN_EM = [50.0, 50.0, 0.0]


def test_radar_chart_takes_one_series_per_result_over_the_question_types():
    gold = [{"id": str(i), "answer_format": "open", "answer": answer, "tags": {"question_type": types}}
            for i, (types, answer, _, _) in enumerate(ITEMS)]
    model = score("hypo3d", gold, [{"id": str(i), "output": row[2]} for i, row in enumerate(ITEMS)],
                  by=breakdowns("hypo3d"), sbert=False)
    # a study that showed only the first two items has no Semantic value
    human = score("hypo3d", gold[:2], [{"id": str(i), "output": row[3]} for i, row in enumerate(ITEMS[:2])],
                  by=breakdowns("hypo3d"), sbert=False)
    chart = radar_chart("hypo3d", [("Model", "model", model), ("Human", "human", human)])
    assert chart == {
        "by": "question_type",
        "metric": "EM",
        "axes": AXES,
        "series": [
            {"name": "Model", "kind": "model", "values": MODEL_EM},
            {"name": "Human", "kind": "human", "values": [100.0, 100.0, None]},
        ],
    }
    svg = str(radar_svg(chart))
    assert svg.count('class="radar-series') == 2
    assert all(f">{axis}</tspan>" in svg for axis in AXES)
    assert "Human · Semantic: no items" in svg
    assert 'stroke-dasharray="6 3"' in svg  # the human row is dashed


@pytest.mark.parametrize(("family", "tag", "metric"), [
    ("3dsrbench", "category", "circular"),
    ("causalspatial", "task", "accuracy"),
    ("spatial457", "level", "accuracy"),
    ("m3verse", "capabilities", "score"),
])
def test_other_families_use_a_category_of_their_paper_layout(family, tag, metric):
    result = {"overall": {}, "by": {f"{tag}=b": {metric: 10.0}, f"{tag}=a": {metric: 20.0}, "other=x": {metric: 1}}}
    chart = radar_chart(family, [("Model", "model", result)])
    assert (chart["by"], chart["metric"], chart["axes"]) == (tag, metric, ["a", "b"])
    assert chart["series"][0]["values"] == [20.0, 10.0]
    assert tag in breakdowns(family)


def test_axis_labels_are_words_on_lines_that_fit_beside_the_rim():
    chart = {"by": "capabilities", "metric": "score", "axes": ["temporal understanding", "L1_single"],
             "series": [{"name": "Model", "kind": "model", "values": [50.0, 20.0]}]}
    svg = str(radar_svg(chart))
    assert ">temporal</tspan>" in svg and ">understanding</tspan>" in svg  # one line ran past the edge
    assert ">L1 single</tspan>" in svg and "L1_single" not in svg  # nor in the tooltips


def test_no_values_draw_no_chart():
    assert radar_svg(radar_chart("hypo3d", [("Old run", "model", {"overall": {"EM": 1.0}, "by": {}})])) == ""


@pytest.mark.django_db
def test_leaderboard_page_and_json_carry_the_radar_of_human_and_model_rows(client):
    benchmark = BenchmarkFactory(family="hypo3d")
    items = [ItemFactory(change__scene__benchmark=benchmark, answers=[answer],
                         tags={"change_type": "movement", "question_type": types})
             for types, answer, _, _ in ITEMS]
    rows = {item.pk: row for item, row in zip(items, ITEMS, strict=True)}

    run = Run.objects.create(model=services.ensure_baseline_model(), benchmark=benchmark, total=len(items),
                             status=Run.Status.SCORING)
    run.items.set(items)
    Prediction.objects.bulk_create([Prediction(run=run, item=item, output=rows[item.pk][2]) for item in items])
    run_scoring.score_run(run.pk)

    study = create_study(benchmark, StudyDesign("Pilot", [item.pk for item in items]), None)
    evaluator = UserFactory(role=roles.EVALUATOR)
    session = start_session(study, evaluator)
    for _ in items:
        response = current_item(session.pk, evaluator).on_screen.response
        answer_item(session.pk, evaluator, response.item_id, rows[response.item_id][3])
    current_item(session.pk, evaluator)  # finishes the session

    client.force_login(UserFactory(role=roles.ADMIN))
    data = client.get(f"/results/{benchmark.slug}/?format=json").json()
    assert data["radar"] == {
        "by": "question_type",
        "metric": "EM",
        "axes": AXES,
        "series": [
            {"name": "Human — Pilot", "kind": "human", "values": HUMAN_EM},
            {"name": run_label(run), "kind": "model", "values": MODEL_EM},
        ],
    }
    page = client.get(f"/results/{benchmark.slug}/").content.decode()
    assert page.count('<svg id="radar-chart"') == 1
    assert page.count('class="radar-series human-series"') == 1
    assert page.count('class="radar-series model-series"') == 1
    assert all(f">{axis}</tspan>" in page for axis in AXES)
    assert "Human — Pilot · Semantic: 0.0%" in page
