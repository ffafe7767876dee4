"""One home for results: the chance, human and model rows of a benchmark's paper tables come from
`results.services.benchmark_results` alone, and the API, the page's JSON, CSV and LaTeX carry the
same numbers; with a study, every row is on the study's scored items."""

import csv
import io
import json
import re

import pytest
from django.core.serializers.json import DjangoJSONEncoder

import scoring
from benchmarks.services import gold_row
from core import roles
from humaneval.models import Study
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.results import study_results
from humaneval.services.sessions import answer_item, current_item, start_session
from modeleval import services as modeleval_services
from modeleval.analysis.labels import run_label
from modeleval.models import Prediction, Run
from modeleval.runs import run_scoring
from results import services as results_services
from scoring.tables import breakdowns, latex_escape
from scoring.uncertainty import TABLE_LEVEL
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

FAMILY = "3dsrbench"
# (external id, choices, gold letter, subtype, viewpoint): two questions with a rotated copy each (the
# VLMEvalKit shape), and a 4-choice question without one
SPECS = [
    ("AAAAAAAA", ["higher", "lower"], "A", "height_higher", "common"),
    ("AAAAAAAA-1", ["lower", "higher"], "B", "height_higher", "common"),
    ("BBBBBBBB", ["above", "below"], "A", "location_above", "uncommon"),
    ("BBBBBBBB-1", ["below", "above"], "B", "location_above", "uncommon"),
    ("CCCCCCCC", ["left", "right", "front", "back"], "A", "orientation_on_the_left", "common"),
]
STUDY_IDS = ("AAAAAAAA", "AAAAAAAA-1", "BBBBBBBB", "BBBBBBBB-1")
HUMAN_ANSWERS = {"AAAAAAAA": "A", "AAAAAAAA-1": "B", "BBBBBBBB": "A", "BBBBBBBB-1": "A"}  # the last one wrong


def vanilla_output(item, repeat):
    """Repeat 0 always says A; repeat 1 is always right."""
    return "A" if repeat == 0 else item.answers[0]


@pytest.fixture
def setup():
    bench = BenchmarkFactory(family=FAMILY)
    scene = SceneFactory(benchmark=bench)
    items = [
        ItemFactory(change=None, scene=scene, benchmark=bench, answer_format="single", external_id=external_id,
                    question=f"Which one? ({external_id})", choices=choices, answers=[gold],
                    tags={"category": subtype, "viewpoint": viewpoint})
        for external_id, choices, gold, subtype, viewpoint in SPECS
    ]
    by_id = {item.external_id: item for item in items}
    model = modeleval_services.ensure_baseline_model()

    # a vanilla run with two repeats
    vanilla = Run.objects.create(model=model, benchmark=bench, repeats=2, total=2 * len(items),
                                 status=Run.Status.SCORING)
    vanilla.items.set(items)
    Prediction.objects.bulk_create(
        Prediction(run=vanilla, item=item, repeat=repeat, output=vanilla_output(item, repeat))
        for item in items for repeat in (0, 1)
    )
    run_scoring.score_run(vanilla.pk)

    # a circular run on the questions (not their stored rotated copies): every rotation of the options,
    # answered with the right option's text
    questions = [item for item in items if "-" not in item.external_id]
    circular = Run.objects.create(model=model, benchmark=bench, protocol={"circular": True},
                                  total=8, status=Run.Status.SCORING)
    circular.items.set(questions)
    Prediction.objects.bulk_create(
        Prediction(run=circular, item=item, variant=variant, output=item.choices["ABCD".index(item.answers[0])])
        for item in questions
        for variant in ([""] + [str(k) for k in range(1, len(item.choices))])
    )
    run_scoring.score_run(circular.pk)

    study = create_study(
        bench, StudyDesign("Pilot", [by_id[i].pk for i in STUDY_IDS], shuffle_choices=False,
                           participants_per_item=1), None)
    evaluator = UserFactory(role=roles.EVALUATOR)
    session = start_session(study, evaluator)
    for _ in STUDY_IDS:
        response = current_item(session.pk, evaluator).on_screen.response
        answer_item(session.pk, evaluator, response.item_id,
                                       HUMAN_ANSWERS[response.item.external_id])
    current_item(session.pk, evaluator)  # finishes the session
    return {"bench": bench, "items": items, "by_id": by_id, "vanilla": vanilla, "circular": circular,
            "study": study}


