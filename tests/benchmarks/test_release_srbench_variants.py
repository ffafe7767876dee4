"""3DSRBench items built here have their rotations and mirrored copies made at run time; their release is the
published TSV's shape: every rotation row and `-flip` row (options rotated, the answer following its text,
swapped on the mirrored image where the item swaps, the mirrored image, unique integer indexes, 8-character
base qids), the flip decision kept. VLMEvalKit's circular and flip evaluation on the exported TSV, computed
by the rule its `circ_eval` / `flip_eval` follow (VLMEvalKit's `_3DSRBench`, ../shared/METRICS-REFERENCE.md:
circular groups the qid without a trailing `-N`, flip the qid without `-flip`, flip+circular `qid[:8]`),
equals the platform's on the release, and the re-imported copy fills the same paper-table cells."""

import base64
import csv
import io
import re

import pytest
from PIL import Image

from benchmarks.models import AssetRole, Item
from benchmarks.protocols import Protocol, flip_rule, mirror_image, variant_gold, variant_prediction, variants
from benchmarks.services import gold_row, store_asset
from scoring import score
from scoring.tables import breakdowns, paper_tables
from tests.benchmarks.test_import_published import BLUE, RED
from tests.benchmarks.test_release_built_items import AUTHORED, copy_of, export, pick
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory

pytestmark = pytest.mark.django_db
LETTERS = "ABCD"
SIDES = ["on the left of the cup", "on the right of the cup", "in front of the cup", "behind the cup"]


def srbench_built():
    bench = BenchmarkFactory(family="3dsrbench")
    left, right = (SceneFactory(benchmark=bench, external_id=name) for name in ("coco_1", "coco_2"))
    store_asset(left, AssetRole.IMAGE, "left.jpg", RED)
    store_asset(right, AssetRole.IMAGE, "right.jpg", BLUE)
    specs = [  # (scene, question, choices, answer, subtype, flip decision, viewpoint)
        (left, "Where is the lamp?", SIDES, "A", "orientation_on_the_left", "swap", "common"),
        (right, "Is the lamp higher than the cup?", ["yes", "no"], "B", "height_higher", "same", "uncommon"),
        (right, "Is the lamp above the table?", ["yes", "no"], "A", "location_above", None, "common"),
        (left, "Which way does the car face?", SIDES, "C", "multi_object_facing", "none", "common"),
        (left, "Which side is the book on?", ["left", "right"], "B", "orientation_on_the_left", "swap", "uncommon"),
    ]
    for scene, question, choices, answer, subtype, flip, viewpoint in specs:
        tags = {"subtype": subtype, "category": subtype.split("_")[0] if subtype != "multi_object_facing"
                else "multi_object", "viewpoint": viewpoint, **({"flip": flip} if flip else {})}
        ItemFactory(benchmark=bench, scene=scene, change=None, answer_format="single", question=question,
                    choices=choices, answers=[answer], tags=tags, provenance=AUTHORED)
    return bench


def chosen(question: str, shown: list[str], gold_text: str, mirrored: bool) -> str:
    """One model: right on some questions, always `A` on others, right except on the mirrored image."""
    way = pick(question)
    if way == 1:
        return "A"
    if way == 2 and mirrored:
        return LETTERS[next(k for k, text in enumerate(shown) if text != gold_text)]
    return LETTERS[shown.index(gold_text)]


def platform_rows(items: list[Item]) -> tuple[list[dict], list[dict]]:
    """The platform's run of these items under CircularEval + FlipEval: gold and predictions per variant."""
    gold, preds = [], []
    for item in items:
        base = gold_row(item)
        for variant in variants(Protocol(circular=True, flip=True), len(item.choices), flip_rule(item.tags)):
            row = variant_gold(base, variant)
            shown = [item.choices[k] for k in variant.order(len(item.choices))]
            letter = chosen(item.question, shown, item.choices["ABCD".index(row["answer"])], variant.flip)
            gold.append(row)
            preds.append(variant_prediction(base["id"], letter, item.choices, variant))
    return gold, preds


def copy_rows(items: list[Item]) -> tuple[list[dict], list[dict]]:
    """The re-imported copy: every row is an item (its variants are in its ids), run vanilla."""
    gold = [gold_row(item) for item in items]
    preds = [{"id": row["id"], "output": chosen(item.question, item.choices,
                                                item.choices["ABCD".index(row["answer"])],
                                                item.tags.get("image_variant") == "flipped")}
             for item, row in zip(items, gold, strict=True)]
    return gold, preds


def result_of(gold, preds) -> dict:
    result = score("3dsrbench", gold, preds, by=breakdowns("3dsrbench"))
    assert result["n_dropped"] == 0, result["errors"]
    return result


def read_tsv(path) -> list[dict]:
    csv.field_size_limit(1 << 30)
    return list(csv.DictReader(io.StringIO(path.read_text()), delimiter="\t"))


def vlmevalkit_eval(rows: list[dict]) -> dict:
    """VLMEvalKit's 3DSRBench settings on the TSV's rows, each answered by the same model."""
    hits = {}
    for row in rows:
        shown = [row[letter] for letter in LETTERS if row[letter]]
        letter = chosen(row["question"], shown, row[row["answer"]], "-flip" in row["qid"])
        hits[row["qid"]] = int(letter == row["answer"])

    def grouped(key) -> float:
        groups = {}
        for qid, hit in hits.items():
            groups.setdefault(key(qid), []).append(hit)
        return round(100 * sum(all(g) for g in groups.values()) / len(groups), 2)

    return {"vanilla": round(100 * sum(hits.values()) / len(hits), 2),
            "circular": grouped(lambda qid: re.sub(r"-\d$", "", qid)),
            "flip": grouped(lambda qid: qid.replace("-flip", "")),
            "flip_circular": grouped(lambda qid: qid[:8])}


