"""Bootstrap intervals (`score(..., ci=)`, `python -m scoring --ci`): widths on known cases, the unit
each family resamples, clusters, seeds, and an interval holding every estimate of every family."""

import contextlib
import io
import json
import math

import pytest
from scipy.stats import binomtest, norm

from scoring import score
from scoring.__main__ import main
from scoring.engine import get_family
from scoring.records import parse_gold
from scoring.uncertainty import Bootstrap, resampling_units


def open_items(correct: int, n: int, tags=lambda i: {}) -> tuple[list[dict], list[dict]]:
    """Hypo3D rows, the first `correct` of `n` answered right."""
    gold = [{"id": f"q{i}", "answer_format": "open", "answer": "left", "tags": tags(i)} for i in range(n)]
    preds = [{"id": f"q{i}", "output": "left" if i < correct else "right"} for i in range(n)]
    return gold, preds


def width(interval: list[float]) -> float:
    return interval[1] - interval[0]


def test_a_binomial_accuracy_interval_is_as_wide_as_wilsons_at_n_400():
    gold, preds = open_items(240, 400)
    result = score("hypo3d", gold, preds, sbert=False, ci=0.95)
    wilson = binomtest(240, 400).proportion_ci(0.95, method="wilson")
    wilson_width = 100 * (wilson.high - wilson.low)
    assert 0.8 * wilson_width <= width(result["ci"]["EM"]) <= 1.2 * wilson_width
    normal = 2 * 100 * norm.ppf(0.975) * math.sqrt(0.6 * 0.4 / 400)
    assert 0.8 * normal <= width(result["overall"]["ci"]["EM"]) <= 1.2 * normal
    assert result["ci"]["EM"][0] <= 60.0 <= result["ci"]["EM"][1]
    assert result["uncertainty"]["unit"].startswith("item") and result["uncertainty"]["n_units"] == 400


def test_a_lower_level_gives_a_narrower_interval():
    gold, preds = open_items(240, 400)
    wide = score("hypo3d", gold, preds, sbert=False, ci=0.99)["ci"]["EM"]
    narrow = score("hypo3d", gold, preds, sbert=False, ci=0.8)["ci"]["EM"]
    assert width(narrow) < width(wide)


def participant_rows(n_participants=12, per_participant=30):
    """A human row: half the participants get 90 % right, half 30 %; each row names its participant."""
    gold, preds = [], []
    for person in range(n_participants):
        right = round(per_participant * (0.9 if person % 2 else 0.3))
        for k in range(per_participant):
            row_id = f"s{person}/q{k}"
            gold.append({"id": row_id, "answer_format": "open", "answer": "left",
                         "tags": {"participant": person, "change_type": "movement" if k % 2 else "removal"}})
            preds.append({"id": row_id, "output": "left" if k < right else "right"})
    return gold, preds


def test_clustered_intervals_are_wider_than_unclustered_when_participants_differ():
    gold, preds = participant_rows()
    by = ["change_type"]
    plain = score("hypo3d", gold, preds, by=by, sbert=False, ci=0.95)
    clustered = score("hypo3d", gold, preds, by=by, sbert=False, ci=0.95, cluster="participant")
    assert clustered["overall"]["EM"] == plain["overall"]["EM"]
    assert width(clustered["ci"]["EM"]) > 1.5 * width(plain["ci"]["EM"])
    for key in plain["by"]:
        assert width(clustered["by"][key]["ci"]["EM"]) > width(plain["by"][key]["ci"]["EM"])
    assert clustered["uncertainty"]["n_units"] == 12 and plain["uncertainty"]["n_units"] == 360


def test_the_same_seed_gives_the_same_intervals_and_another_seed_others():
    gold, preds = open_items(123, 301, tags=lambda i: {"change_type": "movement" if i % 3 else "removal"})
    first = score("hypo3d", gold, preds, by=["change_type"], sbert=False, ci=0.95, ci_seed=7)
    again = score("hypo3d", gold, preds, by=["change_type"], sbert=False, ci=0.95, ci_seed=7)
    other = score("hypo3d", gold, preds, by=["change_type"], sbert=False, ci=0.95, ci_seed=8)
    assert first == again
    assert first["ci"] != other["ci"] or first["by"] != other["by"]


