"""Outputs produced elsewhere, in the shapes their tools publish, scored on the platform exactly as
`python -m scoring` scores them: for each family a small item file in its published shape is imported,
a file of outputs keyed by the benchmark's own ids is scored by `score_predictions --benchmark` and run
as a recorded-outputs model by `run_eval --outputs`, and both print what the command-line scorer prints
for the same gold lines and the same predictions (every metric, every `--by` group)."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from benchmarks.models import Benchmark, Item
from benchmarks.protocols import Protocol
from benchmarks.services import gold_row
from core.errors import DomainError
from modeleval import services
from modeleval.models import ModelSpec, Prediction, RecordedOutput, Run
from modeleval.runs import prediction_files
from scoring import predfiles
from scoring.tables import breakdowns
from scoring.uncertainty import TABLE_LEVEL
from tests.factories import BenchmarkFactory
from tests.samples import M3VERSE, jsonl

# run_eval waits for the run's tasks, which run when its transaction commits
recorded = pytest.mark.django_db(transaction=True)


def command(name: str, *args) -> str:
    out = io.StringIO()
    call_command(name, *args, stdout=out, stderr=io.StringIO())
    return out.getvalue().strip()


def imported(tmp_path: Path, slug: str, family: str, filename: str, content, *options) -> Benchmark:
    command("create_benchmark", slug, "--family", family)
    path = tmp_path / filename
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    command("import_items", "--benchmark", slug, *options, str(path))
    return Benchmark.objects.get(slug=slug)


def gold(benchmark: Benchmark) -> list[dict]:
    items = Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).order_by("pk")
    return [gold_row(item) for item in items]


def scoring_cli(tmp_path: Path, family: str, gold_lines: list[dict], pred_lines: list[dict], *args):
    """`python -m scoring` in its own process on these gold lines and predictions: (exit code, stdout)."""
    gold_path, pred_path = tmp_path / "cli-gold.jsonl", tmp_path / "cli-pred.jsonl"
    gold_path.write_text(jsonl(gold_lines))
    pred_path.write_text(jsonl(pred_lines))
    done = subprocess.run(
        [sys.executable, "-m", "scoring", "--family", family, "--gold", str(gold_path), "--pred", str(pred_path),
         *args],
        capture_output=True, text=True, cwd=settings.BASE_DIR, env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=300,
    )
    return done.returncode, done.stdout.strip()


def by_args(tags) -> list[str]:
    return [arg for tag in tags for arg in ("--by", tag)]


def assert_platform_prints_what_the_cli_prints(tmp_path, benchmark, files, cli_lines, by) -> dict:
    """score_predictions and run_eval --outputs print byte for byte what the CLI prints."""
    code, expected = scoring_cli(tmp_path, benchmark.family, gold(benchmark), cli_lines, *by_args(by))
    assert code == 0, expected
    preds = [arg for path in files for arg in ("--pred", str(path))]
    assert command("score_predictions", "--benchmark", benchmark.slug, *preds, *by_args(by)) == expected
    outputs = [arg for path in files for arg in ("--outputs", str(path))]
    assert command("run_eval", "--benchmark", benchmark.slug, *outputs, *by_args(by)) == expected
    result = json.loads(expected)
    assert result["n_dropped"] == 0 and result["n_predictions"] > 0
    return result


# --- Hypo3D: the item file with predicted_answer per QA -------------------------------------------

HYPO3D = {
    "scene0000_00": [
        {"context_change": "The guitar has been moved from the floor to the couch.",
         "change_type": "Object Movement",
         "questions_answers": [
             {"question_id": "00042", "question_type": "Direction Semantic",
              "question": "What item is directly in front of the guitar now?", "answer": "coffee table"},
             {"question_id": "00043", "question_type": "Scale", "question": "How many chairs are left?",
              "answer": "two"}]},
        {"context_change": "The lamp has been removed.", "change_type": "Object Removal",
         "questions_answers": [
             {"question_id": "00044", "question_type": "Direction",
              "question": "Where is the desk relative to the bed?", "answer": "West"},
             {"question_id": "00045", "question_type": "Semantic", "question": "What lights the room now?",
              "answer": "the window"}]}],
}
HYPO3D_PREDICTED = {"00042": "The coffee table.", "00043": "3 chairs", "00044": "to the left",
                    "00045": "ceiling light"}


@recorded
def test_hypo3d_prediction_file_scores_as_the_cli_scores_it(tmp_path):
    benchmark = imported(tmp_path, "hypo3d-rec", "hypo3d", "hypo3d.json", json.dumps(HYPO3D),
                         "--create-missing-scenes")
    predicted = json.loads(json.dumps(HYPO3D))
    for change in predicted["scene0000_00"]:
        for qa in change["questions_answers"]:
            qa["predicted_answer"] = HYPO3D_PREDICTED[qa["question_id"]]
    path = tmp_path / "hypo3d_predictions.json"
    path.write_text(json.dumps(predicted, indent=1))
    cli_lines = [{"id": key, "output": output} for key, output in HYPO3D_PREDICTED.items()]
    result = assert_platform_prints_what_the_cli_prints(tmp_path, benchmark, [path], cli_lines,
                                                        ["change_type", "question_type"])
    assert result["overall"]["EM"] == 50.0 and "by" in result and "change_type=movement" in result["by"]


# --- 3DSRBench: VLMEvalKit TSV in, a VLMEvalKit result workbook back ---------------------------------

SRBENCH_COLUMNS = ["index", "qid", "question", "A", "B", "C", "D", "answer", "category", "image", "image_source"]
HIGHEST = ["cup", "plate", "lamp", "table"]
LEFT = "Is the cup on the left of the plate?"


def _rotated(options: list[str], k: int) -> list[str]:
    return options[k:] + options[:k]


def srbench_rows() -> list[list]:
    """A 4-choice question with its three rotations, its mirrored image and that image's rotations; a
    2-choice left/right question (the answer swaps on the mirrored image) likewise; a lone 2-choice row."""
    rows = []
    for flip in ("", "-flip"):
        for k in range(4):
            options = _rotated(HIGHEST, k)
            qid = "HIGH0001" + flip + (f"-{k}" if k else "")
            rows.append([qid, "Which object is the highest?", *options, "ABCD"[options.index("lamp")],
                         "height_higher"])
        for k in range(2):
            options = _rotated(["yes", "no"], k)
            truth = "no" if flip else "yes"
            qid = "LEFT0002" + flip + (f"-{k}" if k else "")
            rows.append([qid, LEFT, *options, "", "", "AB"[options.index(truth)], "orientation_on_the_left"])
    rows.append(["NEAR0003", "Is the cup closer to the camera than the plate?", "yes", "no", "", "", "B",
                 "location_closer_to_camera"])
    return [[str(index), *row[:8], "", "MS-COCO"] for index, row in enumerate(rows)]


# Outputs by qid: every rotation of HIGH0001 right but one of its mirrored image's; LEFT0002's first
# rotation wrong; free text read MMBench-style.
SRBENCH_OUTPUTS = {
    "HIGH0001": "C", "HIGH0001-1": "The answer is B.", "HIGH0001-2": "A", "HIGH0001-3": "D. lamp",
    "HIGH0001-flip": "C", "HIGH0001-flip-1": "B", "HIGH0001-flip-2": "A", "HIGH0001-flip-3": "A",
    "LEFT0002": "A", "LEFT0002-1": "A", "LEFT0002-flip": "B", "LEFT0002-flip-1": "(A) no",
    "NEAR0003": "I am unsure.",
}


@recorded
def test_3dsrbench_vlmevalkit_result_scores_circular_and_flip_as_the_cli(tmp_path):
    rows = srbench_rows()
    tsv = "\t".join(SRBENCH_COLUMNS) + "\n" + "".join("\t".join(row) + "\n" for row in rows)
    benchmark = imported(tmp_path, "srbench-rec", "3dsrbench", "3DSRBench.tsv", tsv)
    assert Item.objects.get(benchmark=benchmark, external_id="HIGH0001-flip-2").source_index == "8"

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append([*SRBENCH_COLUMNS, "prediction"])
    for row in rows:
        sheet.append([int(row[0]), *row[1:], SRBENCH_OUTPUTS[row[1]]])
    path = tmp_path / "Qwen2-VL_3DSRBench.xlsx"
    workbook.save(path)
    cli_lines = [{"id": qid, "output": output} for qid, output in SRBENCH_OUTPUTS.items()]
    result = assert_platform_prints_what_the_cli_prints(tmp_path, benchmark, [path], cli_lines,
                                                        ["category", "subtype"])
    overall = result["overall"]
    # 13 rows, 10 right; groups: HIGH0001 right, HIGH0001-flip wrong, LEFT0002 wrong, its flip right, NEAR wrong
    assert overall["vanilla"] == pytest.approx(100 * 10 / 13, abs=0.01)
    assert overall["circular"] == 40.0 and overall["flip"] == pytest.approx(100 * 4 / 7, abs=0.01)
    assert overall["flip_circular"] == 0.0
    assert len({overall[m] for m in ("vanilla", "circular", "flip", "flip_circular")}) == 4
    assert set(result["by"]) >= {"category=height", "category=orientation", "subtype=height_higher"}

    # The run's own scores (the family's breakdowns, no SBERT, each metric's interval at the tables'
    # level) are the CLI's on the same lines with the same --ci; `units` (the tallies the tables pair
    # runs on) and `inference_errors` are the platform's own additions.
    run = Run.objects.filter(benchmark=benchmark).latest("pk")
    code, expected = scoring_cli(tmp_path, "3dsrbench", gold(benchmark), cli_lines,
                                 *by_args(breakdowns("3dsrbench")), "--ci", str(TABLE_LEVEL))
    assert code == 0, expected
    assert run.scores["overall"]["ci"] and run.scores["units"]["ids"]
    assert {k: v for k, v in run.scores.items() if k not in ("inference_errors", "units")} == json.loads(expected)
    assert run.model.adapter == ModelSpec.Adapter.RECORDED_OUTPUTS and run.scores["inference_errors"] == 0


@recorded
def test_the_same_result_as_a_tsv_keys_rows_by_index(tmp_path):
    rows = srbench_rows()
    tsv = "\t".join(SRBENCH_COLUMNS) + "\n" + "".join("\t".join(row) + "\n" for row in rows)
    benchmark = imported(tmp_path, "srbench-tsv", "3dsrbench", "3DSRBench.tsv", tsv)
    # a result table without qid: rows are matched by their VLMEvalKit index
    columns = [c for c in SRBENCH_COLUMNS if c != "qid"] + ["prediction"]
    table = "\t".join(columns) + "\n" + "".join(
        "\t".join([row[0], *row[2:], SRBENCH_OUTPUTS[row[1]]]) + "\n" for row in rows)
    path = tmp_path / "model_3DSRBench.tsv"
    path.write_text(table)
    cli_lines = [{"id": qid, "output": output} for qid, output in SRBENCH_OUTPUTS.items()]
    assert_platform_prints_what_the_cli_prints(tmp_path, benchmark, [path], cli_lines, ["category"])


# --- CausalSpatial: dataset rows in, the evaluation script's output lines back (two runs) -----------

CAUSAL = [
    {"id": "Collision_Level_1_0", "question": "Will the red ball hit the blue ball? (A) Yes (B) No (C) Not sure",
     "answer": "(A)", "not_sure": "(C)"},
    {"id": "Occlusion_Level_2_3", "question": "Will the cube be hidden by the wall? (A) Yes (B) No (C) Not sure",
     "answer": "B", "not_sure": "C"},
    {"id": "Compatibility_Level_1_5", "question": "Which box fits the toy? (A) The red one (B) The blue one "
     "(C) The green one (D) Not sure", "answer": "(C)", "not_sure": "(D)"},
]
CAUSAL_RUNS = [
    {"Collision_Level_1_0": "{'Reasoning': 'They meet.', 'Answer': '(A)'}",
     "Occlusion_Level_2_3": "{'Reasoning': 'Hard to say.', 'Answer': '(C) Not sure'}",
     "Compatibility_Level_1_5": "{'Reasoning': 'Green is big.', 'Answer': 'C'}"},
    {"Collision_Level_1_0": "{'Reasoning': 'They miss.', 'Answer': '(B)'}",
     "Occlusion_Level_2_3": "{'Reasoning': 'It is behind.', 'Answer': '(A)'}",
     "Compatibility_Level_1_5": "no idea"},
]


@recorded
def test_causalspatial_output_lines_of_two_runs_score_as_the_cli(tmp_path):
    benchmark = imported(tmp_path, "causal-rec", "causalspatial", "collision.jsonl", jsonl(CAUSAL))
    files = []
    for number, outputs in enumerate(CAUSAL_RUNS):
        path = tmp_path / f"qwen3vl_run{number}.jsonl"
        path.write_text("".join(json.dumps({
            "question_id": row["id"], "question": row["question"], "gt_answer": row["answer"],
            "model_answer": outputs[row["id"]], "model": "Qwen3-VL", "not_sure": row["not_sure"],
            "type": row["id"].split("_")[0].lower(), "difficulty": "L" + row["id"].split("_")[2],
        }) + "\n" for row in CAUSAL))
        files.append(path)
    cli_lines = [{"id": key, "output": output, "repeat": number}
                 for number, outputs in enumerate(CAUSAL_RUNS) for key, output in outputs.items()]
    result = assert_platform_prints_what_the_cli_prints(tmp_path, benchmark, files, cli_lines,
                                                        ["task", "level", "task+level"])
    overall = result["overall"]
    assert overall["not_sure_rate"] > 0 and "accuracy_std" in overall  # two runs: mean and spread
    assert Run.objects.get(benchmark=benchmark).repeats == 2


# --- Spatial457: the generated question file in, the scorer's own lines back --------------------------

SPATIAL457 = {"split": "L2_objects", "questions": [
    {"image_filename": "superCLEVR_new_000001.png", "image_index": 1, "question": "How many buses are there?",
     "answer": "2", "question_index": 0},
    {"image_filename": "superCLEVR_new_000001.png", "image_index": 1, "question": "Is there a red car?",
     "answer": "yes", "question_index": 1},
    {"image_filename": "superCLEVR_new_000002.png", "image_index": 2, "question": "What color is the jet?",
     "answer": "gray", "question_index": 2},
]}
SPATIAL457_OUTPUTS = ["{'Reasoning': 'I count two.', 'Answer': 'two'}", "Yes, there is one.",
                      "{'Reasoning': 'It looks blue.', 'Answer': 'blue'}"]


@recorded
def test_spatial457_scorer_lines_keyed_by_the_benchmarks_ids_score_as_the_cli(tmp_path):
    benchmark = imported(tmp_path, "spatial-rec", "spatial457", "L2_objects.json", json.dumps(SPATIAL457))
    items = list(Item.objects.filter(benchmark=benchmark).order_by("pk"))
    assert all(item.external_id for item in items)
    lines = [{"id": item.external_id, "output": output} for item, output in zip(items, SPATIAL457_OUTPUTS,
                                                                               strict=True)]
    path = tmp_path / "predictions.jsonl"
    path.write_text(jsonl(lines))
    result = assert_platform_prints_what_the_cli_prints(tmp_path, benchmark, [path], lines, ["level"])
    assert result["overall"]["format_errors"] == 1 and result["by"]["level=L2_objects"]["accuracy"] > 0


# --- M3-Verse: item JSONL in, an lmms-eval sample log back --------------------------------------------

M3VERSE_OUTPUTS = {"scene_800-17": "A", "scene_800-18": "B", "scene_801-2": "A, C"}


@recorded
def test_m3verse_lmms_eval_samples_score_as_the_cli(tmp_path):
    benchmark = imported(tmp_path, "m3verse-rec", "m3verse", "m3verse.jsonl", jsonl(M3VERSE))
    samples = []
    for doc_id, row in enumerate(M3VERSE):
        output = M3VERSE_OUTPUTS[row["question_id"]]
        sample = {"doc_id": doc_id, "doc": row, "target": row["answer"], "arguments": [],
                  "resps": [[output]], "filtered_resps": [output], "doc_hash": "x", "prompt_hash": "y"}
        if doc_id == 2:
            del sample["filtered_resps"]  # an older log: the raw response is read
        samples.append(sample)
    path = tmp_path / "samples_m3verse_2026-11-24.jsonl"
    path.write_text(jsonl(samples))
    cli_lines = [{"id": key, "output": output} for key, output in M3VERSE_OUTPUTS.items()]
    result = assert_platform_prints_what_the_cli_prints(tmp_path, benchmark, [path], cli_lines,
                                                        ["state_type", "capabilities", "hallucination"])
    assert result["overall"]["score"] == pytest.approx(100 * 1.5 / 3, abs=0.01)
    assert result["overall"]["hallucination_score"] == 0.0


# --- Unknown ids ----------------------------------------------------------------------------------------


@recorded
def test_unknown_ids_exit_non_zero_unless_partial_is_allowed(tmp_path):
    benchmark = imported(tmp_path, "m3verse-partial", "m3verse", "m3verse.jsonl", jsonl(M3VERSE))
    lines = [{"id": "scene_800-17", "output": "A, D"}, {"id": "scene_999-1", "output": "B"}, "not an object",
             {"id": "scene_800-17", "output": "A"}]
    path = tmp_path / "predictions.jsonl"
    path.write_text(jsonl(lines))
    code, expected = scoring_cli(tmp_path, "m3verse", gold(benchmark), lines, "--allow-partial")
    assert code == 0 and json.loads(expected)["n_dropped"] == 3
    assert scoring_cli(tmp_path, "m3verse", gold(benchmark), lines)[0] != 0

    out = io.StringIO()
    with pytest.raises(CommandError, match="3 record"):
        call_command("score_predictions", "--benchmark", benchmark.slug, "--pred", str(path), stdout=out)
    assert out.getvalue().strip() == expected  # the JSON is printed before the exit
    printed = command("score_predictions", "--benchmark", benchmark.slug, "--pred", str(path), "--allow-partial")
    assert printed == expected and "unknown id 'scene_999-1'" in printed

    with pytest.raises(CommandError, match="scene_999-1"):
        command("run_eval", "--benchmark", benchmark.slug, "--outputs", str(path))
    assert not Run.objects.filter(benchmark=benchmark).exists()
    partial = json.loads(command("run_eval", "--benchmark", benchmark.slug, "--outputs", str(path),
                                 "--allow-partial"))
    assert partial == json.loads(expected)
    run = Run.objects.get(benchmark=benchmark)
    # the items the file has no output for are the run's inference errors, scored as wrong
    assert run.predictions.exclude(error="").count() == 2
    assert "has no output for item 'scene_800-18'" in Prediction.objects.get(
        run=run, item__external_id="scene_800-18").error


@recorded
def test_running_the_same_file_again_updates_the_same_model(tmp_path):
    benchmark = imported(tmp_path, "m3verse-again", "m3verse", "m3verse.jsonl", jsonl(M3VERSE))
    path = tmp_path / "outputs.jsonl"
    path.write_text(json.dumps({"id": "scene_800-17", "output": "A"}) + "\n")
    first = json.loads(command("run_eval", "--benchmark", benchmark.slug, "--outputs", str(path)))
    path.write_text(json.dumps({"id": "scene_800-17", "output": "A, D"}) + "\n")
    second = json.loads(command("run_eval", "--benchmark", benchmark.slug, "--outputs", str(path)))
    assert first["overall"]["score"] < second["overall"]["score"]
    model = ModelSpec.objects.get(name="outputs.jsonl")
    assert model.runs.count() == 2 and RecordedOutput.objects.filter(model=model).get().output == "A, D"
    ModelSpec.objects.create(name="taken", adapter=ModelSpec.Adapter.RANDOM_BASELINE)
    with pytest.raises(CommandError, match="not a recorded-outputs model"):
        command("run_eval", "--benchmark", benchmark.slug, "--outputs", str(path), "--name", "taken")


@recorded
def test_ids_with_a_protocol_suffix_are_that_variant_of_a_platform_item(tmp_path):
    """Items authored here (no rotations imported): `X-1` names rotation 1 of item X, so the file is
    scored, and run, under CircularEval, as the platform's own circular runs are."""
    benchmark = BenchmarkFactory(family="3dsrbench")
    Item.objects.bulk_create([
        Item(benchmark=benchmark, external_id=f"P{n}", question=f"Question {n}?", answer_format="single",
             choices=["yes", "no", "maybe"], answers=["A"], status=Item.Status.APPROVED,
             tags={"subtype": "height_higher"})
        for n in range(3)
    ])
    # the output letters refer to the options as a run shows rotation k: "yes" is C on rotation 1
    outputs = {"P0": "A", "P0-1": "C", "P0-2": "B", "P1": "A", "P1-1": "A", "P1-2": "B", "P2": "B"}
    path = tmp_path / "circular.jsonl"
    path.write_text("".join(json.dumps({"id": key, "output": out}) + "\n" for key, out in outputs.items()))
    items = list(Item.objects.filter(benchmark=benchmark).order_by("pk"))
    gold_lines = prediction_files.gold_lines(items, Protocol(circular=True))
    cli_lines = []
    for key, output in outputs.items():
        base, _, rotation = key.partition("-")
        line = {"id": key, "output": output}
        if rotation:
            choices = ["yes", "no", "maybe"]
            line["choices"] = choices[int(rotation):] + choices[: int(rotation)]
        cli_lines.append(line)
    code, expected = scoring_cli(tmp_path, "3dsrbench", gold_lines, cli_lines)
    assert code == 0
    assert command("score_predictions", "--benchmark", benchmark.slug, "--pred", str(path)) == expected
    assert command("run_eval", "--benchmark", benchmark.slug, "--outputs", str(path)) == expected
    result = json.loads(expected)
    assert result["n_items"] == 9 and result["overall"]["circular"] == pytest.approx(100 / 3, abs=0.01)
    assert Run.objects.get(benchmark=benchmark).protocol == {"circular": True, "flip": False}


