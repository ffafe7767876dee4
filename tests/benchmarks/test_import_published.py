"""Item files in the shapes the five families publish import through `import_items`, idempotently:
a second import of the same file changes nothing, an edited file updates items in place."""

import base64
import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from PIL import Image, ImageDraw

from benchmarks.importers import import_item_file, parse_options
from benchmarks.models import Asset, AssetRole, Benchmark, ContextChange, Item, Scene
from tests.factories import BenchmarkFactory, SceneFactory

pytestmark = pytest.mark.django_db

RSCAN = "0cac7578-8d6f-2d13-8c2d-bfa7a04f8af3"
HYPO3D = {
    "scene0000_00": [
        {"context_change": "The guitar has been moved from the floor to the couch.", "change_type": "Movement Change",
         "questions_answers": [
             {"question_id": "00042", "question_type": "Direction Semantic",
              "question": "What item is directly in front of the guitar now?", "answer": "coffee table",
              "predicted_answer": "sofa"},
             {"question_id": "00043", "question_type": "Scale", "question": "How many chairs are left?",
              "answer": "two", "predicted_answer": "2"}]},
        {"context_change": "The lamp has been removed.", "change_type": "Object Removal",
         "questions_answers": [
             {"question_id": "00044", "question_type": "Scale Direction Semantic",
              "question": "What is left of the bed now?", "answer": "nightstand"}]}],
    RSCAN: [
        {"context_change": "The chair is now painted red.", "change_type": "attribute",
         "questions_answers": [{"question_id": "00045", "question_type": "Semantic",
                                "question": "What colour is the chair?", "answer": "red"}]}],
}


def jpeg(colour, size=(64, 48), mirrored=False) -> bytes:
    image = Image.new("RGB", size, colour)
    ImageDraw.Draw(image).rectangle((0, 0, 10, 10), fill=(255, 255, 255))  # a mark in the top-left corner
    if mirrored:
        image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=90)
    return out.getvalue()


def b64(content: bytes) -> str:
    return base64.b64encode(content).decode()


def tsv(columns, rows) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue().encode()


SR_COLUMNS = ["index", "qid", "question", "A", "B", "C", "D", "answer", "category", "image", "image_source",
              "image_url"]
RED, BLUE = jpeg((200, 20, 20)), jpeg((20, 20, 200))
RED_FLIPPED = jpeg((200, 20, 20), mirrored=True)
QUESTION = "Which object is on the left of the cup?"
LEFT_RIGHT = ["the lamp", "the book", "the phone", "the plate"]


def srbench_rows(edited=False):
    """Base question VIN6MS3J with its rotations -1..-3, its mirrored image (-flip, -flip-1), a second
    question with 2 choices, and a row that names another row's image by index (VLMEvalKit)."""
    rows = []
    for k, suffix in enumerate(["", "-1", "-2", "-3"]):
        choices = LEFT_RIGHT[k:] + LEFT_RIGHT[:k]
        rows.append([k, f"VIN6MS3J{suffix}", QUESTION, *choices, "ABCD"[(4 - k) % 4], "orientation_on_the_left",
                     b64(RED), "MS-COCO", "http://images.cocodataset.org/val2017/1.jpg"])
    rows.append([4, "VIN6MS3J-flip", QUESTION, "the book", "the lamp", "the phone", "the plate", "A",
                 "orientation_on_the_left", b64(RED_FLIPPED), "MS-COCO", ""])
    rows.append([5, "VIN6MS3J-flip-1", QUESTION, "the lamp", "the phone", "the plate", "the book", "D",
                 "orientation_on_the_left", "4", "MS-COCO", ""])
    rows.append([6, "QWERTY12", "Is the cup higher than the lamp?" + (" (edited)" if edited else ""), "yes", "no",
                 "", "", "B" if edited else "A", "height_higher", b64(BLUE), "MS-COCO", ""])
    rows.append([7, "QWERTY12-1", "Is the cup higher than the lamp?", "no", "yes", "", "", "B", "height_higher",
                 "6", "MS-COCO", ""])
    return rows