def as_json(data):
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))


def same_result(row_result, expected):
    assert row_result["overall"] == expected["overall"]
    assert row_result["by"] == expected["by"]


def test_chance_human_and_model_rows_from_one_function(setup):
    bench, study = setup["bench"], setup["study"]
    vanilla, circular = (Run.objects.get(pk=setup[name].pk) for name in ("vanilla", "circular"))
    data = results_services.benchmark_results(bench)
    model_name = vanilla.model.name
    assert [(row["name"], row["kind"]) for row in data["rows"]] == [
        ("Random", "chance"), ("Random++", "chance"), ("Human — Pilot", "human"),
        (run_label(vanilla), "model"), (run_label(circular), "model"),
    ]
    assert run_label(circular) == f"{model_name} · circular (run {circular.pk})"
    chance, chance_pp, human, vanilla_row, circular_row = data["rows"]

    # chance rows: scoring.chance_levels on the approved items' gold lines
    levels = scoring.chance_levels(FAMILY, [gold_row(item) for item in setup["items"]], by=breakdowns(FAMILY))
    same_result(chance["result"], levels["random"])
    same_result(chance_pp["result"], levels["random++"])
    assert chance["n"] == chance_pp["n"] == len(SPECS)
    # a 2-choice circular group: 1/4 for Random, 1/2 for Random++; the 4-choice question alone: 1/4
    assert chance["result"]["overall"]["circular"] == round(100 * (0.25 + 0.25 + 0.25) / 3, 2)
    assert chance_pp["result"]["overall"]["circular"] == round(100 * (0.5 + 0.5 + 0.25) / 3, 2)

    # the human row is the study's result; model rows are the runs' stored scores
    same_result(human["result"], study_results(study))
    assert human["result"]["overall"]["vanilla"] == 75.0 and human["result"]["overall"]["circular"] == 50.0
    same_result(vanilla_row["result"], vanilla.scores)
    same_result(circular_row["result"], circular.scores)
    assert vanilla.scores["overall"]["vanilla_std"] is not None  # repeats kept
    assert circular.scores["n_items"] == 8 and circular.scores["overall"]["circular"] == 100.0

    # the tables are built from those rows: the main one and, items being tagged, the viewpoint splits
    categories, viewpoints = data["tables"]
    assert categories["columns"] == ["Overall", "height", "location", "orientation"]
    assert [row["name"] for row in categories["rows"]] == [row["name"] for row in data["rows"]]
    assert viewpoints["groups"][1:] == ["common", "common", "common", "uncommon", "uncommon"]
    assert categories["rows"][2]["cells"][0][0]["value"] == human["result"]["overall"]["circular"]
    # the radar has the human and model rows, not chance
    assert [s["kind"] for s in data["radar"]["series"]] == ["human", "model", "model"]


def csv_numbers(text):
    lines = list(csv.reader(io.StringIO(text)))
    # a one-participant human row's interval columns say it is not available (no number)
    return lines[0], [[None if value in ("", "not available (n=1 participant)") else float(value)
                       for value in line[3:]] for line in lines[1:]]


def table_numbers(table):
    spreads = any(v["std"] is not None for row in table["rows"] for cell in row["cells"] for v in cell)
    intervals = any(v["ci"] for row in table["rows"] for cell in row["cells"] for v in cell)
    numbers = []
    for row in table["rows"]:
        line = []
        for cell in row["cells"]:
            for v in cell:
                line.append(v["value"])
                if spreads:
                    line.append(v["std"])
                if intervals:
                    line += v["ci"] or [None, None]
        numbers.append(line)
    return numbers


def latex_numbers(table):
    """Per row: each value, its spread and its interval as the LaTeX shows them, two decimals."""
    return [
        [
            number
            for v in (v for cell in row["cells"] for v in cell)
            for number in [f"{x:.2f}" for x in (v["value"], v["std"]) if x is not None]
            + re.findall(r"\d+\.\d\d", v["interval"] or "")
        ]
        for row in table["rows"]
    ]


