"""The exported files as the official tools read them, with the tools where they install here (`datasets`
5.2.0, huggingface_hub 2.4.0's DatasetCard) and otherwise by their documented rules (versions named):

- VLMEvalKit's Spatial457 evaluation calls int(line["index"]) on the TSV pandas loads, then scores each row
  (spatial457.py; the rule is scoring.spatial457's): the exported TSV's indexes are integers and its gold
  scores 100;
- Hypo3D's metric_compute.py takes the second word of each change type and reads `answer` as text;
- lmms-eval 0.7.3 loads a task's `dataset_path: parquet` with `datasets.load_dataset("parquet", data_files=...)`
  and calls utils.doc_to_visual / doc_to_text on each doc: M3-Verse's doc gives its two videos, and the
  prompt is the recipe's (the paper's);
- the Hugging Face card is a DatasetCard whose `num_bytes` is what `datasets` counts for the split."""

import io
import json
import runpy
import zipfile

import pytest
import yaml

from benchmarks.models import Item, Release
from benchmarks.releases import life
from benchmarks.releases.harness import family_recipe
from benchmarks.releases.hub import datasets_layout, write_folder
from benchmarks.releases.published import PUBLISHED_NAMES
from benchmarks.services import gold_row
from scoring import score
from scoring.__main__ import main as scoring_main
from tests.benchmarks.test_release_built_items import (
    causal_built,
    export,
    hypo3d_built,
    json_reply,
    m3verse_built,
    spatial457_built,
)
from tests.benchmarks.test_release_srbench_variants import srbench_built
from tests.needs import need_module

pytestmark = pytest.mark.django_db
datasets = need_module("datasets")
pd = need_module("pandas")  # as VLMEvalKit loads a TSV


class TaskLoader(yaml.SafeLoader):
    """lmms-eval's YAML: `!function module.name`."""


TaskLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def test_spatial457_tsv_has_integer_indexes_and_its_gold_scores_100(tmp_path):
    folder = export(spatial457_built(), tmp_path)
    table = pd.read_csv(folder / "spatial457.tsv", sep="\t")
    assert table["index"].dtype.kind == "i"
    lines = [table.iloc[k] for k in range(len(table))]
    gold = [{"id": int(line["index"]), "answer_format": "open", "answer": str(line["answer"]),
             "tags": {"level": line["category"]}} for line in lines]
    preds = [{"id": int(line["index"]), "output": json_reply(str(line["answer"]))} for line in lines]
    result = score("spatial457", gold, preds, by=["level"])
    assert result["overall"]["accuracy"] == 100.0 and result["n_dropped"] == 0
    assert set(result["by"]) == {f"level={level}" for level in ("L1_single", "L2_objects", "L4_pose", "L5_collision")}
    assert all(cell["accuracy"] == 100.0 for cell in result["by"].values())


def test_hypo3d_file_reads_as_metric_compute_reads_it(tmp_path):
    folder = export(hypo3d_built(), tmp_path)
    data = json.loads((folder / "hypo3d.json").read_text())
    seen = set()
    for changes in data.values():
        for change in changes:
            change_type = change["change_type"].split()[1]  # metric_compute.py
            seen.add(change_type)
            for qa in change["questions_answers"]:
                assert isinstance(qa["answer"], str) and qa["question_type"].split()
    assert seen == {"Movement", "Removal", "Attribute"}


def task_folder(release: Release, tmp_path):
    content = life.release_files(release)["lmms_eval"].file.open("rb").read()
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        archive.extractall(tmp_path)
        [yaml_name] = [name for name in archive.namelist() if name.endswith(".yaml")]
    task = yaml.load((tmp_path / yaml_name).read_text(), Loader=TaskLoader)
    utils = runpy.run_path(str((tmp_path / yaml_name).parent / "utils.py"))
    loaded = datasets.load_dataset(task["dataset_path"], data_files={
        "test": str(tmp_path / task["dataset_kwargs"]["data_files"]["test"])})
    return task, utils, loaded[task["test_split"]]


def test_m3verse_lmms_eval_task_gives_its_two_videos_and_the_papers_prompt(tmp_path):
    bench = m3verse_built()
    release = life.export_release(bench, "1.0.0", None, inline=True)
    task, utils, docs = task_folder(release, tmp_path)
    doc = docs[0]
    before, after = utils["doc_to_visual"](doc)
    assert open(before, "rb").read() == b"before frames" and open(after, "rb").read() == b"after frames"
    kwargs = task["lmms_eval_specific_kwargs"]["default"]
    recipe = family_recipe("m3verse")["prompts"]["paper-fig19"]
    assert kwargs["prompt"] == recipe["text"] and kwargs["scene_intro"] == recipe["scene_intro"]["video_frames"]
    text = utils["doc_to_text"](doc, kwargs)
    assert text.startswith("Your task is to answer questions based on the provided videos and options.\n"
                           "This is the first video:")
    assert "options: A. Apple\nB. Mug" in text and text.endswith("There is only one correct option for this question.")


