"""Paper tables: each family's layout read from its Family record, filled from `score()` results;
the best model value per column marked; CSV rows and booktabs LaTeX of the same numbers."""

import pytest

from scoring import FAMILIES, chance_levels, score
from scoring.engine import get_family
from scoring.tables import breakdowns, csv_rows, latex_table, paper_table, paper_tables, radar_chart


def result(em, pm, by):
    return {"n_items": 2, "overall": {"EM": em, "PM": pm}, "by": by}


def values(table, row=0):
    """Cell values of one row, per column, per metric."""
    return [[v["value"] for v in cell] for cell in table["rows"][row]["cells"]]


def best(table, row=0):
    return [[v["best"] for v in cell] for cell in table["rows"][row]["cells"]]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_states_its_facts_and_scores_what_its_tables_need(family):
    record = get_family(family)
    assert record.primary_metric in record.metrics
    assert record.tables and record.radar_axis and record.question_types
    specs = breakdowns(family)
    for table in record.tables:
        assert set(table.breakdowns) <= set(specs)
        assert set(table.metrics) <= (set(record.metrics) | set(record.optional_metrics)
                                      | {name for name, _, _ in table.differences})
    assert record.radar_axis in specs


def test_hypo3d_has_question_types_and_no_chance_row():
    record = get_family("hypo3d")
    assert record.question_types == ("Scale", "Direction", "Semantic")
    assert record.chance_rows == () and get_family("3dsrbench").chance_rows == ("random", "random++")


def hypo3d_rows():
    gold = [
        {"id": "1", "answer_format": "open", "answer": "left",
         "tags": {"change_type": "removal", "question_type": "Direction"}},
        {"id": "2", "answer_format": "open", "answer": "2",
         "tags": {"change_type": "movement", "question_type": "Scale Direction"}},
        {"id": "3", "answer_format": "open", "answer": "chair",
         "tags": {"change_type": "movement", "question_type": "Semantic"}},
    ]
    by = breakdowns("hypo3d")
    human = score("hypo3d", gold, [{"id": "1", "output": "left"}, {"id": "2", "output": "two"},
                                   {"id": "3", "output": "chair"}], by=by, sbert=False)
    good = score("hypo3d", gold, [{"id": "1", "output": "left"}, {"id": "2", "output": "3"},
                                  {"id": "3", "output": "red chair"}], by=by, sbert=False)
    bad = score("hypo3d", gold, [{"id": "1", "output": "right"}, {"id": "2", "output": "3"},
                                 {"id": "3", "output": "table"}], by=by, sbert=False)
    return [("Human", "human", human), ("Good", "model", good), ("Bad", "model", bad)]


