"""Paper tables: columns per the family's layout, best value per column marked."""

from scoring.tables import paper_table


def result(em, pm, by):
    return {"n_items": 2, "overall": {"EM": em, "PM": pm}, "by": by}


def test_hypo3d_table_has_overall_then_change_types_and_marks_the_best():
    human = result(90.0, 95.0, {"change_type=movement": {"EM": 90.0, "PM": 95.0}})
    model = result(40.0, 96.0, {"change_type=movement": {"EM": 40.0, "PM": 96.0},
                                "change_type=removal": {"EM": 10.0, "PM": 20.0}})
    table = paper_table("hypo3d", [("Human", "human", human), ("Model", "model", model)])
    assert table["columns"] == ["Overall", "movement", "removal"] and table["metrics"] == ("EM", "PM")
    human_row, model_row = table["rows"]
    assert [v["best"] for v in human_row["cells"][0]] == [True, False]
    assert [v["best"] for v in model_row["cells"][0]] == [False, True]
    assert human_row["cells"][2] == [{"value": None, "best": False}, {"value": None, "best": False}]
    assert model_row["cells"][2][0] == {"value": 10.0, "best": True}


def test_not_sure_rate_is_never_marked_and_a_single_row_marks_nothing():
    cs = {"n_items": 1, "overall": {"accuracy": 50.0, "not_sure_rate": 50.0}, "by": {}}
    other = {"n_items": 1, "overall": {"accuracy": 20.0, "not_sure_rate": 80.0}, "by": {}}
    table = paper_table("causalspatial", [("A", "model", cs), ("B", "model", other)])
    assert [v["best"] for v in table["rows"][0]["cells"][0]] == [True, False]
    assert [v["best"] for v in table["rows"][1]["cells"][0]] == [False, False]
    alone = paper_table("causalspatial", [("A", "model", cs)])
    assert not any(v["best"] for cell in alone["rows"][0]["cells"] for v in cell)
