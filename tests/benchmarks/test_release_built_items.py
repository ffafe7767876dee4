"""Items built on the platform (authored or generated, not imported) survive a release in their family's
published shape: export_release -> import_items of that file into a new benchmark -> every cell of every
paper table equal (not only the overall), with what each table needs kept: Hypo3D's several answers,
unchanged-scene answers and change effect (Tables 3-4), CausalSpatial's level x task, Spatial457's levels
(from the TSV and from the per-level question files), M3-Verse's provenance. 3DSRBench's built items:
tests/benchmarks/test_release_srbench_variants.py."""

import io
import json
import zlib
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmarks.models import AssetRole, Item
from benchmarks.services import gold_row, store_asset
from scoring import score
from scoring.counterfactual import PairedItem, counterfactual_scores
from scoring.tables import breakdowns, paper_tables
from tests.benchmarks.test_import_published import BLUE, RED
from tests.benchmarks.test_published_export import import_into
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, SceneFactory

pytestmark = pytest.mark.django_db
AUTHORED = {"source": "annotation", "campaign": 7}
GENERATED = {"source": "generated", "generator": "m3verse_ops", "version": "2", "seed": 11}


def export(bench, tmp_path) -> Path:
    folder = tmp_path / f"{bench.slug}-release"
    call_command("export_release", bench.slug, "1.0.0", out=str(folder), stdout=io.StringIO())
    return folder


def copy_of(bench, folder: Path, name: str, suffix: str = "copy") -> list[Item]:
    copy = BenchmarkFactory(family=bench.family, slug=f"{bench.slug}-{suffix}")
    import_into(copy, folder, Path(name).name, (folder / name).read_bytes(), "--create-missing-scenes")
    return list(Item.objects.filter(benchmark=copy).select_related("scene", "change").order_by("pk"))


def released(bench) -> list[Item]:
    return list(Item.objects.filter(benchmark=bench, status="approved").select_related("scene", "change")
                .order_by("pk"))


def pick(question: str, n: int = 3) -> int:
    """A model's behaviour on a question, from its text only (the same on the release and its copy)."""
    return zlib.crc32(question.encode()) % n


def tables(family: str, items: list[Item], output) -> list[dict]:
    """Every paper table of the family for one model whose output on an item is output(gold row)."""
    gold = [gold_row(item) for item in items]
    result = score(family, gold, [{"id": g["id"], "output": output(g)} for g in gold], by=breakdowns(family),
                   sbert=False)
    assert result["n_dropped"] == 0, result["errors"]
    return paper_tables(family, [{"name": "model", "kind": "model", "n": result["n_items"], "result": result}])


def json_reply(answer: str) -> str:
    return "{'Reasoning': 'r', 'Answer': '" + answer + "'}"


def choice_output(gold: dict) -> str:
    """Right, the Not-sure option (or the last option), or the first wrong option, by the question."""
    letters = "ABCDEFGH"[: len(gold["choices"])]
    right = gold["answer"] if isinstance(gold["answer"], str) else ",".join(gold["answer"])
    wrong = next(letter for letter in letters if letter not in right)
    way = pick(gold["question"])
    letter = right if way == 0 else (gold.get("not_sure") or letters[-1]) if way == 1 else wrong
    return json_reply(letter)


# --- Hypo3D ---------------------------------------------------------------------------------------

def hypo3d_built():
    bench = BenchmarkFactory(family="hypo3d")
    scene = SceneFactory(benchmark=bench, external_id="scene0000_00")
    moved = ChangeFactory(scene=scene, status="approved", raw_text="The chair has been moved to the window.")
    removed = ChangeFactory(scene=scene, status="approved", change_type="removal",
                            raw_text="The bookshelf has been removed from the room.")
    painted = ChangeFactory(scene=scene, status="approved", change_type="attribute",
                            raw_text="The desk has been painted red.", refined_text="The desk is now red.")
    ItemFactory(change=moved, question="What is left of the chair now?", answers=["window", "the window"],
                unchanged_answers=["desk"], tags={"change_type": "movement", "question_type": ["Direction"],
                                                  "change_effect": "affects"}, provenance=AUTHORED)
    ItemFactory(change=moved, question="How many chairs are there?", answers=["one", "1"],
                unchanged_answers=["one", "1"], tags={"change_type": "movement", "question_type": ["Scale"],
                                                      "change_effect": "irrelevant"}, provenance=AUTHORED)
    ItemFactory(change=removed, question="What is the tallest object now?", answers=["window"],
                tags={"change_type": "removal", "question_type": ["Semantic", "Scale"]}, provenance=AUTHORED)
    ItemFactory(change=painted, question="What colour is the desk?", answers=["red", "dark red", "crimson"],
                unchanged_answers=["brown", "wood"], tags={"change_type": "attribute", "question_type": ["Semantic"],
                                                           "change_effect": "affects"}, provenance=AUTHORED)
    return bench


