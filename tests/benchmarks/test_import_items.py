"""Item files of each family import whole, or not at all with the reason and the place."""

import json

import pytest
from django.core.management import CommandError, call_command

from benchmarks.importers import import_item_file
from benchmarks.models import ContextChange, Item
from tests.factories import BenchmarkFactory, SceneFactory
from tests.samples import M3VERSE

pytestmark = pytest.mark.django_db

HYPO3D = {
    "scene0000_00": [
        {"context_change": "The guitar has been moved from the floor to the couch.", "change_type": "Object Movement",
         "questions_answers": [
             {"question_id": "00042", "question_type": "Direction Semantic",
              "question": "What item is directly in front of the guitar now?", "answer": "coffee table"},
             {"question_id": "00043", "question_type": "Scale", "question": "How many chairs are left?",
              "answer": "two"}]}]
}
SRBENCH_TSV = (
    "index\tqid\tquestion\tA\tB\tC\tD\tanswer\tcategory\timage\n"
    "0\tVIN6MS3J\tIs the cup higher than the lamp?\tyes\tno\t\t\tA\theight_higher\t\n"
    "1\tVIN6MS3J-1\tIs the cup higher than the lamp?\tno\tyes\t\t\tB\theight_higher\t\n"
    "2\tQWERTY12\tWhich is closer to the camera?\tcup\tlamp\tdog\tcat\tC\tlocation_closer_to_camera\t\n"
)
CAUSAL = [
    {"id": "Collision_Level_1_0", "question": "Will the balls collide? (A) Yes (B) No (C) Not sure",
     "answer": "(A)", "not_sure": "(C)"},
    {"id": "Occlusion_Level_2_3", "question": "Is the cube hidden? (A) Yes (B) No (C) Not sure",
     "answer": "B", "not_sure": "C"},
]
SPATIAL457 = {"split": "L2_objects", "questions": [
    {"image_filename": "superCLEVR_new_000001.png", "question": "How many buses are there?", "answer": "2",
     "question_index": 0}]}
def benchmark(family):
    bench = BenchmarkFactory(family=family)
    SceneFactory(benchmark=bench, external_id="scene0000_00")
    return bench


def test_hypo3d_file_creates_changes_and_open_items_with_tags():
    bench = benchmark("hypo3d")
    report = import_item_file(bench, "hypo3d.json", json.dumps(HYPO3D))
    assert report.ok and report.items == 2 and report.changes == 1
    change = ContextChange.objects.get()
    assert change.change_type == "movement" and change.status == "approved"
    item = Item.objects.get(external_id="00042")
    assert item.answers == ["coffee table"] and item.tags["question_type"] == ["Direction", "Semantic"]


def test_3dsrbench_tsv_keeps_ids_choices_and_categories():
    report = import_item_file(benchmark("3dsrbench"), "real.tsv", SRBENCH_TSV)
    assert report.ok and report.items == 3
    rotated = Item.objects.get(external_id="VIN6MS3J-1")
    assert rotated.choices == ["no", "yes"] and rotated.answers == ["B"]
    assert Item.objects.get(external_id="QWERTY12").tags == {"category": "location",
                                                             "subtype": "location_closer_to_camera"}


def test_causalspatial_parses_options_levels_and_not_sure():
    report = import_item_file(benchmark("causalspatial"), "cs.jsonl", "\n".join(json.dumps(r) for r in CAUSAL))
    assert report.ok
    item = Item.objects.get(external_id="Collision_Level_1_0")
    assert item.choices == ["Yes", "No", "Not sure"] and item.answers == ["A"]
    assert item.tags == {"task": "collision", "level": "L1", "not_sure": "C"}


def test_spatial457_and_m3verse_map_levels_and_letters():
    assert import_item_file(benchmark("spatial457"), "L2.json", json.dumps(SPATIAL457)).ok
    assert Item.objects.get().tags["level"] == "L2_objects"
    report = import_item_file(benchmark("m3verse"), "m3.jsonl", json.dumps(M3VERSE[0]))
    assert report.ok
    item = Item.objects.get(external_id="scene_800-17")
    assert item.answer_format == "multi" and item.answers == ["A", "D"] and item.choices[2].startswith("No correct")


@pytest.mark.parametrize(
    ("family", "text", "reason"),
    [
        ("hypo3d", json.dumps({"scene9999_00": HYPO3D["scene0000_00"]}), "unknown scene id 'scene9999_00'"),
        ("hypo3d", '{"scene0000_00": [{"context_change": "x", "change_type": "Object Teleport"}]}',
         "change_type 'Object Teleport'"),
        ("hypo3d", '{"scene0000_00": [', "not valid JSON"),
        ("3dsrbench", "qid\tquestion\nX\tY\n", "missing columns: A, B, answer, category"),
        ("3dsrbench", SRBENCH_TSV.replace("\tA\theight_higher", "\tE\theight_higher"), "row 2: answer 'E'"),
        ("causalspatial", json.dumps([{"id": "bad id", "question": "q", "answer": "A"}]), "is not like"),
        ("m3verse", json.dumps({**M3VERSE[0], "answer": ["Z"]}), "must be letters of the options"),
        ("spatial457", json.dumps({"split": "L9", "questions": [{"question": "q", "answer": "1"}]}), "level 'L9'"),
    ],
)
def test_bad_files_write_nothing_and_say_where_and_why(family, text, reason):
    report = import_item_file(benchmark(family), "bad.file", text)
    assert not report.ok and any(reason in e for e in report.errors), report.errors
    assert not Item.objects.exists() and not ContextChange.objects.exists()


def test_command_imports_good_files_and_fails_naming_the_bad_one(tmp_path, capsys):
    bench = benchmark("hypo3d")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(HYPO3D))
    bad.write_text("[1, 2")
    with pytest.raises(CommandError, match="1 file"):
        call_command("import_items", "--benchmark", bench.slug, str(good), str(bad))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["items"] == 2 and lines[1]["errors"] and Item.objects.count() == 2