def run(*args):
    """call_command's JSON lines, with the CommandError when it failed."""
    out = io.StringIO()
    error = None
    try:
        call_command(*args, stdout=out)
    except CommandError as exc:
        error = exc
    return [json.loads(line) for line in out.getvalue().splitlines()], error


def import_file(tmp_path, bench, filename, content, *flags):
    path = tmp_path / filename
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    lines, error = run("import_items", "--benchmark", bench.slug, *flags, str(path))
    return lines[0], error


def media_files(settings) -> list:
    media = settings.MEDIA_ROOT
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


def test_hypo3d_scannet_and_3rscan_scenes_predictions_ignored(tmp_path):
    bench = BenchmarkFactory(family="hypo3d")
    SceneFactory(benchmark=bench, external_id="scene0000_00")
    SceneFactory(benchmark=bench, external_id=RSCAN)
    line, error = import_file(tmp_path, bench, "hypo3d_predictions.json", json.dumps(HYPO3D))
    assert error is None, line
    assert line == {"file": "hypo3d_predictions.json", "items": 4, "created": 4, "updated": 0, "unchanged": 0,
                    "changes": 3, "scenes_created": 0, "errors": []}
    assert sorted(ContextChange.objects.values_list("change_type", flat=True)) == ["attribute", "movement", "removal"]
    item = Item.objects.get(external_id="00044")
    assert item.tags["question_type"] == ["Scale", "Direction", "Semantic"] and item.answers == ["nightstand"]
    assert item.change.raw_text == "The lamp has been removed." and item.scene.external_id == "scene0000_00"
    assert Item.objects.get(external_id="00045").scene.external_id == RSCAN
    assert "predicted_answer" not in json.dumps(list(Item.objects.values_list("tags", flat=True)))


def test_reimporting_changes_nothing_and_an_edited_file_updates_in_place(tmp_path):
    bench = BenchmarkFactory(family="hypo3d")
    SceneFactory(benchmark=bench, external_id="scene0000_00")
    SceneFactory(benchmark=bench, external_id=RSCAN)
    import_file(tmp_path, bench, "h.json", json.dumps(HYPO3D))
    ids = dict(Item.objects.values_list("external_id", "pk"))
    for _ in range(2):
        line, error = import_file(tmp_path, bench, "h.json", json.dumps(HYPO3D))
        assert error is None and (line["created"], line["updated"], line["unchanged"]) == (0, 0, 4)
    assert Item.objects.count() == 4 and ContextChange.objects.count() == 3
    edited = json.loads(json.dumps(HYPO3D))
    edited["scene0000_00"][0]["questions_answers"][0]["answer"] = "the coffee table"
    edited[RSCAN][0]["change_type"] = "Attribute Change"
    line, error = import_file(tmp_path, bench, "h.json", json.dumps(edited))
    assert error is None and (line["created"], line["updated"], line["unchanged"]) == (0, 1, 3)
    item = Item.objects.get(external_id="00042")
    assert item.pk == ids["00042"] and item.answers == ["the coffee table"] and item.version == 2
    assert Item.objects.count() == 4 and ContextChange.objects.count() == 3


def test_hypo3d_unknown_scene_is_refused_unless_scenes_may_be_created(tmp_path):
    bench = BenchmarkFactory(family="hypo3d")
    line, error = import_file(tmp_path, bench, "h.json", json.dumps(HYPO3D))
    assert error is not None and any(f"unknown scene id '{RSCAN}'" in e for e in line["errors"])
    assert not Item.objects.exists() and not Scene.objects.exists()
    line, error = import_file(tmp_path, bench, "h.json", json.dumps(HYPO3D), "--create-missing-scenes")
    assert error is None and line["scenes_created"] == 2 and line["created"] == 4
    assert set(Scene.objects.values_list("external_id", flat=True)) == {"scene0000_00", RSCAN}
    line, _ = import_file(tmp_path, bench, "h.json", json.dumps(HYPO3D), "--create-missing-scenes")
    assert line["scenes_created"] == 0 and line["unchanged"] == 4