def hypo3d_output(gold: dict) -> str:
    answers = gold["answer"]
    return [answers[0], answers[-1], "nothing"][pick(gold["question"])]


def counterfactual_cells(items: list[Item]) -> dict:
    return counterfactual_scores([
        PairedItem(item.tags.get("change_effect", ""), tuple(item.answers), tuple(item.unchanged_answers),
                   hypo3d_output({"answer": item.answers, "question": item.question}),
                   (item.unchanged_answers or item.answers)[pick(item.question, 2) - 1])
        for item in items])


def test_hypo3d_built_items_keep_every_answer_and_tables_3_and_4(tmp_path):
    bench = hypo3d_built()
    folder = export(bench, tmp_path)
    shape = json.loads((folder / "hypo3d.json").read_text())
    changes = shape["scene0000_00"]
    # metric_compute.py groups by the change type's second word
    assert [change["change_type"].split()[1] for change in changes] == ["Movement", "Removal", "Attribute"]
    where, how_many = changes[0]["questions_answers"]
    assert where["answer"] == "window" and where["answers"] == ["window", "the window"]
    assert (where["unchanged_answer"], where["irrelevant_change"]) == ("desk", False)
    assert how_many["irrelevant_change"] is True
    original, copies = released(bench), copy_of(bench, folder, "hypo3d.json")

    def kept(items):
        return sorted((i.question, i.answers, i.unchanged_answers, i.tags, i.change.text, i.change.change_type)
                      for i in items)

    assert kept(copies) == kept(original)
    # authored here, reviewed into the release: the copy says so (not "published"), approved
    assert {(i.provenance["source"], i.provenance["campaign"], i.provenance["released_in"], i.status)
            for i in copies} == {("annotation", 7, f"{bench.slug}@1.0.0", "approved")}
    assert tables("hypo3d", copies, hypo3d_output) == tables("hypo3d", original, hypo3d_output)
    assert counterfactual_cells(copies) == counterfactual_cells(original)
    assert set(counterfactual_cells(original)) == {"affects", "irrelevant"}


def test_hypo3d_release_jsonl_keeps_the_unchanged_answers_through_import_release(tmp_path):
    from benchmarks.releases.life import import_release

    bench = hypo3d_built()
    folder = export(bench, tmp_path)
    copy = import_release((folder / "items.jsonl").read_bytes(), (folder / "manifest.json").read_bytes(), None,
                          slug=f"{bench.slug}-jsonl")
    assert counterfactual_cells(released(copy.benchmark)) == counterfactual_cells(released(bench))
    assert sorted(i.unchanged_answers for i in released(copy.benchmark)) == sorted(
        i.unchanged_answers for i in released(bench))


# --- CausalSpatial --------------------------------------------------------------------------------

def causal_built(tmp_path):
    bench = BenchmarkFactory(family="causalspatial")
    rows = [{"id": "Physics_Level_1_0", "question": "Where will the ball land? (A) In the cup (B) On the floor "
             "(C) Not sure", "answer": "A", "not_sure": "C"}]
    import_into(bench, tmp_path, "published.json", json.dumps(rows))  # a published item beside the built ones
    cells = [("collision", "L1"), ("compatibility", "L2"), ("occlusion", "L1"), ("trajectory", "L2"),
             ("collision", "L2")]
    for k, (task, level) in enumerate(cells):
        scene = SceneFactory(benchmark=bench, external_id=f"built_{k}")
        store_asset(scene, AssetRole.IMAGE, "scene.jpg", RED if k % 2 else BLUE)
        choices = ["Yes", "No", "Not sure"] if k % 2 else ["The red box", "The blue box", "The lamp", "Not sure"]
        ItemFactory(benchmark=bench, scene=scene, change=None, answer_format="single", choices=choices,
                    answers=["B" if k % 2 else "A"], question=f"Question {k}: what happens after the push?",
                    tags={"task": task, "level": level, "not_sure": "C" if k % 2 else "D"}, provenance=AUTHORED)
    return bench


