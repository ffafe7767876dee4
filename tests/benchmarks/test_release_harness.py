"""A release's harness files: the VLMEvalKit TSV and the lmms-eval task folder (YAML with the family's
prompt from modeleval's templates and its generation settings, utils.py, the dataset as typed Parquet)."""

import base64
import csv
import io
import json
import runpy
import zipfile

import pyarrow.parquet as pq
import pytest
import yaml
from django.core.management import call_command

from benchmarks import services as benchmark_services
from benchmarks.models import AssetRole, Release, WorldFrame
from benchmarks.releases import life
from benchmarks.releases.harness import GENERATION
from modeleval.prompting.prompts import latest_template
from tests.benchmarks.test_import_published import RED, jpeg
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory

pytestmark = pytest.mark.django_db
TOP_VIEW = jpeg((20, 160, 20))


def read(asset) -> bytes:
    with asset.file.open("rb") as handle:
        return handle.read()


class TaskLoader(yaml.SafeLoader):
    """lmms-eval's YAML: `!function module.name` names a function of the task's utils.py."""


TaskLoader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))


@pytest.fixture
def hypo3d_release(django_capture_on_commit_callbacks):
    bench = BenchmarkFactory(family="hypo3d", slug="hypo-demo")
    change = ChangeFactory(scene__benchmark=bench, status="approved", raw_text="The chair has been moved to the window.")
    scene = change.scene
    WorldFrame.objects.create(scene=scene, anchor=scene.scene_objects.get(label="desk"), side="left",
                              text="The desk was located at the left of the scene.")
    benchmark_services.store_asset(scene, AssetRole.TOPVIEW_SEMANTIC, "top.jpg", TOP_VIEW)
    ItemFactory(change=change, external_id="00042", answers=["window"])
    ItemFactory(change=change, external_id="00043", question="How many chairs are there now?", answers=["two"],
                tags={"change_type": "movement", "question_type": ["Scale"]})
    with django_capture_on_commit_callbacks(execute=True):
        release = life.export_release(bench, "1.0.0", None)
    release.refresh_from_db()
    return release


def test_lmms_eval_task_carries_the_family_prompt_settings_and_typed_images(hypo3d_release, tmp_path):
    files = life.release_files(hypo3d_release)
    with zipfile.ZipFile(io.BytesIO(read(files["lmms_eval"]))) as archive:
        names = sorted(archive.namelist())
        folder = "lmms_eval/hypolab_hypo_demo_1_0_0"
        assert names == [f"{folder}/hypolab_hypo_demo_1_0_0.parquet", f"{folder}/hypolab_hypo_demo_1_0_0.yaml",
                         f"{folder}/utils.py"]
        task = yaml.load(archive.read(f"{folder}/hypolab_hypo_demo_1_0_0.yaml"), Loader=TaskLoader)
        table = pq.read_table(io.BytesIO(archive.read(f"{folder}/hypolab_hypo_demo_1_0_0.parquet")))
        archive.extractall(tmp_path)
    assert task["task"] == "hypolab_hypo_demo_1_0_0" and task["output_type"] == "generate_until"
    assert task["dataset_path"] == "parquet" and task["test_split"] == "test"
    assert task["dataset_kwargs"]["data_files"]["test"] == f"{folder}/hypolab_hypo_demo_1_0_0.parquet"
    assert task["doc_to_text"] == ("function", "utils.doc_to_text")
    assert task["generation_kwargs"] == GENERATION["hypo3d"]
    template = latest_template("hypo3d")
    prompt = task["lmms_eval_specific_kwargs"]["default"]
    assert prompt["prompt"] == template.text and prompt["scene_intro"] == template.scene_intro["top_view_semantic"]
    # The Parquet says how `datasets` types it: the image column is an Image (PIL on load).
    features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    assert features["image"] == {"_type": "Image"} and features["answers"]["_type"] == "Sequence"
    rows = table.to_pylist()
    assert [r["external_id"] for r in rows] == ["00042", "00043"] and rows[0]["image"]["bytes"] == TOP_VIEW
    assert [r["question_id"] for r in rows] == ["00042", "00043"]  # what score_predictions keys logged samples by

    utils = runpy.run_path(str(tmp_path / folder / "utils.py"))
    text = utils["doc_to_text"](rows[1], prompt)
    assert text.startswith(template.scene_intro["top_view_semantic"])
    assert "Scene Orientation: The desk was located at the left of the scene." in text
    assert "Context Change: The chair has been moved to the window. Question: How many chairs are there now?" in text
    assert utils["process_results"](rows[1], ["Two."]) == {"accuracy": 1.0}
    assert utils["process_results"](rows[1], ["three"]) == {"accuracy": 0.0}