@recorded
def test_an_index_naming_two_items_is_an_error_that_names_it(tmp_path):
    benchmark = BenchmarkFactory(family="3dsrbench")
    for qid in ("AAAA0001", "BBBB0002"):
        Item.objects.create(benchmark=benchmark, external_id=qid, source_index="0", question="Q?",
                            answer_format="single", choices=["yes", "no"], answers=["A"], status="approved")
    path = tmp_path / "result.csv"
    path.write_text("index,question,prediction\n0,Q?,A\n")
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 record"):
        call_command("score_predictions", "--benchmark", benchmark.slug, "--pred", str(path), stdout=out)
    assert "prediction row 2: index '0' names 2 items" in json.loads(out.getvalue())["errors"][0]


# --- the shapes, read without the platform ---------------------------------------------------------


def records(data: bytes, name: str) -> tuple[list, list[str]]:
    errors: list[str] = []
    return predfiles.read_records(data, name, errors), errors


def test_lmms_eval_logs_old_and_new_read_the_filtered_answer_and_the_docs_ids():
    sample = {"doc_id": 4, "doc": {"question_id": "scene_800-17", "index": 12}, "target": ["A"],
              "resps": [["A and D"]], "filtered_resps": [["A, D"]]}
    new, errors = records(json.dumps(sample).encode() + b"\n", "samples.jsonl")
    old, _ = records(json.dumps({"args": {}, "logs": [sample]}).encode(), "m3verse.json")
    for found in (new, old):
        assert found[0].keys == (("question_id", "scene_800-17"), ("index", "12"))
        assert found[0].line["output"] == "A, D"
    assert not errors
    keyless, errors = records(json.dumps({**sample, "doc": {"question": "?"}}).encode(), "samples.jsonl")
    assert keyless == [] and "its doc has no id" in errors[0]