def test_api_page_json_csv_and_latex_carry_the_same_numbers(client, setup):
    bench = setup["bench"]
    expected = as_json(results_services.benchmark_results(bench))

    client.force_login(UserFactory(role=roles.REVIEWER))
    api = client.get(f"/api/v1/benchmarks/{bench.slug}/results/")
    assert api.status_code == 200
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/benchmarks/{bench.slug}/results/?format=json").json()
    assert api.json() == page == expected
    assert client.get(f"/results/{bench.slug}/?format=json").json() == page  # the older address

    latex = client.get(f"/benchmarks/{bench.slug}/results/?format=latex")
    assert latex.status_code == 200 and latex["Content-Type"].startswith("text/x-tex")
    chunks = latex.content.decode().split(r"\end{table}")[:-1]
    assert len(chunks) == len(page["tables"]) == 2
    for table, chunk in zip(page["tables"], chunks, strict=True):
        header, numbers = csv_numbers(
            client.get(f"/benchmarks/{bench.slug}/results/?format=csv&table={table['key']}").content.decode()
        )
        assert header[:4] == ["row", "kind", "n", f"Overall {table['metrics'][0]}"]
        assert numbers == table_numbers(table)
        lines = {line.split(" & ")[0]: line for line in chunk.splitlines() if " & " in line}
        for row, shown in zip(table["rows"], latex_numbers(table), strict=True):
            assert re.findall(r"\d+\.\d\d", lines[latex_escape(row["name"])]) == shown
    # the CSV's default table is the main one; an unknown table is a 404
    default = client.get(f"/benchmarks/{bench.slug}/results/?format=csv").content.decode()
    assert csv_numbers(default)[1] == table_numbers(page["tables"][0])
    assert client.get(f"/benchmarks/{bench.slug}/results/?format=csv&table=nope").status_code == 404


def test_every_results_view_asks_the_one_function(client, setup, monkeypatch):
    bench, study = setup["bench"], setup["study"]
    calls = []
    original = results_services.benchmark_results

    def spy(benchmark, study=None):
        calls.append((benchmark.pk, study.pk if study else None))
        return original(benchmark, study)

    monkeypatch.setattr(results_services, "benchmark_results", spy)
    client.force_login(UserFactory(role=roles.ADMIN))
    urls = [
        f"/benchmarks/{bench.slug}/results/", f"/benchmarks/{bench.slug}/results/?format=json",
        f"/benchmarks/{bench.slug}/results/?format=csv", f"/benchmarks/{bench.slug}/results/?format=latex",
        f"/studies/{study.pk}/results/", f"/studies/{study.pk}/results/?format=json",
        f"/api/v1/benchmarks/{bench.slug}/results/", f"/api/v1/benchmarks/{bench.slug}/results/?study={study.pk}",
        f"/api/v1/studies/{study.pk}/results/",
    ]
    for url in urls:
        assert client.get(url).status_code == 200, url
    assert calls == [(bench.pk, None)] * 4 + [(bench.pk, study.pk)] * 2 + [(bench.pk, None)] + [
        (bench.pk, study.pk)] * 2