def test_lmms_eval_sample_logs_score_back_against_the_release(hypo3d_release, tmp_path):
    """lmms-eval logs each doc with its replies; score_predictions finds the items by the doc's question_id."""
    with zipfile.ZipFile(io.BytesIO(read(life.release_files(hypo3d_release)["lmms_eval"]))) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".parquet"))
        rows = pq.read_table(io.BytesIO(archive.read(name))).drop_columns(["image"]).to_pylist()
    samples = tmp_path / "samples_hypolab_hypo_demo_1_0_0.jsonl"
    replies = ["window", "three"]
    samples.write_text("".join(json.dumps({"doc_id": k, "doc": row, "target": ",".join(row["answers"]),
                                           "resps": [[reply]], "filtered_resps": [reply]}) + "\n"
                               for k, (row, reply) in enumerate(zip(rows, replies, strict=True))))
    out = io.StringIO()
    call_command("score_predictions", "--release", "hypo-demo@1.0.0", "--pred", str(samples), "--no-sbert", stdout=out)
    result = json.loads(out.getvalue())
    assert (result["n_predictions"], result["n_dropped"], result["overall"]["EM"]) == (2, 0, 50.0)


def test_lmms_eval_scores_choice_answers_from_json_replies():
    utils = runpy.run_path("benchmarks/releases/harness_files/lmms_eval_utils.py")
    single = {"answer_format": "single", "answers": ["B"]}
    multi = {"answer_format": "multi", "answers": ["A", "C"]}
    assert utils["process_results"](single, ["{'Reasoning': 'it rolls', 'Answer': 'B'}"]) == {"accuracy": 1.0}
    assert utils["process_results"](multi, ["A, C"]) == {"accuracy": 1.0}
    assert utils["process_results"](multi, ["A"]) == {"accuracy": 0.0}


def test_vlmevalkit_tsv_for_hypo3d_is_a_vqa_file_with_the_change_and_the_top_view(hypo3d_release):
    content = read(life.release_files(hypo3d_release)["vlmevalkit"]).decode()
    rows = list(csv.DictReader(io.StringIO(content), delimiter="\t"))
    assert list(rows[0]) == ["index", "id", "question", "answer", "category", "image"]
    assert rows[1]["question"] == ("Scene Orientation: The desk was located at the left of the scene.\n"
                                   "Context Change: The chair has been moved to the window.\n"
                                   "Question: How many chairs are there now?")
    assert (rows[1]["answer"], rows[1]["category"]) == ("two", "Scale")
    assert base64.b64decode(rows[0]["image"]) == TOP_VIEW and rows[1]["image"] == rows[0]["index"]


def test_vlmevalkit_tsv_for_causalspatial_is_multiple_choice_with_its_images(tmp_path):
    bench = BenchmarkFactory(family="causalspatial")
    rows = [{"id": "Collision_Level_1_1", "question": "Will they collide? (A) Yes (B) No (C) Not sure",
             "answer": "B", "not_sure": "C", "image": base64.b64encode(RED).decode()}]
    (tmp_path / "causal.json").write_text(json.dumps(rows))
    call_command("import_items", "--benchmark", bench.slug, str(tmp_path / "causal.json"), stdout=io.StringIO())
    call_command("export_release", bench.slug, "1.0.0", out=str(tmp_path / "out"), stdout=io.StringIO())
    tsv = list(csv.DictReader(io.StringIO((tmp_path / "out" / "vlmevalkit.tsv").read_text()), delimiter="\t"))
    assert [(r["id"], r["A"], r["C"], r["answer"], r["category"]) for r in tsv] == [
        ("Collision_Level_1_1", "Yes", "Not sure", "B", "collision")]
    assert base64.b64decode(tsv[0]["image"]) == RED
    assert (tmp_path / "out" / "lmms_eval" / "hypolab_" f"{bench.slug.replace('-', '_')}_1_0_0" / "utils.py").is_file()
    assert Release.objects.get(benchmark=bench).status == "ready"