def test_a_repeated_id_is_refused_naming_both_places(tmp_path):
    bench = BenchmarkFactory(family="3dsrbench")
    rows = srbench_rows()
    rows[6][1] = "VIN6MS3J-2"  # row 8 of the file repeats row 4's qid
    line, error = import_file(tmp_path, bench, "real.tsv", tsv(SR_COLUMNS, rows))
    assert error is not None
    assert "real.tsv: qid 'VIN6MS3J-2' at row 4 and row 8" in line["errors"]
    assert not Item.objects.exists() and not Scene.objects.exists()
    hypo = BenchmarkFactory(family="hypo3d")
    SceneFactory(benchmark=hypo, external_id="scene0000_00")
    repeated = {"scene0000_00": [{**HYPO3D["scene0000_00"][0], "questions_answers": [
        HYPO3D["scene0000_00"][0]["questions_answers"][0]] * 2}]}
    line, error = import_file(tmp_path, hypo, "h.json", json.dumps(repeated))
    assert ("h.json: question_id '00042' at scene0000_00[0].questions_answers[0] and "
            "scene0000_00[0].questions_answers[1]") in line["errors"]


def test_3dsrbench_tsv_stores_each_image_once_with_its_mirrored_twin(tmp_path):
    bench = BenchmarkFactory(family="3dsrbench")
    line, error = import_file(tmp_path, bench, "3dsrbench_v1_vlmevalkit_circular.tsv", tsv(SR_COLUMNS, srbench_rows()))
    assert error is None, line
    assert (line["items"], line["created"], line["scenes_created"]) == (8, 8, 2)
    rotated = Item.objects.get(external_id="VIN6MS3J-1")
    assert rotated.source_index == "1" and rotated.answers == ["D"] and rotated.choices[0] == "the book"
    assert rotated.tags == {"category": "orientation", "subtype": "orientation_on_the_left", "image_source": "MS-COCO"}
    two = Item.objects.get(external_id="QWERTY12")
    assert two.choices == ["yes", "no"] and two.tags["category"] == "height"
    scene = Scene.objects.get(benchmark=bench, external_id="VIN6MS3J")
    assert set(Item.objects.filter(scene=scene).values_list("external_id", flat=True)) == {
        "VIN6MS3J", "VIN6MS3J-1", "VIN6MS3J-2", "VIN6MS3J-3", "VIN6MS3J-flip", "VIN6MS3J-flip-1"}
    original = scene.assets.get(role=AssetRole.IMAGE)
    twin = scene.assets.get(role=AssetRole.IMAGE_FLIPPED)
    assert original.file.read() == RED and twin.file.read() == RED_FLIPPED
    assert twin.meta["flipped_from"] == original.pk and (original.meta["width"], original.meta["height"]) == (64, 48)
    flipped = Item.objects.get(external_id="VIN6MS3J-flip-1")
    assert flipped.tags["image_variant"] == "flipped" and "image_variant" not in rotated.tags
    other = Scene.objects.get(benchmark=bench, external_id="QWERTY12")
    assert other.assets.get(role=AssetRole.IMAGE).file.read() == BLUE and other.assets.count() == 1
    assert Item.objects.get(external_id="QWERTY12-1").scene == other

    for _ in range(2):
        line, error = import_file(tmp_path, bench, "3dsrbench_v1_vlmevalkit_circular.tsv",
                                  tsv(SR_COLUMNS, srbench_rows()))
        assert error is None and (line["unchanged"], line["created"], line["scenes_created"]) == (8, 0, 0)
    assert Asset.objects.count() == 3 and Item.objects.count() == 8
    line, error = import_file(tmp_path, bench, "3dsrbench_v1_vlmevalkit_circular.tsv",
                              tsv(SR_COLUMNS, srbench_rows(edited=True)))
    assert (line["updated"], line["unchanged"]) == (1, 7)
    edited = Item.objects.get(external_id="QWERTY12")
    assert edited.pk == two.pk and edited.answers == ["B"] and edited.question.endswith("(edited)")