def test_with_a_study_every_row_is_on_its_scored_items(client, setup):
    bench, study, by_id = setup["bench"], setup["study"], setup["by_id"]
    subset = sorted((by_id[i] for i in STUDY_IDS), key=lambda item: item.pk)
    data = results_services.benchmark_results(bench, study)
    assert [row["kind"] for row in data["rows"]] == ["chance", "chance", "human", "model", "model"]
    chance, chance_pp, human, vanilla_row, circular_row = data["rows"]
    by = breakdowns(FAMILY)

    levels = scoring.chance_levels(FAMILY, [gold_row(item) for item in subset], by=by)
    same_result(chance["result"], levels["random"])
    same_result(chance_pp["result"], levels["random++"])
    same_result(human["result"], study_results(study))

    # the vanilla run scored again on the study's items, both repeats kept, with its intervals
    expected = scoring.score(
        FAMILY, [gold_row(item) for item in subset],
        [{"id": item.scoring_id, "output": vanilla_output(item, r), "repeat": r} for item in subset for r in (0, 1)],
        by=by, ci=TABLE_LEVEL,
    )
    same_result(vanilla_row["result"], expected)
    assert "units" not in vanilla_row["result"]  # used to pair the rows, then left out
    assert vanilla_row["n"] == 4 and vanilla_row["result"]["overall"]["vanilla"] == 75.0
    assert vanilla_row["result"]["overall"]["vanilla_std"] == 25.0
    # the circular run keeps its variants: two rotations of each of the study's two questions
    assert circular_row["n"] == 4 and circular_row["result"]["overall"]["circular"] == 100.0
    assert "category=orientation" not in circular_row["result"]["by"]

    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/studies/{study.pk}/results/?format=json").json()
    api = client.get(f"/api/v1/benchmarks/{bench.slug}/results/?study={study.pk}").json()
    assert page == api == as_json(data)
    assert page["study"] == study.pk

    # the study endpoint keeps the human result's keys and adds the table rows
    study_api = client.get(f"/api/v1/studies/{study.pk}/results/").json()
    human_result = as_json(study_results(study))
    for key in ("overall", "by", "n_items", "n_sessions", "n_participants", "agreement", "exclusions", "design",
                "median_seconds_per_item", "errors"):
        assert study_api[key] == human_result[key], key
    assert study_api["tables"] == page["tables"] and study_api["rows"] == page["rows"]

    html = client.get(f"/studies/{study.pk}/results/").content.decode()
    assert 'id="study-results-table"' in html and 'id="study-results-table-viewpoints"' in html
    assert html.count('class="chance-row"') == 4 and html.count('class="human-row"') == 2


def test_the_results_api_is_for_reviewers_and_admins(client, setup):
    bench, study = setup["bench"], setup["study"]
    url = f"/api/v1/benchmarks/{bench.slug}/results/"
    for role in (roles.ANNOTATOR, roles.EVALUATOR):
        client.force_login(UserFactory(role=role))
        assert client.get(url).status_code == 403
    client.force_login(UserFactory(role=roles.REVIEWER))
    assert client.get(url).status_code == 200
    assert client.get(f"/api/v1/studies/{study.pk}/results/").status_code == 403  # a study's page is the admins'
    assert client.get("/api/v1/benchmarks/no-such-bench/results/").status_code == 404
    assert client.get(f"{url}?study=abc").json() == {"study": ["Give a study by its id."]}
    elsewhere = Study.objects.create(benchmark=BenchmarkFactory(), name="Elsewhere", sample_seed=1)
    assert client.get(f"{url}?study={elsewhere.pk}").status_code == 404


def test_the_benchmark_page_shows_every_table_with_chance_rows_and_the_radar(client, setup):
    client.force_login(UserFactory(role=roles.ADMIN))
    html = client.get(f"/benchmarks/{setup['bench'].slug}/results/").content.decode()
    assert 'id="results-table"' in html and 'id="results-table-viewpoints"' in html
    assert html.count('class="chance-row"') == 4 and html.count('class="model-row"') == 4
    assert html.count('<svg id="radar-chart"') == 1
    assert "?format=latex&amp;table=viewpoints" in html


def test_the_human_row_is_what_the_scorer_gives_for_the_same_answers_keyed_by_the_benchmark_ids(setup):
    """The human path against `python -m scoring`'s own function: the study's answers, keyed by the
    items' benchmark ids, give the same figures as the study's row (imported rotations grouped by id)."""
    items = [setup["by_id"][external_id] for external_id in STUDY_IDS]
    gold = [gold_row(item) for item in items]
    predictions = [{"id": item.external_id, "output": HUMAN_ANSWERS[item.external_id]} for item in items]
    expected = scoring.score(FAMILY, gold, predictions, by=breakdowns(FAMILY))
    human = study_results(setup["study"])
    # the human row adds intervals over participants (one here: none can be measured)
    assert human["overall"].pop("ci") == {metric: None for metric in human["overall"]}
    assert human["uncertainty"]["cluster"] == "participant" and human["uncertainty"]["n_units"] == 1
    assert human["overall"] == expected["overall"]
    assert {key: {m: v for m, v in values.items() if m != "ci"} for key, values in human["by"].items()} == expected["by"]
    assert expected["overall"]["circular"] != expected["overall"]["vanilla"]