def test_causalspatial_and_spatial457_tasks_carry_their_recipes(tmp_path):
    causal = life.export_release(causal_built(tmp_path), "1.0.0", None, inline=True)
    task, utils, docs = task_folder(causal, tmp_path / "causal")
    recipe = family_recipe("causalspatial")
    assert task["lmms_eval_specific_kwargs"]["default"]["prompt"] == recipe["prompts"]["eval-py"]["text"]
    # an item written with a list of choices reaches the model with them, in CausalSpatial's wording
    texts = {doc["question"]: utils["doc_to_text"](doc, task["lmms_eval_specific_kwargs"]["default"]) for doc in docs}
    assert texts["Question 1: what happens after the push?"].startswith(
        "Question 1: what happens after the push?\n\nAnswer by (A) Yes, (B) No or (C) Not sure.\n\nWrite your")
    assert "(D) Not sure" in texts["Question 0: what happens after the push?"]
    # the recipe's settings: 8192 tokens, and no temperature sent (eval.py sends none)
    stated = recipe["defaults"]["settings"]
    assert task["generation_kwargs"]["max_new_tokens"] == stated["max_tokens"] == 8192
    if stated.get("temperature") is None:
        assert "temperature" not in task["generation_kwargs"] and "do_sample" not in task["generation_kwargs"]
    else:
        assert task["generation_kwargs"]["temperature"] == stated["temperature"]
    spatial = life.export_release(spatial457_built(), "1.0.0", None, inline=True)
    task, utils, docs = task_folder(spatial, tmp_path / "spatial")
    kwargs = task["lmms_eval_specific_kwargs"]["default"]
    assert kwargs["prompts_by"] == "level"
    chosen = family_recipe("spatial457")["defaults"]["prompts"]
    prompts = family_recipe("spatial457")["prompts"]
    for doc in docs:  # each level's own prompt (Spatial457 Figs. 9-15), the question after it
        level = json.loads(doc["tags"])["level"]
        wanted = prompts[chosen[level]]["text"].replace("{{", "{").replace("}}", "}")
        assert utils["doc_to_text"](doc, kwargs) == wanted.replace("{question}", doc["question"])
    assert len({chosen[json.loads(doc["tags"])["level"]] for doc in docs}) == 4


def test_the_dataset_card_is_a_datasetcard_with_the_bytes_datasets_counts(tmp_path):
    from huggingface_hub import DatasetCard

    bench = m3verse_built()
    bench.license, bench.citation = "cc-by-4.0", "@article{m3verse, title={M3-Verse}, year={2025}}"
    bench.save()
    release = life.export_release(bench, "1.0.0", None, inline=True)
    folder = tmp_path / "hf"
    write_folder(datasets_layout(release), folder)
    card = DatasetCard.load(folder / "README.md")
    assert card.data.license == "cc-by-4.0" and card.data.citation == bench.citation
    assert card.data.pretty_name == bench.name and "@article{m3verse" in card.text
    loaded = datasets.load_dataset(str(folder), verification_mode="all_checks")
    [split] = card.data.dataset_info["splits"]
    assert split["num_examples"] == loaded["test"].num_rows == Item.objects.filter(benchmark=bench).count()
    assert split["num_bytes"] == loaded["test"].info.splits["test"].num_bytes
    assert card.data.dataset_info["download_size"] == (folder / "data" / "test-00000-of-00001.parquet").stat().st_size


@pytest.mark.parametrize("family", ["hypo3d", "causalspatial", "spatial457", "m3verse", "3dsrbench"])
def test_scoring_gold_reads_a_release_folder_and_its_published_file(family, tmp_path, capsys):
    """`python -m scoring --gold <release folder>` (its items.jsonl), and the published-shape file alone,
    score as the release's own gold rows do."""
    builders = {"hypo3d": hypo3d_built, "causalspatial": lambda: causal_built(tmp_path),
                "spatial457": spatial457_built, "m3verse": m3verse_built, "3dsrbench": srbench_built}
    bench = builders[family]()
    folder = export(bench, tmp_path)
    items = list(Item.objects.filter(benchmark=bench).order_by("pk"))
    gold = [gold_row(item) for item in items]
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"id": row["id"], "output": json_reply(
        row["answer"] if isinstance(row["answer"], str) else ",".join(row["answer"]))}) + "\n" for row in gold))

    def cli(gold_path) -> dict:
        capsys.readouterr()
        code = scoring_main(["--family", family, "--gold", str(gold_path), "--pred", str(pred), "--no-sbert",
                             "--allow-partial"])
        assert code == 0
        return json.loads(capsys.readouterr().out)

    expected = score(family, gold, [json.loads(line) for line in pred.read_text().splitlines()], sbert=False)
    from_folder = cli(folder)
    assert from_folder["overall"] == expected["overall"] and from_folder["n_items"] == len(items)
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / PUBLISHED_NAMES[family]).write_bytes((folder / PUBLISHED_NAMES[family]).read_bytes())
    from_published = cli(alone)
    if family == "3dsrbench":  # the file holds every variant row of the built items, under their qids
        assert from_published["n_items"] == 22 and from_published["n_dropped"] == len(items)
    else:
        assert from_published["overall"] == expected["overall"] and from_published["n_dropped"] == 0