def test_3dsrbench_rows_without_images_and_with_a_viewpoint_split_still_import(tmp_path):
    bench = BenchmarkFactory(family="3dsrbench")
    columns = ["index", "qid", "question", "A", "B", "C", "D", "answer", "category", "image_url", "split"]
    rows = [[0, "SYN00001", "Is the car facing the camera?", "yes", "no", "", "", "A", "orientation_viewpoint",
             "http://x/1.png", "synthetic-uncommon"],
            [1, "SYN00002", "Which is higher?", "cup", "lamp", "", "", "B", "height_higher", "http://x/2.png",
             "synthetic-common"]]
    line, error = import_file(tmp_path, bench, "synthetic.tsv", tsv(columns, rows))
    assert error is None and line["created"] == 2 and line["scenes_created"] == 0
    item = Item.objects.get(external_id="SYN00001")
    assert item.scene is None and item.tags["viewpoint"] == "uncommon"
    assert Item.objects.get(external_id="SYN00002").tags["viewpoint"] == "common" and not Asset.objects.exists()
    bad = tsv(columns, [[0, "SYN00003", "q", "yes", "no", "", "", "C", "height_higher", "", ""]])
    line, error = import_file(tmp_path, bench, "bad.tsv", bad)
    assert error is not None and "row 2: answer 'C' is not one of the 2 options" in line["errors"][0]


def test_a_file_failing_while_writing_leaves_no_rows_and_no_image_bytes(tmp_path, settings):
    bench = BenchmarkFactory(family="3dsrbench")
    rows = srbench_rows()
    rows[6][9] = b64(b"not a jpeg at all, just bytes that are long enough to look like an image field" * 2)
    line, error = import_file(tmp_path, bench, "real.tsv", tsv(SR_COLUMNS, rows))
    assert error is not None and "row 8: the image is not a readable image" in line["errors"][0]
    assert not Item.objects.exists() and not Scene.objects.exists() and not Asset.objects.exists()
    assert media_files(settings) == []


CAUSAL = [
    {"id": "Collision_Level_1_0", "question": "Will the red ball hit the blue ball? (A) Yes (B) No (C) Not sure",
     "answer": "(A)", "not_sure": "(C)"},
    {"id": "Trajectory_Prediction_Level_2_3",
     "question": "Where does the ball land?\nA. in the basket (left);\nB. on the floor;\nC. Not sure;",
     "answer": "B", "not_sure": "Not sure"},
    {"id": "Occlusion_Level_3_7", "question": "Is the cube hidden? A. Yes; B. No; C. Not sure;", "answer": "A.",
     "not_sure": "C", "image": "images/Occlusion_Level_3_7.png"},
    {"id": "Collision_Level_1_1", "question": "Will they collide? (A) Yes (B) No (C) Not sure", "answer": "B",
     "not_sure": "C", "image": b64(BLUE)},
]
CAUSAL_REAL = [
    {"id": "real_0", "type": "collision", "question": "Will the car hit the pole?",
     "options": ["Yes", "No"], "answer": " no "},
]


def test_causalspatial_both_option_styles_not_sure_letters_and_images(tmp_path):
    bench = BenchmarkFactory(family="causalspatial")
    line, error = import_file(tmp_path, bench, "causal.jsonl", "\n".join(json.dumps(r) for r in CAUSAL))
    assert error is None, line
    first = Item.objects.get(external_id="Collision_Level_1_0")
    assert first.choices == ["Yes", "No", "Not sure"] and first.answers == ["A"]
    assert first.tags == {"task": "collision", "level": "L1", "not_sure": "C"}
    trajectory = Item.objects.get(external_id="Trajectory_Prediction_Level_2_3")
    assert trajectory.choices == ["in the basket (left)", "on the floor", "Not sure"]
    assert trajectory.tags == {"task": "trajectory", "level": "L2", "not_sure": "C"}  # the paper's column
    occlusion = Item.objects.get(external_id="Occlusion_Level_3_7")
    assert occlusion.answers == ["A"] and occlusion.tags["image"] == "images/Occlusion_Level_3_7.png"
    pictured = Item.objects.get(external_id="Collision_Level_1_1")
    assert pictured.scene.external_id == "Collision_Level_1_1"
    assert pictured.scene.assets.get(role=AssetRole.IMAGE).file.read() == BLUE and line["scenes_created"] == 1
    line, _ = import_file(tmp_path, bench, "causal.jsonl", "\n".join(json.dumps(r) for r in CAUSAL))
    assert line["unchanged"] == 4 and Asset.objects.count() == 1
    line, error = import_file(tmp_path, bench, "real_world.json", json.dumps(CAUSAL_REAL))
    assert error is None
    real = Item.objects.get(external_id="real_0")
    assert real.choices == ["Yes", "No"] and real.answers == ["B"] and real.tags == {"type": "collision"}