def test_causalspatial_built_items_keep_level_and_task_and_physics_is_trajectory(tmp_path):
    bench = causal_built(tmp_path)
    published = Item.objects.get(benchmark=bench, external_id="Physics_Level_1_0")
    assert (published.tags["task"], published.tags["level"]) == ("trajectory", "L1")  # the paper's column
    folder = export(bench, tmp_path)
    rows = {row["id"]: row for row in json.loads((folder / "causalspatial.json").read_text())}
    built = rows[Item.objects.get(benchmark=bench, question__startswith="Question 3").scoring_id]
    assert (built["task"], built["level"], built["options"][built["not_sure"] == "C" and 2 or 0]) == (
        "trajectory", "L2", "Not sure")
    original, copies = released(bench), copy_of(bench, folder, "causalspatial.json")
    assert sorted((i.scoring_id, i.choices, i.answers, i.tags) for i in copies) == sorted(
        (i.scoring_id, i.choices, i.answers, i.tags) for i in original)
    before, after = tables("causalspatial", original, choice_output), tables("causalspatial", copies, choice_output)
    assert after == before
    columns = before[0]["columns"]  # one trajectory column per level, as the paper's
    assert "physics" not in columns and columns.count("trajectory") == 2


def test_the_importer_reads_level_and_task_from_the_id_or_the_fields(tmp_path):
    bench = BenchmarkFactory(family="causalspatial")
    rows = [{"id": "Occlusion_Level_2_4", "question": "Is the cup hidden?", "options": ["Yes", "No"],
             "answer": "No"},
            {"id": "authored-9", "question": "Will it fall?", "options": ["Yes", "No", "Not sure"], "answer": "Yes",
             "task": "Physics", "level": 1, "not_sure": "C"}]
    import_into(bench, tmp_path, "rows.json", json.dumps(rows))
    tags = {i.external_id: i.tags for i in Item.objects.filter(benchmark=bench)}
    assert tags["Occlusion_Level_2_4"] == {"task": "occlusion", "level": "L2"}
    assert tags["authored-9"] == {"task": "trajectory", "level": "L1", "not_sure": "C"}


# --- Spatial457 -----------------------------------------------------------------------------------

def spatial457_built():
    bench = BenchmarkFactory(family="spatial457")
    levels = ["L1_single", "L2_objects", "L4_pose", "L1_single", "L5_collision"]
    answers = ["red", "3", "yes", "bus", "no"]
    for k, (level, answer) in enumerate(zip(levels, answers, strict=True)):
        scene = SceneFactory(benchmark=bench, external_id=f"superCLEVR_new_00000{k}.png")
        store_asset(scene, AssetRole.IMAGE, "scene.png", RED if k % 2 else BLUE)
        ItemFactory(benchmark=bench, scene=scene, change=None, question=f"Question {k} about the objects?",
                    answers=[answer], tags={"level": level, "image": scene.external_id},
                    provenance=GENERATED | {"generator": "spatial457"} if k == 4 else AUTHORED)
    return bench


def spatial457_output(gold: dict) -> str:
    return json_reply([gold["answer"][0], "purple", gold["answer"][0]][pick(gold["question"])])


def test_spatial457_built_items_from_the_tsv_and_from_the_level_files(tmp_path):
    bench = spatial457_built()
    folder = export(bench, tmp_path)
    original = released(bench)
    want = tables("spatial457", original, spatial457_output)
    from_tsv = copy_of(bench, folder, "spatial457.tsv")
    assert sorted((i.scoring_id, i.answers, i.tags) for i in from_tsv) == sorted(
        (i.scoring_id, i.answers, i.tags) for i in original)
    assert tables("spatial457", from_tsv, spatial457_output) == want
    level_files = sorted(p.name for p in (folder / "spatial457_questions").iterdir())
    assert level_files == ["L1_single.json", "L2_objects.json", "L4_pose.json", "L5_collision.json"]
    l1 = json.loads((folder / "spatial457_questions" / "L1_single.json").read_text())
    assert [(q["split"], q["question_index"], q["image_index"]) for q in l1["questions"]] == [
        ("L1_single", 0, 0), ("L1_single", 1, 3)]
    copy = BenchmarkFactory(family="spatial457", slug=f"{bench.slug}-levels")
    for name in level_files:
        path = folder / "spatial457_questions" / name
        import_into(copy, path.parent, name, path.read_bytes(), "--create-missing-scenes")
    from_levels = list(Item.objects.filter(benchmark=copy).order_by("pk"))
    assert sorted(i.scoring_id for i in from_levels) == sorted(i.scoring_id for i in original)
    assert tables("spatial457", from_levels, spatial457_output) == want
    generated = next(i for i in from_tsv if i.tags["level"] == "L5_collision")
    assert generated.provenance["source"] == "generated" and generated.status == "approved"


