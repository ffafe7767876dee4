"""Every scored prediction records the answer read from its output and how (rule, judge, failed);
a run's summary counts inference and extraction failures beside its scores; nothing is guessed."""

import csv
import io

import pytest

from core import roles
from modeleval import services
from modeleval.models import Prediction, Run
from modeleval.runs import run_scoring
from scoring import score
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

# family -> (item fields, a readable output and the answer read from it, an unreadable output)
FAMILIES = {
    "hypo3d": (
        {"answer_format": "open", "choices": [], "answers": ["window"]},
        ("The window.", "window"),
        "...",
    ),
    "3dsrbench": (
        {"answer_format": "single", "choices": ["left", "right"], "answers": ["A"]},
        ("The answer is A.", "A"),
        "I cannot tell from this picture",
    ),
    "causalspatial": (
        {"answer_format": "single", "choices": ["Yes", "No"], "answers": ["(A) Yes"]},
        ("{'Reasoning': 'It rolls on.', 'Answer': '(A) Yes'}", "A"),
        "I think it will probably fall",
    ),
    "spatial457": (
        {"answer_format": "open", "choices": [], "answers": ["yes"]},
        ('{"Reasoning": "Both are red.", "Answer": "yes"}', "yes"),
        "maybe",
    ),
    "m3verse": (
        {"answer_format": "single", "choices": ["red", "blue", "No correct option is listed."], "answers": ["A"]},
        ("A", "A"),
        "no idea, sorry",
    ),
}


def gold(family: str, item_id: str) -> dict:
    fields, _, _ = FAMILIES[family]
    answers = fields["answers"]
    return {
        "id": item_id,
        "answer_format": fields["answer_format"],
        "question": "Which one?",
        "choices": fields["choices"],
        "answer": answers[0] if fields["answer_format"] == "single" else answers,
    }


# --- the scorer ------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_scorer_reports_per_row_what_it_read_and_how(family):
    _, (readable, answer), unreadable = FAMILIES[family]
    result = score(
        family, [gold(family, "1"), gold(family, "2"), gold(family, "3")],
        [{"id": "1", "output": readable}, {"id": "2", "output": unreadable}], sbert=False, rows=True,
    )
    assert result["rows"] == [
        {"id": "1", "repeat": 0, "answer": answer, "method": "rule"},
        {"id": "2", "repeat": 0, "answer": "", "method": "failed"}
        if family != "spatial457" else {"id": "2", "repeat": 0, "answer": unreadable, "method": "failed"},
    ]
    # the missing prediction is an error, not an extraction
    assert result["extraction"] == {"rule": 1, "judge": 0, "failed": 1}
    assert "rows" not in score(family, [gold(family, "1")], [{"id": "1", "output": readable}], sbert=False)


@pytest.mark.parametrize("family", FAMILIES)
def test_an_unreadable_output_is_never_replaced_by_a_guess(family):
    """A random fallback would hit some of 200 items (half of them on two options); none may be right."""
    _, _, unreadable = FAMILIES[family]
    ids = [str(i) for i in range(200)]
    result = score(family, [gold(family, i) for i in ids], [{"id": i, "output": unreadable} for i in ids],
                   sbert=False)
    assert result["extraction"] == {"rule": 0, "judge": 0, "failed": 200}
    first_metric = next(iter(result["overall"]))
    assert result["overall"][first_metric] == 0.0


def test_3dsrbench_judge_reads_what_the_rules_cannot_and_is_recorded_as_judge():
    rows = [gold("3dsrbench", "1"), gold("3dsrbench", "2")]
    preds = [{"id": "1", "output": "the mug, I believe"}, {"id": "2", "output": "the plate"}]
    answers = {"the mug, I believe": "A", "the plate": "Q"}  # "Q" names no option: still failed

    def judge(question, options, output):
        return answers[output]

    result = score("3dsrbench", rows, preds, judge=judge, rows=True)
    assert [(r["answer"], r["method"]) for r in result["rows"]] == [("A", "judge"), ("", "failed")]
    assert result["extraction"] == {"rule": 0, "judge": 1, "failed": 1}
    assert result["overall"]["vanilla"] == 50.0


