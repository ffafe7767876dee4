"""`python -m scoring --gold` given a release: a folder's items.jsonl, else its published-shape file, or that
file alone, read into gold lines (scoring.release_gold). The exports themselves:
tests/benchmarks/test_release_official_tools.py."""

import json

from scoring.__main__ import main
from scoring.release_gold import causal_task, release_gold


def test_a_folder_prefers_its_items_jsonl_keyed_by_scoring_id(tmp_path):
    line = {"id": "17", "external_id": "", "question": "What is left of the desk?", "answer_format": "open",
            "choices": [], "answers": ["window", "the window"], "tags": {"change_type": "movement"},
            "unchanged_answers": [], "provenance": {}}
    (tmp_path / "items.jsonl").write_text(json.dumps(line) + "\n" + json.dumps({**line, "id": "18",
                                                                                "external_id": "00042"}) + "\n")
    (tmp_path / "hypo3d.json").write_text("{}")
    gold = release_gold(str(tmp_path), "hypo3d")
    assert [(g["id"], g["answer"]) for g in gold] == [("17", ["window", "the window"]), ("00042", ["window", "the window"])]


def test_published_causalspatial_rows_name_the_papers_columns(tmp_path):
    rows = [{"id": "Physics_Level_1_0", "question": "Where? (A) cup (B) floor (C) Not sure", "answer": "(A)",
             "not_sure": "C"},
            {"id": "x-9", "question": "Will it fall?", "options": ["Yes", "No", "Not sure"], "answer": "No",
             "not_sure": "Not sure", "task": "trajectory", "level": "L2"}]
    path = tmp_path / "causal-1.0.0-causalspatial.json"
    path.write_text(json.dumps(rows))
    gold = release_gold(str(path), "causalspatial")
    assert [(g["id"], g["answer"], g["not_sure"], g["tags"]["task"], g["tags"]["level"]) for g in gold] == [
        ("Physics_Level_1_0", "A", "C", "trajectory", "L1"), ("x-9", "B", "C", "trajectory", "L2")]
    assert [causal_task(t) for t in ("Collision", "Trajectory_Prediction", "physics", "other_task")] == [
        "collision", "trajectory", "trajectory", "other_task"]


def test_the_cli_scores_a_published_tsv(tmp_path, capsys):
    tsv = "index\tquestion\tanswer\tcategory\tquestion_id\n0\tHow many buses?\t2\tL2_objects\tL2_objects/0\n"
    (tmp_path / "spatial457.tsv").write_text(tsv)
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"id": "L2_objects/0", "output": "{'Answer': '2'}"}) + "\n")
    assert main(["--family", "spatial457", "--gold", str(tmp_path), "--pred", str(pred)]) == 0
    assert json.loads(capsys.readouterr().out)["overall"]["accuracy"] == 100.0