# --- M3-Verse -------------------------------------------------------------------------------------

def m3verse_built():
    bench = BenchmarkFactory(family="m3verse")
    scene = SceneFactory(benchmark=bench, external_id="scene_800")
    for which in ("before", "after"):
        store_asset(scene, AssetRole.VIDEO, f"{which}.mp4", f"{which} frames".encode(), {"which": which})
    specs = [("single", ["A"], "intra-state", ["spatial understanding"], False),
             ("multi", ["A", "C"], "inter-states", ["temporal understanding", "attribute recognition"], False),
             ("single", ["D"], "inter-states", ["reasoning"], True)]
    for k, (answer_format, answers, state, capabilities, hallucination) in enumerate(specs):
        ItemFactory(benchmark=bench, scene=scene, change=None, answer_format=answer_format, answers=answers,
                    question=f"Question {k}: what changed between the videos?",
                    choices=["Apple", "Mug", "Laptop", "No correct option is listed."],
                    tags={"category": "object_changes", "state_type": state, "capabilities": capabilities,
                          "hallucination": hallucination, "subcategory": "new_visible_objects"},
                    provenance=GENERATED)
    return bench


def m3verse_output(gold: dict) -> str:
    answers = gold["answer"] if isinstance(gold["answer"], list) else [gold["answer"]]
    return [",".join(answers), answers[0], "B"][pick(gold["question"])]


def test_m3verse_generated_items_come_back_generated_and_approved(tmp_path):
    bench = m3verse_built()
    folder = export(bench, tmp_path)
    line = json.loads((folder / "m3verse.jsonl").read_text().splitlines()[0])
    assert line["provenance"]["source"] == "generated" and line["provenance"]["released_in"] == f"{bench.slug}@1.0.0"
    original, copies = released(bench), copy_of(bench, folder, "m3verse.jsonl")
    assert [i.status for i in copies] == ["approved"] * 3
    assert all(i.provenance["source"] == "generated" and i.provenance["generator"] == "m3verse_ops"
               and i.provenance["seed"] == 11 for i in copies)
    assert tables("m3verse", copies, m3verse_output) == tables("m3verse", original, m3verse_output)


def test_a_generators_own_file_still_arrives_as_drafts(tmp_path):
    bench = BenchmarkFactory(family="m3verse")
    row = {"scene_id": "s", "question_id": "s-1", "question": "Which?", "options": ["A. x", "B. y"], "answer": ["A"],
           "question_type": "single_choice", "provenance": GENERATED}
    import_into(bench, tmp_path, "generated.jsonl", json.dumps(row), "--create-missing-scenes")
    assert Item.objects.get(benchmark=bench).status == "draft"


# --- Images with their marks ----------------------------------------------------------------------

ARROW = {"image": 0, "type": "arrow", "from": [0.2, 0.5], "to": [0.8, 0.5], "colour": "#ff3b30"}


def test_exported_images_carry_the_marks_the_item_is_shown_with(tmp_path):
    """The published CausalSpatial images have their arrows drawn in: an item drawn on here is exported as
    the same pixels the evaluator and the model see (overlays.stimulus_image), in its published file and in
    the Hugging Face image column; the copy shows that image as it is."""
    import base64

    import pyarrow.parquet as pq

    from benchmarks.overlays import stimulus_image

    bench = BenchmarkFactory(family="causalspatial")
    scene = SceneFactory(benchmark=bench, external_id="push_1")
    asset = store_asset(scene, AssetRole.IMAGE, "push.jpg", RED)
    item = ItemFactory(benchmark=bench, scene=scene, change=None, answer_format="single",
                       question="Will the ball hit the box when pushed this way?", choices=["Yes", "No", "Not sure"],
                       answers=["A"], tags={"task": "collision", "level": "L1", "not_sure": "C"}, overlays=[ARROW],
                       provenance=AUTHORED)
    shown = stimulus_image(asset, 0, item)
    assert shown != RED
    folder = export(bench, tmp_path)
    [row] = json.loads((folder / "causalspatial.json").read_text())
    assert base64.b64decode(row["image"]) == shown
    [hf_row] = pq.read_table(folder / "data" / "test-00000-of-00001.parquet").to_pylist()
    assert hf_row["image"]["bytes"] == shown
    [copy] = copy_of(bench, folder, "causalspatial.json")
    copied = copy.scene.assets.get(role=AssetRole.IMAGE)
    assert stimulus_image(copied, 0, copy) == shown