def test_extracted_letters_are_in_gold_order_when_options_were_shown_rotated():
    row = gold("3dsrbench", "1")
    result = score("3dsrbench", [row], [{"id": "1", "output": "B", "choices": ["right", "left"]}], rows=True)
    assert result["rows"][0]["answer"] == "A" and result["overall"]["vanilla"] == 100.0


def test_spatial457_format_error_is_a_failed_extraction_that_the_reference_still_scores_whole():
    result = score("spatial457", [gold("spatial457", "1")], [{"id": "1", "output": "yes"}], rows=True)
    assert result["rows"][0] == {"id": "1", "repeat": 0, "answer": "yes", "method": "failed"}
    assert result["overall"] == {"accuracy": 100.0, "format_errors": 1}


# --- model runs ------------------------------------------------------------------------------------


@pytest.fixture
def admin_client(client):
    client.force_login(UserFactory(role=roles.ADMIN))
    return client


def scored_run(family: str) -> Run:
    """A run of three items in scoring: one readable output, one unreadable, one inference error."""
    fields, (readable, _), unreadable = FAMILIES[family]
    benchmark = BenchmarkFactory(family=family)
    items = [ItemFactory(change__scene__benchmark=benchmark, tags={}, **fields) for _ in range(3)]
    run = Run.objects.create(model=services.ensure_baseline_model(), benchmark=benchmark, total=3,
                             status=Run.Status.SCORING)
    run.items.set(items)
    Prediction.objects.bulk_create([
        Prediction(run=run, item=items[0], output=readable, prompt_sha256="a" * 64),
        Prediction(run=run, item=items[1], output=unreadable, prompt_sha256="b" * 64),
        Prediction(run=run, item=items[2], error="TimeoutError: the endpoint did not answer"),
    ])
    run_scoring.score_run(run.pk)
    run.refresh_from_db()
    return run


@pytest.mark.django_db
@pytest.mark.parametrize("family", FAMILIES)
def test_scoring_a_run_stores_each_extraction_and_summarises_failures(family):
    _, (_, answer), unreadable = FAMILIES[family]
    run = scored_run(family)
    stored = list(run.predictions.order_by("item_id").values_list("extracted", "extraction"))
    failed_answer = unreadable if family == "spatial457" else ""
    assert stored == [(answer, "rule"), (failed_answer, "failed"), ("", "")]
    assert run.status == "finished"
    assert run_scoring.run_summary(run) == {"inference_errors": 1, "extraction": {"rule": 1, "judge": 0, "failed": 1}}
    assert "rows" not in run.scores


@pytest.mark.django_db
def test_scoring_again_rewrites_the_same_extractions():
    run = scored_run("3dsrbench")
    before = list(run.predictions.order_by("pk").values_list("pk", "extracted", "extraction"))
    Run.objects.filter(pk=run.pk).update(status=Run.Status.SCORING)
    run_scoring.score_run(run.pk)
    assert list(run.predictions.order_by("pk").values_list("pk", "extracted", "extraction")) == before


@pytest.mark.django_db
def test_run_page_api_and_drill_down_show_failures_and_extractions(admin_client):
    run = scored_run("m3verse")
    api = admin_client.get(f"/api/v1/runs/{run.pk}/").json()
    assert api["summary"] == {"inference_errors": 1, "extraction": {"rule": 1, "judge": 0, "failed": 1}}
    assert api["result"]["extraction"]["failed"] == 1

    page = admin_client.get(f"/runs/{run.pk}/").content.decode()
    assert '<span id="run-inference-errors">1</span>' in page
    assert '<span id="run-extraction-failed">1</span>' in page
    assert "score 33.33" in page  # every overall metric, not only Hypo3D's

    drill = admin_client.get(f"/runs/{run.pk}/predictions/").content.decode()
    assert '<td class="extraction extraction-failed">failed</td>' in drill
    assert '<td class="extraction extraction-rule">rule</td>' in drill

    lines = list(csv.DictReader(io.StringIO(admin_client.get(f"/runs/{run.pk}/predictions.csv").content.decode())))
    assert [(line["extracted"], line["extraction"]) for line in lines] == [("A", "rule"), ("", "failed"), ("", "")]
    assert {line["prompt_template"] for line in lines} == {""}  # this run pinned no template