def test_scorer_lines_pass_through_exactly_and_bad_lines_are_reported_as_the_cli_reports_them():
    lines = b'{"id": 7, "output": 3, "repeat": 1, "judge": 4}\n\n{broken\n"text"\n'
    found, errors = records(lines, "pred.jsonl")
    assert found[0].keys == (("id", "7"),) and found[0].line == {"id": 7, "output": 3, "repeat": 1, "judge": 4}
    assert found[1].keys == () and found[1].line == "text" and found[1].where == "prediction line 4"
    assert errors == ["prediction line 3: invalid JSON (Expecting property name enclosed in double quotes)"]


def test_vlmevalkit_tables_key_rows_by_their_ids_then_index():
    csv_rows, _ = records(b"index,qid,prediction\n3.0,VIN6MS3J-1,B\n4,,7\n", "result.csv")
    assert csv_rows[0].keys == (("qid", "VIN6MS3J-1"), ("index", "3"))
    assert csv_rows[1].keys == (("index", "4"),) and csv_rows[1].line["output"] == "7"
    with pytest.raises(predfiles.PredictionFileError, match="prediction"):
        records(b"index\tanswer\n1\tA\n", "result.tsv")
    with pytest.raises(predfiles.PredictionFileError, match="xlsx"):
        prediction_files.read_prediction_files([("result.xlsx", b"not a workbook")])