def test_an_estimate_every_resample_repeats_gets_the_interval_of_that_one_value():
    gold, preds = open_items(50, 50)
    result = score("hypo3d", gold, preds, sbert=False, ci=0.95)
    assert result["ci"]["EM"] == [100.0, 100.0]
    gold, preds = open_items(0, 50)
    assert score("hypo3d", gold, preds, sbert=False, ci=0.95)["ci"]["EM"] == [0.0, 0.0]


def test_without_ci_the_result_has_no_interval():
    gold, preds = open_items(3, 5)
    result = score("hypo3d", gold, preds, sbert=False)
    assert "ci" not in result and "ci" not in result["overall"] and "uncertainty" not in result


def test_3dsrbench_resamples_whole_questions_with_their_rotations_and_flip():
    family = get_family("3dsrbench")
    ids = ["ABCDEFGH", "ABCDEFGH-1", "ABCDEFGH-flip", "ABCDEFGH-flip-1", "IJKLMNOP", "IJKLMNOP-1"]
    items = [parse_gold({"id": i, "answer_format": "single", "choices": ["a", "b"], "answer": "A"}) for i in ids]
    assert resampling_units(family, items) == [[0, 1, 2, 3], [4, 5]]


def test_clusters_join_the_units_they_cross():
    family = get_family("hypo3d")
    items = [parse_gold({"id": f"r{i}", "answer_format": "open", "answer": "x", "tags": tags})
             for i, tags in enumerate([{"p": 1}, {"p": 2}, {"p": 1}, {}])]
    assert resampling_units(family, items, "p") == [[0, 2], [1], [3]]


def three_d_rows(n_questions=60):
    gold, preds = [], []
    for q in range(n_questions):
        base = f"Q{q:07d}"
        for suffix in ("", "-1", "-flip", "-flip-1"):
            gold.append({"id": base + suffix, "answer_format": "single", "choices": ["yes", "no"],
                         "answer": "B" if "flip" in suffix else "A",
                         "tags": {"category": ["height_higher", "location_above"][q % 2]}})
            right = (q % 3 != 0) or suffix == ""
            preds.append({"id": base + suffix, "output": ("B" if "flip" in suffix else "A") if right else
                          ("A" if "flip" in suffix else "B")})
    return gold, preds


def causal_rows(n=40):
    gold, preds = [], []
    for task in ("Collision", "Occlusion"):
        for level in (1, 2):
            for k in range(n):
                item = f"{task}_Level_{level}_{k}"
                gold.append({"id": item, "answer_format": "single", "choices": ["yes", "no", "Not sure"],
                             "answer": "A", "not_sure": "C"})
                for repeat in range(5):
                    letter = "ABC"[(k * 7 + repeat * (k % 3)) % 3]
                    preds.append({"id": item, "repeat": repeat, "output": f"{{'Answer': '({letter})'}}"})
    return gold, preds


def spatial_rows(n=90):
    gold = [{"id": i, "answer_format": "open", "answer": "Yes", "tags": {"level": f"L{1 + i % 3}"}} for i in range(n)]
    preds = [{"id": i, "output": "{'Answer': 'yes'}" if i % 4 else "no"} for i in range(n)]
    return gold, preds


def m3verse_rows(n=80):
    gold = [{"id": f"m{i}", "answer_format": "multi", "choices": ["a", "b", "c", "No correct option is listed."],
             "answer": ["A", "B"] if i % 2 else ["D"], "tags": {"state_type": ["intra-state", "inter-state"][i % 2]}}
            for i in range(n)]
    preds = [{"id": f"m{i}", "output": ["A", "D", "C", "A, B"][i % 4]} for i in range(n)]
    return gold, preds


FAMILY_ROWS = {
    "hypo3d": (lambda: open_items(140, 360, tags=lambda i: {
        "change_type": ["movement", "removal", "attribute"][i % 3],
        "question_type": ["Scale", "Direction Semantic"][i % 2]}), ["change_type", "question_type",
                                                                    "change_type+question_type"]),
    "3dsrbench": (three_d_rows, ["category"]),
    "causalspatial": (causal_rows, ["level", "level+task"]),
    "spatial457": (spatial_rows, ["level"]),
    "m3verse": (m3verse_rows, ["state_type"]),
}