def test_the_tsv_holds_every_rotation_and_flip_row_and_vlmevalkit_scores_it_as_the_platform(tmp_path):
    bench = srbench_built()
    items = list(Item.objects.filter(benchmark=bench).select_related("scene").order_by("pk"))
    folder = export(bench, tmp_path)
    rows = read_tsv(folder / "3dsrbench.tsv")
    # 4 + 4 flip, 2 + 2 flip, 2 (no decision), 4 (none), 2 + 2 flip
    assert len(rows) == 22 and [int(row["index"]) for row in rows] == list(range(22))
    by_qid = {row["qid"]: row for row in rows}
    assert len(by_qid) == 22 and len({qid[:8] for qid in by_qid}) == 5
    assert all(re.fullmatch(r"[A-Z2-7]{8}(-flip)?(-[1-3])?", qid) for qid in by_qid)
    where = next(qid for qid, row in by_qid.items() if row["question"] == "Where is the lamp?" and "-" not in qid)
    assert [by_qid[where][letter] for letter in LETTERS] == SIDES and by_qid[where]["answer"] == "A"
    rotated = by_qid[f"{where}-1"]  # the options rotated by one: the answer follows its text
    assert [rotated[letter] for letter in LETTERS] == SIDES[1:] + SIDES[:1] and rotated[rotated["answer"]] == SIDES[0]
    mirrored = by_qid[f"{where}-flip"]  # the item swaps: on the mirrored image the answer is "right"
    assert mirrored[mirrored["answer"]] == SIDES[1] and by_qid[f"{where}-flip-2"][by_qid[f"{where}-flip-2"]["answer"]] == SIDES[1]
    assert (mirrored["flip"], by_qid[where]["flip"]) == ("swap", "swap")
    image = base64.b64decode(mirrored["image"])
    assert Image.open(io.BytesIO(image)).size == Image.open(io.BytesIO(RED)).size and image == mirror_image(RED)
    assert by_qid[f"{where}-flip-1"]["image"] == mirrored["index"]  # VLMEvalKit's reference to that row
    higher = next(qid for qid, row in by_qid.items() if row["question"].startswith("Is the lamp higher") and "-" not in qid)
    assert by_qid[f"{higher}-flip"]["answer"] == "B" and by_qid[f"{higher}-flip-1"]["answer"] == "A"  # same
    assert not any(qid.endswith("-flip") for qid in by_qid if by_qid[qid]["question"].startswith(("Is the lamp above",
                                                                                                   "Which way")))

    platform = result_of(*platform_rows(items))["overall"]
    assert vlmevalkit_eval(rows) == {metric: platform[metric] for metric in ("vanilla", "circular", "flip",
                                                                             "flip_circular")}
    assert platform["circular"] < platform["vanilla"] and platform["flip"] < platform["vanilla"]  # they differ


def test_the_copy_of_built_items_fills_the_same_paper_table_cells(tmp_path):
    bench = srbench_built()
    items = list(Item.objects.filter(benchmark=bench).select_related("scene").order_by("pk"))
    folder = export(bench, tmp_path)
    copies = copy_of(bench, folder, "3dsrbench.tsv")
    assert len(copies) == 22
    assert {i.tags.get("flip") for i in copies} == {"swap", "same", "none", None}
    flipped = [i for i in copies if i.tags.get("image_variant") == "flipped"]
    assert len(flipped) == 8 and all(i.scene.assets.filter(role=AssetRole.IMAGE_FLIPPED).exists() for i in flipped)
    assert {i.provenance["source"] for i in copies} == {"annotation"}
    # released again, the copy's rows are written as they are (they are the variants now), not expanded
    again = export(copies[0].benchmark, tmp_path / "again")
    assert len(read_tsv(again / "3dsrbench.tsv")) == 22

    def cells(result):
        return paper_tables("3dsrbench", [{"name": "m", "kind": "model", "n": result["n_items"], "result": result}])

    original, copy = result_of(*platform_rows(items)), result_of(*copy_rows(copies))
    assert copy["overall"] == original["overall"]
    assert cells(copy) == cells(original)
    assert len(cells(original)) == 2  # the category table and the viewpoint table (Tables 2 and 4)


def test_flip_rows_show_the_mirrored_image_with_the_marks_mirrored(tmp_path):
    from benchmarks.overlays import stimulus_image

    bench = BenchmarkFactory(family="3dsrbench")
    scene = SceneFactory(benchmark=bench, external_id="coco_9")
    asset = store_asset(scene, AssetRole.IMAGE, "scene.jpg", RED)
    item = ItemFactory(benchmark=bench, scene=scene, change=None, answer_format="single", question="Where is the lamp?",
                       choices=["left", "right"], answers=["A"], provenance=AUTHORED,
                       overlays=[{"image": 0, "type": "box", "x": 0.1, "y": 0.2, "width": 0.3, "height": 0.4}],
                       tags={"subtype": "orientation_on_the_left", "category": "orientation", "flip": "swap"})
    rows = {row["qid"][8:]: row for row in read_tsv(export(bench, tmp_path) / "3dsrbench.tsv")}
    assert set(rows) == {"", "-1", "-flip", "-flip-1"}
    assert base64.b64decode(rows[""]["image"]) == stimulus_image(asset, 0, item)
    assert base64.b64decode(rows["-flip"]["image"]) == stimulus_image(asset, 0, item, mirrored=True)
    assert (rows[""]["answer"], rows["-flip"]["answer"], rows["-flip-1"]["answer"]) == ("A", "B", "A")