def test_options_in_the_question_text():
    assert parse_options("Q? (A) left (of it) (B) right (C) Not sure") == ["left (of it)", "right", "Not sure"]
    assert parse_options("Is object A. moving? A. Yes; B. No; C. Not sure;") == ["Yes", "No", "Not sure"]
    assert parse_options("Pick one\nA. up\nB. down\nAnswer with the letter.") == ["up", "down"]


SPATIAL457_L1 = {"info": {"split": "val"}, "questions": [
    {"split": "val", "image_filename": "superCLEVR_new_000001.png", "image_index": 1,
     "question": "What is the colour of the bus?", "program": [{"type": "scene", "inputs": []}],
     "answer": "red", "template_filename": "L1_single.json", "question_family_index": 0, "question_index": 0},
    {"split": "val", "image_filename": "superCLEVR_new_000001.png", "image_index": 1,
     "question": "Is there a large bus?", "program": [], "answer": True, "template_filename": "L1_single.json",
     "question_family_index": 1, "question_index": 1}]}
SPATIAL457_L2 = {"split": "L2_objects", "questions": [
    {"split": "L2_objects", "image_filename": "superCLEVR_new_000002.png", "image_index": 2,
     "question": "How many buses are there?", "program": [], "answer": 3, "template_filename": "L2_objects.json",
     "question_family_index": 4, "question_index": 0}]}


def test_spatial457_levels_keep_their_own_question_index_and_program(tmp_path):
    bench = BenchmarkFactory(family="spatial457")
    SceneFactory(benchmark=bench, external_id="superCLEVR_new_000002.png")
    line, error = import_file(tmp_path, bench, "L1_single.json", json.dumps(SPATIAL457_L1))
    assert error is None, line
    line, error = import_file(tmp_path, bench, "L2_objects.json", json.dumps(SPATIAL457_L2))
    assert error is None and line["created"] == 1
    colour = Item.objects.get(external_id="L1_single/0")
    assert colour.answers == ["red"] and colour.tags["level"] == "L1_single" and colour.scene is None
    assert colour.tags["program"] == [{"type": "scene", "inputs": []}] and colour.tags["question_family_index"] == 0
    assert colour.tags["template_filename"] == "L1_single.json" and colour.tags["question_index"] == 0
    assert Item.objects.get(external_id="L1_single/1").answers == ["yes"]
    count = Item.objects.get(external_id="L2_objects/0")
    assert count.answers == ["3"] and count.scene.external_id == "superCLEVR_new_000002.png"
    line, _ = import_file(tmp_path, bench, "L1_single.json", json.dumps(SPATIAL457_L1), "--create-missing-scenes")
    assert line["scenes_created"] == 1 and line["updated"] == 2
    assert Item.objects.get(external_id="L1_single/0").scene.external_id == "superCLEVR_new_000001.png"


def test_spatial457_vlmevalkit_tsv_with_base64_images(tmp_path):
    bench = BenchmarkFactory(family="spatial457")
    rows = [[0, "What is the colour of the bus?", "red", "L1_single", b64(RED)],
            [1, "How many buses are there?", "2", "L2_objects", "0"],
            [2, "Is the bus facing left?", "no", "L4_pose", b64(BLUE)]]
    line, error = import_file(tmp_path, bench, "Spatial457.tsv", tsv(["index", "question", "answer", "category",
                                                                     "image"], rows))
    assert error is None, line
    assert (line["created"], line["scenes_created"]) == (3, 2)
    first, second = Item.objects.get(external_id="0"), Item.objects.get(external_id="1")
    assert first.source_index == "0" and second.tags == {"level": "L2_objects"} and second.scene == first.scene
    assert first.scene.assets.get(role=AssetRole.IMAGE).file.read() == RED
    assert Item.objects.get(external_id="2").scene.assets.get().file.read() == BLUE