def test_hypo3d_table1_by_change_type_in_the_papers_order_and_the_best_model_marked():
    table1, table9 = paper_tables("hypo3d", hypo3d_rows())
    assert table1["key"] == "table1" and table1["by"] == "change_type"
    assert table1["columns"] == ["Overall", "movement", "removal"] and table1["metrics"] == ["EM", "PM"]
    assert table1["group_spans"] == []
    # human 3/3; good: "left" right (removal), "3" for 2 wrong, "red chair" a partial match; bad: all wrong
    assert values(table1, 0) == [[100.0, 100.0], [100.0, 100.0], [100.0, 100.0]]
    assert values(table1, 1) == [[33.33, 66.67], [0.0, 50.0], [100.0, 100.0]]
    assert values(table1, 2) == [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
    # the human row is a reference, never marked; ties among models are both marked
    assert not any(v for cell in best(table1, 0) for v in cell)
    assert best(table1, 1) == [[True, True], [True, True], [True, True]]
    assert best(table1, 2) == [[False, False], [True, False], [False, False]]


def test_hypo3d_table9_crosses_change_type_with_question_type():
    _, table9 = paper_tables("hypo3d", hypo3d_rows())
    assert table9["by"] == "change_type+question_type"
    assert table9["groups"] == ["", "movement", "movement", "movement", "removal"]
    assert table9["columns"] == ["Overall", "Scale", "Direction", "Semantic", "Direction"]
    assert table9["group_spans"] == [{"label": "", "span": 2}, {"label": "movement", "span": 6},
                                     {"label": "removal", "span": 2}]
    assert values(table9, 1) == [[33.33, 66.67], [0.0, 0.0], [0.0, 0.0], [0.0, 100.0], [100.0, 100.0]]


def srbench_gold(viewpoints=False):
    rows = []
    for base, category in (("AAAAAAAA", "height_higher"), ("BBBBBBBB", "location_above")):
        for suffix, choices, answer in (("", ["yes", "no"], "A"), ("-1", ["no", "yes"], "B")):
            tags = {"category": category}
            if viewpoints:
                tags["viewpoint"] = "common" if base.startswith("A") else "uncommon"
            rows.append({"id": base + suffix, "answer_format": "single", "choices": choices, "answer": answer,
                         "tags": tags})
    return rows


def test_3dsrbench_categories_and_viewpoint_splits_only_when_tagged():
    by = breakdowns("3dsrbench")
    assert {"category", "viewpoint", "viewpoint+category"} <= set(by)
    plain = score("3dsrbench", srbench_gold(), [{"id": g["id"], "output": "A"} for g in srbench_gold()], by=by)
    tables = paper_tables("3dsrbench", [("M", "model", plain)])
    assert [t["key"] for t in tables] == ["categories"]
    assert tables[0]["columns"] == ["Overall", "height", "location"]
    assert tables[0]["metrics"] == ["circular", "vanilla"]
    assert values(tables[0]) == [[0.0, 50.0], [0.0, 50.0], [0.0, 50.0]]

    gold = srbench_gold(viewpoints=True)
    tagged = score("3dsrbench", gold, [{"id": g["id"], "output": g["answer"]} for g in gold], by=by)
    levels = chance_levels("3dsrbench", gold, by=by)
    rows = [("Random", "chance", {"n_items": 4, **levels["random"]}),
            ("Random++", "chance", {"n_items": 4, **levels["random++"]}), ("M", "model", tagged)]
    categories, viewpoints = paper_tables("3dsrbench", rows)
    assert viewpoints["key"] == "viewpoints"
    assert viewpoints["groups"] == ["", "common", "common", "uncommon", "uncommon"]
    assert viewpoints["columns"] == ["Overall", "Avg.", "height", "Avg.", "location"]
    # Random: a 2-choice circular group succeeds with 1/4; Random++ (one guess kept): 1/2
    assert values(viewpoints, 0)[0] == [25.0, 50.0] and values(viewpoints, 1)[0] == [50.0, 50.0]
    assert values(viewpoints, 2) == [[100.0, 100.0]] * 5


def causal_gold():
    return [
        {"id": f"{task.title()}_Level_{level}_{i}", "answer_format": "single", "choices": ["Yes", "No", "Not sure"],
         "answer": "A", "not_sure": "C"}
        for level in (1, 2) for i, task in enumerate(("Trajectory", "Collision"))
    ]


def test_causalspatial_levels_by_task_with_level_averages_last_and_std_over_repeats():
    gold = causal_gold()
    # repeat 0 right everywhere; repeat 1 right on level 1 only, "Not sure" on level 2
    preds = [{"id": g["id"], "output": "Answer: A", "repeat": 0} for g in gold] + [
        {"id": g["id"], "output": "Answer: A" if "Level_1" in g["id"] else "Answer: (C)", "repeat": 1}
        for g in gold
    ]
    scored = score("causalspatial", gold, preds, by=breakdowns("causalspatial"))
    assert scored["overall"] == {"accuracy": 75.0, "not_sure_rate": 25.0, "accuracy_std": 25.0,
                                 "not_sure_rate_std": 25.0}
    (table,) = paper_tables("causalspatial", [("M", "model", scored), ("Other", "model", scored)])
    assert table["groups"] == ["", "L1", "L1", "L1", "L2", "L2", "L2"]
    assert table["columns"] == ["Overall", "collision", "trajectory", "Avg.", "collision", "trajectory", "Avg."]
    overall, *_, l2_average = table["rows"][0]["cells"]
    # two equal rows without intervals or units: nothing to test, both marked as the papers do
    assert overall == [
        {"metric": "accuracy", "value": 75.0, "std": 25.0, "ci": None, "interval": None, "best": True,
         "separated": None},
        {"metric": "not_sure_rate", "value": 25.0, "std": 25.0, "ci": None, "interval": None, "best": False,
         "separated": None},  # never ranked
    ]
    assert l2_average[0] == {"metric": "accuracy", "value": 50.0, "std": 50.0, "ci": None, "interval": None,
                             "best": True, "separated": None}
    assert values(table)[3] == [100.0, 0.0]  # L1 average


def test_spatial457_levels_in_the_papers_order():
    result_by = {"level=L5_collision": {"accuracy": 10.0}, "level=L1_single": {"accuracy": 90.0},
                 "level=L4_pose": {"accuracy": 40.0}, "level=L3_2d_spatial": {"accuracy": 50.0}}
    (table,) = paper_tables("spatial457", [("M", "model", {"n_items": 4, "overall": {"accuracy": 47.5},
                                                           "by": result_by})])
    assert table["columns"] == ["Overall", "L1_single", "L3_2d_spatial", "L4_pose", "L5_collision"]
    assert values(table) == [[47.5], [90.0], [50.0], [40.0], [10.0]]


def test_m3verse_state_averages_capabilities_and_the_hallucination_gap():
    gold = [
        {"id": "1", "answer_format": "single", "choices": ["lamp", "sofa", "No correct option is listed."],
         "answer": "C", "tags": {"state_type": "inter-states", "capabilities": ["reasoning"]}},
        {"id": "2", "answer_format": "multi", "choices": ["lamp", "sofa", "plant"], "answer": ["A", "B"],
         "tags": {"state_type": "intra-states", "capabilities": ["spatial understanding", "reasoning"]}},
        {"id": "3", "answer_format": "single", "choices": ["lamp", "sofa"], "answer": "B",
         "tags": {"state_type": "inter-states", "capabilities": ["attribute recognition"]}},
    ]
    preds = [{"id": "1", "output": "A"}, {"id": "2", "output": "A"}, {"id": "3", "output": "B"}]
    scored = score("m3verse", gold, preds, by=breakdowns("m3verse"))
    states, hallucination = paper_tables("m3verse", [("M", "model", scored)])
    assert states["groups"] == ["", "intra-states", "intra-states", "intra-states", "inter-states",
                                "inter-states", "inter-states"]
    assert states["columns"] == ["Overall", "Avg.", "spatial understanding", "reasoning", "Avg.",
                                 "attribute recognition", "reasoning"]
    assert values(states) == [[50.0], [50.0], [50.0], [50.0], [50.0], [100.0], [0.0]]
    assert hallucination["columns"] == ["Overall"]
    assert hallucination["metrics"] == ["hallucination_score", "factual_score", "factual_minus_hallucination"]
    assert values(hallucination) == [[0.0, 75.0, 75.0]]


def test_a_single_model_row_marks_nothing_and_missing_values_are_none():
    human = result(90.0, 95.0, {"change_type=movement": {"EM": 90.0, "PM": 95.0}})
    model = result(40.0, 96.0, {"change_type=removal": {"EM": 10.0, "PM": 20.0}})
    (table, _) = paper_tables("hypo3d", [("Human", "human", human), ("Model", "model", model)])
    assert not any(v["best"] for row in table["rows"] for cell in row["cells"] for v in cell)
    assert values(table, 0)[2] == [None, None] and values(table, 1)[1] == [None, None]


def test_paper_table_is_the_main_table_flat():
    cs = {"n_items": 1, "overall": {"accuracy": 50.0, "not_sure_rate": 50.0},
          "by": {"level+task=L1+collision": {"accuracy": 50.0, "not_sure_rate": 50.0}}}
    table = paper_table("causalspatial", [("A", "human", cs)])
    assert table["columns"] == ["Overall", "L1+collision"] and values(table) == [[50.0, 50.0], [50.0, 50.0]]


def test_radar_axes_follow_the_question_types_order():
    results = [("M", "model", {"by": {"question_type=Semantic": {"EM": 1.0}, "question_type=Scale": {"EM": 2.0},
                                      "question_type=Other": {"EM": 3.0}}})]
    chart = radar_chart("hypo3d", results)
    assert chart["axes"] == ["Scale", "Semantic", "Other"] and chart["series"][0]["values"] == [2.0, 1.0, 3.0]


def test_csv_rows_carry_the_table_values_and_spreads():
    gold = causal_gold()
    preds = [{"id": g["id"], "output": "Answer: A", "repeat": r} for r in (0, 1) for g in gold[:3]]
    (table,) = paper_tables("causalspatial", [("M", "model", score("causalspatial", gold, preds,
                                                                     by=breakdowns("causalspatial")))])
    header, line = csv_rows(table)
    assert header[:7] == ["row", "kind", "n", "Overall accuracy", "Overall accuracy std", "Overall not_sure_rate",
                          "Overall not_sure_rate std"]
    assert "L1 Avg. accuracy" in header and len(header) == len(line)
    assert line[:7] == ["M", "model", 4, 75.0, 0.0, 0.0, 0.0]


def test_latex_table_is_booktabs_with_two_decimals_the_best_bold_and_spreads():
    rows = [("Human — Pilot", "human", result(91.0, 92.5, {})),
            ("GPT_4o", "model", {"n_items": 2, "overall": {"EM": 45.5, "PM": 48.824, "EM_std": 1.2}, "by": {}}),
            ("Qwen2-VL 72B", "model", result(44.25, None, {}))]
    table = paper_tables("hypo3d", rows)[0]
    latex = latex_table(table)
    lines = latex.splitlines()
    assert lines[0] == r"\begin{table}[t]" and lines[-1] == r"\end{table}"
    assert r"\begin{tabular}{lrr}" in latex
    assert latex.index(r"\toprule") < latex.index(r"\midrule") < latex.index(r"\bottomrule")
    assert r"Model & \multicolumn{2}{c}{Overall} \\" in lines
    assert r" & EM & PM \\" in lines
    assert r"Human --- Pilot & 91.00 & 92.50 \\" in lines
    assert r"GPT\_4o & \textbf{45.50 $\pm$ 1.20} & \textbf{48.82} \\" in lines
    assert r"Qwen2-VL 72B & 44.25 & -- \\" in lines
    # a rule between the human row and the model rows
    assert lines[lines.index(r"Human --- Pilot & 91.00 & 92.50 \\") + 1] == r"\midrule"


def test_latex_table_groups_columns_under_a_cmidrule():
    _, table9 = paper_tables("hypo3d", hypo3d_rows())
    latex = latex_table(table9)
    assert r"\begin{tabular}{l" + "r" * 10 + "}" in latex
    assert r" &  &  & \multicolumn{6}{c}{movement} & \multicolumn{2}{c}{removal} \\" in latex
    assert r"\cmidrule(lr){4-9} \cmidrule(lr){10-11}" in latex