def test_causalspatial_output_lines_and_hypo3d_files_read_their_model_answer():
    line = {"question_id": "Collision_Level_1_0", "gt_answer": "(A)", "model_answer": "{'Answer': '(B)'}",
            "model": "m", "not_sure": "(C)", "type": "collision", "difficulty": "L1"}
    found, _ = records(json.dumps(line).encode(), "out.jsonl")
    assert found[0].keys == (("question_id", "Collision_Level_1_0"),)
    assert found[0].line["output"] == "{'Answer': '(B)'}"
    hypo3d = {"scene0000_00": [{"context_change": "c", "questions_answers": [
        {"question_id": "00042", "answer": "sofa", "predicted_answer": "the sofa"},
        {"question_id": "00043", "answer": "two"}]}]}
    found, errors = records(json.dumps(hypo3d).encode(), "hypo3d.json")
    assert [(r.keys, r.line["output"]) for r in found] == [((("question_id", "00042"),), "the sofa")]
    assert not errors


@recorded
def test_a_recorded_model_runs_only_on_the_benchmark_its_outputs_are_for(tmp_path):
    benchmark = imported(tmp_path, "m3verse-own", "m3verse", "m3verse.jsonl", jsonl(M3VERSE))
    path = tmp_path / "outputs.jsonl"
    path.write_text(json.dumps({"id": "scene_800-17", "output": "A"}) + "\n")
    command("run_eval", "--benchmark", benchmark.slug, "--outputs", str(path))
    other = imported(tmp_path, "m3verse-other", "m3verse", "m3verse.jsonl", jsonl(M3VERSE))
    with pytest.raises(DomainError, match="recorded for m3verse-own, not m3verse-other"):
        services.launch_run(ModelSpec.objects.get(name="outputs.jsonl").pk, other, None)