def write_jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def run_cli(args: list[str]) -> tuple[int, dict]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args)
    return code, json.loads(out.getvalue())


def holds(interval, estimate) -> bool:
    return interval is not None and interval[0] <= estimate <= interval[1]


@pytest.mark.parametrize("family", list(FAMILY_ROWS))
def test_the_cli_gives_every_metric_of_every_family_an_interval_holding_it(tmp_path, family):
    make, by = FAMILY_ROWS[family]
    gold, preds = make()
    args = ["--family", family, "--gold", write_jsonl(tmp_path / "g.jsonl", gold),
            "--pred", write_jsonl(tmp_path / "p.jsonl", preds), "--ci", "0.95", "--no-sbert"]
    for spec in by:
        args += ["--by", spec]
    code, result = run_cli(args)
    assert code == 0
    assert result["by"], "the rows fill some group"
    assert result["ci"] == result["overall"]["ci"]
    for values in [result["overall"], *result["by"].values()]:
        metrics = [m for m in values if m != "ci"]  # spreads over repeats (`_std`) too
        assert set(values["ci"]) == set(metrics)
        for metric in metrics:
            if values[metric] is None:
                assert values["ci"][metric] is None
            else:
                assert holds(values["ci"][metric], values[metric]), (metric, values)
    again = run_cli(args)[1]
    assert again == result
    code, seeded = run_cli([*args, "--ci-seed", "5"])
    assert code == 0 and seeded["uncertainty"]["seed"] == 5


def test_3dsrbench_and_causalspatial_name_their_units_in_the_cli_output(tmp_path):
    gold, preds = three_d_rows(30)
    _, result = run_cli(["--family", "3dsrbench", "--gold", write_jsonl(tmp_path / "g.jsonl", gold),
                         "--pred", write_jsonl(tmp_path / "p.jsonl", preds), "--ci", "0.9"])
    assert result["uncertainty"]["n_units"] == 30 and result["uncertainty"]["unit"].startswith("question")
    gold, preds = causal_rows(10)
    _, result = run_cli(["--family", "causalspatial", "--gold", write_jsonl(tmp_path / "g.jsonl", gold),
                         "--pred", write_jsonl(tmp_path / "p.jsonl", preds), "--ci", "0.9"])
    assert result["uncertainty"]["n_units"] == 40 and result["uncertainty"]["level"] == 0.9
    # each item's five repeats move together: an interval for the mean over repeats
    assert "accuracy_std" in result["overall"] and holds(result["ci"]["accuracy"], result["overall"]["accuracy"])
    assert holds(result["ci"]["accuracy_std"], result["overall"]["accuracy_std"])


@pytest.mark.parametrize("level", ["0", "1", "1.5", "-0.2", "abc"])
def test_a_bad_level_is_refused_with_one_line_and_status_2(tmp_path, capsys, level):
    gold, preds = open_items(1, 2)
    args = ["--family", "hypo3d", "--gold", write_jsonl(tmp_path / "g.jsonl", gold),
            "--pred", write_jsonl(tmp_path / "p.jsonl", preds), "--ci", level]
    with contextlib.suppress(SystemExit):
        assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("level" in err or "--ci" in err)


@pytest.mark.parametrize("extra", [["--ci-seed", "3"], ["--ci-cluster", "participant"]])
def test_the_interval_options_need_ci(tmp_path, capsys, extra):
    gold, preds = open_items(1, 2)
    args = ["--family", "hypo3d", "--gold", write_jsonl(tmp_path / "g.jsonl", gold),
            "--pred", write_jsonl(tmp_path / "p.jsonl", preds), *extra]
    assert main(args) == 2
    assert "need --ci" in capsys.readouterr().err


def test_the_bootstrap_settings_refuse_too_few_resamples():
    with pytest.raises(ValueError, match="resamples"):
        Bootstrap(0.95, resamples=10)
