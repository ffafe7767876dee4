"""Researchers' command line (run_eval, score_predictions) and the per-item drill-down."""

import csv
import json

import pytest
from django.core.management import CommandError, call_command

from benchmarks.releases.life import export_release
from core import roles
from modeleval import services
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def items():
    first = ItemFactory()
    return [first, ItemFactory(change__scene__benchmark=first.benchmark, answers=["desk"])]


@pytest.mark.django_db(transaction=True)  # the command waits for tasks that run on commit
def test_run_eval_prints_the_runs_scores(items, capsys):
    services.ensure_baseline_model()
    call_command("run_eval", "--benchmark", items[0].benchmark.slug, "--model", services.RANDOM_BASELINE_NAME,
                 "--timeout", "5")
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "finished" and result["n_items"] == 2 and "EM" in result["overall"]


def test_run_eval_names_what_is_wrong(items):
    with pytest.raises(CommandError, match="No registered model"):
        call_command("run_eval", "--benchmark", items[0].benchmark.slug, "--model", "gpt-17")
    with pytest.raises(CommandError, match="No benchmark"):
        call_command("run_eval", "--benchmark", "nope", "--model", "1")


def test_score_predictions_scores_a_file_against_a_release(items, tmp_path, capsys):
    release = export_release(items[0].benchmark, "1.0.0", None, inline=True)
    pred = tmp_path / "pred.jsonl"
    pred.write_text(
        json.dumps({"id": str(items[0].pk), "output": "The window."}) + "\n"
        + "{not json\n"
        + json.dumps({"id": "999999", "output": "desk"}) + "\n"
    )
    target = ["--release", f"{release.benchmark.slug}@1.0.0", "--pred", str(pred)]
    with pytest.raises(CommandError, match="2 record"):  # a bad line and an unknown id: not a full score
        call_command("score_predictions", *target)
    assert json.loads(capsys.readouterr().out)["n_dropped"] == 2  # printed before the exit
    call_command("score_predictions", *target, "--allow-partial")
    result = json.loads(capsys.readouterr().out)
    assert result["overall"]["EM"] == 50.0  # one right, one missing
    assert any("line 2" in e for e in result["errors"]) and any("999999" in e for e in result["errors"])


def test_score_predictions_refuses_an_unknown_release(tmp_path):
    with pytest.raises(CommandError, match="No release"):
        call_command("score_predictions", "--release", "x@9.9.9", "--pred", str(tmp_path / "p.jsonl"))


def test_drill_down_and_csv_show_output_gold_and_per_item_score(client, items, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(services.ensure_baseline_model().pk, items[0].benchmark, None)
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/runs/{run.pk}/predictions/").content.decode()
    assert "prediction-table" in page and items[0].question in page and "EM " in page
    csv_text = client.get(f"/runs/{run.pk}/predictions.csv").content.decode()
    assert csv_text.splitlines()[0].startswith("item,repeat,question,gold,output")
    assert len(csv_text.strip().splitlines()) == 3


def test_leaderboard_exports_json_and_csv_in_the_paper_layout(client, items, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        services.launch_run(services.ensure_baseline_model().pk, items[0].benchmark, None)
    client.force_login(UserFactory(role=roles.ADMIN))
    slug = items[0].benchmark.slug
    table = client.get(f"/results/{slug}/?format=json").json()
    assert table["family"] == "hypo3d" and table["by"] == "change_type" and table["columns"][0] == "Overall"
    assert table["rows"][0]["kind"] == "model"
    csv_lines = client.get(f"/results/{slug}/?format=csv").content.decode().splitlines()
    # the paper's columns (Overall, then each change type; EM then PM), each value followed by its interval
    # (#31), one line per run, named by the run's label (#26)
    assert csv_lines[0] == ",".join(
        ["row", "kind", "n"]
        + [f"{column} {metric}{part}" for column in ("Overall", "movement") for metric in ("EM", "PM")
           for part in ("", " ci low", " ci high")]
    )
    assert len(csv_lines) == 2
    row = table["rows"][0]
    name, kind, n, overall_em, em_low, em_high = next(csv.reader([csv_lines[1]]))[:6]
    assert name == row["name"] and name.startswith("Random baseline") and "(run " in name
    assert (kind, int(n)) == ("model", 2)
    estimate, (low, high) = row["result"]["overall"]["EM"], row["result"]["overall"]["ci"]["EM"]
    assert [float(overall_em), float(em_low), float(em_high)] == [estimate, low, high]
    assert low <= estimate <= high
