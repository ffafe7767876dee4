"""Intervals in every table cell and export, and "best" marked only where a paired test (or, without
paired data, non-overlapping intervals) separates the best model from the next."""

from scoring import score
from scoring.tables import breakdowns, csv_rows, latex_table, paper_tables


def hypo3d_run(right: set[int], n: int = 300):
    gold = [{"id": f"q{i}", "answer_format": "open", "answer": "left",
             "tags": {"change_type": "movement" if i % 2 else "removal", "question_type": "Direction"}}
            for i in range(n)]
    preds = [{"id": f"q{i}", "output": "left" if i in right else "right"} for i in range(n)]
    return score("hypo3d", gold, preds, by=breakdowns("hypo3d"), sbert=False, ci=0.95, units=True)


def table_of(*results):
    return paper_tables("hypo3d", [(f"M{k}", "model", result) for k, result in enumerate(results)])[0]


def overall_em(table, row):
    return table["rows"][row]["cells"][0][0]


def test_a_clear_winner_is_bold_and_a_near_tie_is_not():
    strong = hypo3d_run(set(range(0, 300, 10)) | set(range(150)))  # 150 + 15 = 165 right
    weak = hypo3d_run(set(range(90)))  # 90 right, all also right for the strong run
    table = table_of(strong, weak)
    assert overall_em(table, 0)["best"] and overall_em(table, 0)["separated"] is True
    (entry,) = [e for e in table["comparisons"] if e["column"] == "Overall" and e["metric"] == "EM"]
    assert entry["method"] == "paired bootstrap" and entry["p_holm"] < 0.05 and entry["difference"] == 25.0
    near = hypo3d_run(set(range(91)))
    table = table_of(near, weak)
    assert overall_em(table, 0)["value"] > overall_em(table, 1)["value"]
    assert not overall_em(table, 0)["best"] and overall_em(table, 0)["separated"] is False
    assert "not distinguishable" in table["best_rule"] and "Holm" in table["best_rule"]


def test_holm_correction_can_unmark_a_cell_a_single_test_would_mark():
    # 14 items only the first run gets right, 4 only the second: p ~ 0.03 alone, not across the table
    strong, weak = hypo3d_run(set(range(130))), hypo3d_run(set(range(14, 134)))
    table = table_of(strong, weak)
    (entry,) = [e for e in table["comparisons"] if e["column"] == "Overall" and e["metric"] == "EM"]
    assert entry["p_value"] < 0.05 <= entry["p_holm"]
    assert not overall_em(table, 0)["best"] and overall_em(table, 0)["separated"] is False
    tested = [e for e in table["comparisons"] if e["method"] == "paired bootstrap"]
    assert len(tested) > 1 and all(e["p_holm"] >= e["p_value"] for e in tested)


def test_without_units_the_intervals_decide_and_without_either_the_table_says_so():
    strong = hypo3d_run(set(range(200)))
    weak = hypo3d_run(set(range(60)))
    for result in (strong, weak):
        del result["units"]
    table = table_of(strong, weak)
    assert overall_em(table, 0)["best"] and table["comparisons"][0]["method"] == "intervals"
    assert "interval" in table["best_rule"]
    bare = {"n_items": 1, "overall": {"EM": 50.0, "PM": 50.0}, "by": {}}
    table = table_of(bare, {**bare, "overall": {"EM": 40.0, "PM": 40.0}})
    assert overall_em(table, 0)["best"] and overall_em(table, 0)["separated"] is None
    assert "no interval or paired data" in table["best_rule"]


def test_cells_csv_and_latex_carry_the_intervals():
    result = hypo3d_run(set(range(120)))
    table = table_of(result)
    cell = overall_em(table, 0)
    assert cell["ci"] == result["ci"]["EM"] and cell["ci"][0] <= cell["value"] <= cell["ci"][1]
    header, line = csv_rows(table)
    assert "Overall EM ci low" in header and "Overall EM ci high" in header
    assert line[header.index("Overall EM ci low")] == cell["ci"][0]
    latex = latex_table(table)
    half = max(cell["ci"][1] - cell["value"], cell["value"] - cell["ci"][0])
    assert cell["interval"] == f"± {half:.2f}" and f"40.00 $\\pm$ {half:.2f}" in latex


def test_causalspatial_prints_intervals_in_brackets_beside_the_spread_over_repeats():
    gold = [{"id": f"Collision_Level_1_{k}", "answer_format": "single", "choices": ["yes", "no", "Not sure"],
             "answer": "A", "not_sure": "C"} for k in range(40)]
    preds = [{"id": g["id"], "repeat": r, "output": f"Answer: {'A' if (k + r) % 3 else 'B'}"}
             for k, g in enumerate(gold) for r in range(3)]
    result = score("causalspatial", gold, preds, by=breakdowns("causalspatial"), ci=0.95)
    (table,) = paper_tables("causalspatial", [("M", "model", result)])
    cell = table["rows"][0]["cells"][0][0]
    assert table["interval_style"] == "brackets"
    assert cell["interval"] == f"[{cell['ci'][0]:.2f}, {cell['ci'][1]:.2f}]"
    assert f"{cell['value']:.2f} $\\pm$ {cell['std']:.2f} [{cell['ci'][0]:.2f}, {cell['ci'][1]:.2f}]" in latex_table(table)