M3VERSE = [
    {"scene_id": "scene_800", "category": "object_changes", "question_id": "scene_800-17",
     "state_type": "inter-states", "question": "Which objects newly appear?",
     "options": ["A. Apple", "B. Mug", "C. No correct option is listed.", "D. Laptop"], "answer": ["A", "D"],
     "question_type": "multiple_choice", "subcategory": "new_visible_objects", "generator_name": "object_changes",
     "hallucination": False, "capabilities": ["temporal understanding", "object recognition"]},
    {"scene_id": "scene_801", "category": "object_changes", "question_id": "scene_801-2",
     "state_type": "intra-state", "question": "Which object is on the table?",
     "options": ["A. Bowl", "B. Cup", "C. No correct option is listed."], "answer": ["C"],
     "question_type": "single_choice", "subcategory": "object_presence", "generator_name": "object_presence",
     "hallucination": True, "capabilities": ["spatial understanding"]},
]


def test_m3verse_jsonl_before_its_videos(tmp_path):
    bench = BenchmarkFactory(family="m3verse")
    content = "\n".join(json.dumps(r) for r in M3VERSE)
    line, error = import_file(tmp_path, bench, "m3verse.jsonl", content)
    assert error is None and line["created"] == 2 and line["scenes_created"] == 0
    multi = Item.objects.get(external_id="scene_800-17")
    assert multi.answer_format == "multi" and multi.answers == ["A", "D"] and multi.choices[0] == "Apple"
    assert multi.tags["capabilities"] == ["temporal understanding", "object recognition"] and multi.scene is None
    single = Item.objects.get(external_id="scene_801-2")
    assert single.answer_format == "single" and single.tags["hallucination"] is True
    assert single.tags["state_type"] == "intra-state" and single.tags["subcategory"] == "object_presence"
    SceneFactory(benchmark=bench, external_id="scene_800")  # its videos arrived
    line, _ = import_file(tmp_path, bench, "m3verse.jsonl", content)
    assert (line["updated"], line["unchanged"]) == (1, 1)
    assert Item.objects.get(external_id="scene_800-17").scene.external_id == "scene_800"


def test_import_item_file_takes_bytes_and_text():
    bench = BenchmarkFactory(family="m3verse")
    assert import_item_file(bench, "m.jsonl", json.dumps(M3VERSE[0]).encode(), create_missing_scenes=True).created == 1
    report = import_item_file(bench, "m.jsonl", json.dumps(M3VERSE[0]))
    assert report.ok and report.unchanged == 1 and Scene.objects.get().external_id == "scene_800"


def test_create_benchmark_prints_one_line_and_is_idempotent():
    lines, error = run("create_benchmark", "srbench-real", "--family", "3dsrbench", "--name", "3DSRBench real")
    assert error is None
    assert lines == [{"benchmark": "srbench-real", "family": "3dsrbench", "name": "3DSRBench real", "created": True}]
    lines, error = run("create_benchmark", "srbench-real", "--family", "3dsrbench")
    assert error is None and lines[0]["created"] is False and Benchmark.objects.count() == 1
    lines, error = run("create_benchmark", "srbench-real", "--family", "hypo3d")
    assert error is not None and "3dsrbench" in str(error) and len(lines) == 1
    lines, error = run("create_benchmark", "m3", "--family", "M3-Verse")
    assert error is None and lines[0]["family"] == "m3verse" and lines[0]["name"] == "m3"
    for args in (["x", "--family", "nope"], ["not a slug!", "--family", "hypo3d"]):
        _, error = run("create_benchmark", *args)
        assert error is not None
    assert Benchmark.objects.count() == 2
