"""benchmarks.protocols: the variants of an item under vanilla, circular and flip protocols, the
answers and ids each variant gets, and mirrored images; checked against the 3DSRBench scorer."""

import io

import pytest
from PIL import Image

import scoring
from benchmarks import protocols
from benchmarks.protocols import VANILLA, Protocol, Variant
from core.errors import DomainError


def test_variants_are_every_rotation_then_the_same_on_the_mirrored_image():
    both = Protocol(circular=True, flip=True)
    assert [v.name for v in protocols.variants(both, 4, "swap")] == [
        "", "1", "2", "3", "flip", "flip-1", "flip-2", "flip-3"
    ]
    assert protocols.variants(Protocol(), 4, "swap") == [VANILLA]
    # no flip rule, no image, or an open item: no flipped or rotated copies
    assert [v.name for v in protocols.variants(both, 2, None)] == ["", "1"]
    assert [v.name for v in protocols.variants(both, 2, "same", has_image=False)] == ["", "1"]
    assert protocols.variants(both, 0, None) == [VANILLA]


def test_variant_names_round_trip_and_bad_names_are_refused():
    for variant in (VANILLA, Variant(3), Variant(0, True), Variant(12, True)):
        assert Variant.parse(variant.name) == variant
    for bad in ("0", "flip-0", "flop", "-1", "1-flip"):
        with pytest.raises(ValueError):
            Variant.parse(bad)


def test_rotation_shows_each_option_once_at_every_position():
    choices = ["w", "x", "y", "z"]
    shown = [protocols.shown_choices(choices, Variant(k)) for k in range(4)]
    assert shown[1] == ["x", "y", "z", "w"]
    for position in range(4):
        assert sorted(row[position] for row in shown) == choices


@pytest.mark.parametrize(
    ("choices", "answer", "flipped"),
    [
        (["on the left", "on the right"], "A", "B"),
        (["Left", "Right", "Behind", "In front"], "B", "A"),  # the text counterpart, case kept
        (["yes", "no"], "A", "B"),  # two options with no left/right word: the other one
    ],
)
def test_a_swapping_item_answers_the_left_right_counterpart_on_the_mirrored_image(choices, answer, flipped):
    assert protocols.variant_answer(choices, answer, Variant(0, True), "swap") == flipped
    assert protocols.variant_answer(choices, answer, Variant(0, True), "same") == answer
    assert protocols.variant_answer(choices, answer, Variant(1), "swap") == answer  # rotation keeps gold order


def test_a_swapping_item_without_a_counterpart_is_refused_by_name():
    with pytest.raises(DomainError, match="no left/right counterpart") as error:
        protocols.variant_answer(["red", "green", "blue", "left"], "A", Variant(0, True), "swap")
    assert error.value.field == "flip"
    assert protocols.swap_left_right("Left of the LEFT lamp, right?") == "Right of the RIGHT lamp, left?"


def test_protocol_data_is_checked():
    assert Protocol.from_data(None) == Protocol() and Protocol.from_data({"flip": True}).flip
    assert Protocol(True, True).name == "flip+circular" and Protocol().as_data() == {"circular": False, "flip": False}
    for bad in ([], {"circle": True}, {"circular": "yes"}):
        with pytest.raises(DomainError) as error:
            Protocol.from_data(bad)
        assert error.value.field == "protocol"


def _gold(item_id, choices, answer, flip):
    return {"id": item_id, "answer_format": "single", "question": "Where is the cup?", "choices": choices,
            "answer": answer, "not_sure": None, "tags": {"category": "location", "flip": flip}}


def test_variant_rows_group_as_the_3dsrbench_scorer_expects():
    """Right on every row but one rotation of one question: circular and flip fall, vanilla barely."""
    both = Protocol(circular=True, flip=True)
    golds, preds = [], []
    for item_id, choices, flip in (("7", ["on the left", "on the right"], "swap"), ("8", ["a", "b", "c", "d"], "same")):
        for variant in protocols.variants(both, len(choices), flip):
            gold = protocols.variant_gold(_gold(item_id, choices, "A", flip), variant)
            shown = protocols.shown_choices(choices, variant)
            answer = choices[protocols.LETTERS.index(gold["answer"])]
            letter = protocols.LETTERS[shown.index(answer)]
            if item_id == "8" and variant == Variant(2, True):
                letter = protocols.LETTERS[(shown.index(answer) + 1) % 4]  # one wrong row
            golds.append(gold)
            preds.append(protocols.variant_prediction(item_id, letter, choices, variant))
    assert [g["id"] for g in golds[:4]] == ["7", "7-1", "7-flip", "7-flip-1"]
    result = scoring.score("3dsrbench", golds, preds)
    assert not result["errors"]
    overall = result["overall"]
    assert overall["vanilla"] == round(100 * 11 / 12, 2)
    assert overall["circular"] == 75.0  # groups 7, 7-flip, 8 right; 8-flip wrong
    assert overall["flip"] == round(100 * 5 / 6, 2)  # pairs (8-2, 8-flip-2) wrong
    assert overall["flip_circular"] == 50.0  # question 8 lost


def test_ten_or_more_rotations_still_group_by_question():
    choices = [f"option {i}" for i in range(12)]
    circular = Protocol(circular=True)
    golds = [protocols.variant_gold(_gold("9", choices, "A", None), v) for v in protocols.variants(circular, 12, None)]
    preds = [protocols.variant_prediction("9", protocols.LETTERS[(12 - v.rotation) % 12], choices, v)
             for v in protocols.variants(circular, 12, None)]
    result = scoring.score("3dsrbench", golds, preds)
    assert result["overall"]["circular"] == 100.0 and result["n_items"] == 12


def _png(width=4, height=2) -> bytes:
    image = Image.new("RGB", (width, height))
    image.putpixel((0, 0), (255, 0, 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def test_mirroring_moves_the_left_pixel_right_and_keeps_the_format():
    mirrored = protocols.mirror_image(_png())
    with Image.open(io.BytesIO(mirrored)) as image:
        assert image.format == "PNG" and image.getpixel((3, 0)) == (255, 0, 0) and image.getpixel((0, 0)) == (0, 0, 0)
    overlays = [{"type": "box", "x": 1, "y": 0, "width": 2, "height": 1},
                {"type": "arrow", "from": [0, 1], "to": [4, 1], "label": "cup"}]
    assert protocols.mirror_overlays(overlays, 10) == [
        {"type": "box", "x": 7, "y": 0, "width": 2, "height": 1},
        {"type": "arrow", "from": [10, 1], "to": [6, 1], "label": "cup"},
    ]
