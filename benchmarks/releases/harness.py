"""The release files for the places researchers evaluate: the family's published shape
(published.py), a VLMEvalKit-ready TSV and an lmms-eval task folder (YAML with the family's prompt
and generation settings, utils.py, the dataset as Parquet), as one zip. Commands: docs/IMPORT.md
"Releases in the harnesses"."""

import io
import json
import zipfile
from pathlib import Path

from django.dispatch import Signal

from core.jobs import beat_job

from ..importers.rows import LETTERS
from ..models import Release
from ..option_text import has_option_slot, with_options
from ..services import question_types_of
from .hub import dataset_parquet, item_media
from .lines import release_lines
from .published import (
    ImageColumn,
    item_image,
    published_file,
    release_items,
    row_indexes,
    scene_media,
    tsv_bytes,
)

HARNESS_FORMATS = ("published", "vlmevalkit", "lmms_eval")

# Asked with (family, kind) for the prompt a harness should send: modeleval answers with its latest
# template ({"prompt", "scene_intro", "answer_count"}); benchmarks does not import modeleval.
harness_prompt = Signal()
# What the harness files show the model, as modeleval's visual inputs name it.
SHOWN_KIND = {"hypo3d": "top_view_semantic", "m3verse": "video_frames"}
# Generation settings per family, from ../shared/PROTOCOLS.md: lmms-eval's own task YAMLs for 3DSRBench
# (2.4) and Spatial457 (4.1), CausalSpatial's eval.py (3.1: 8,192 tokens), Hypo3D's scripts (1.4: 128
# new tokens); M3-Verse states none (5.1), so greedy with room for "A,C".
GENERATION = {
    "hypo3d": {"max_new_tokens": 128, "temperature": 0.0, "do_sample": False},
    "3dsrbench": {"max_new_tokens": 4096, "temperature": 0.0, "top_p": 1.0, "do_sample": False},
    "causalspatial": {"max_new_tokens": 8192, "temperature": 0.0, "do_sample": False},
    "spatial457": {"max_new_tokens": 512, "temperature": 0.0, "do_sample": False},
    "m3verse": {"max_new_tokens": 128, "temperature": 0.0, "do_sample": False},
}
FALLBACK_PROMPT = {"prompt": "{question}\n{choices}"}
UTILS = Path(__file__).parent / "harness_files" / "lmms_eval_utils.py"


def harness_file(release: Release, fmt: str) -> tuple[str, bytes]:
    prefix = f"{release.benchmark.slug}-{release.version}"
    if fmt == "published":
        return published_file(release)
    if fmt == "vlmevalkit":
        return f"{prefix}-vlmevalkit.tsv", vlmevalkit_tsv(release)
    return f"{prefix}-lmms-eval.zip", lmms_eval_zip(release)


# --- VLMEvalKit -----------------------------------------------------------------------------------

def vlmevalkit_tsv(release: Release) -> bytes:
    """3DSRBench and Spatial457: their published TSV. The other families as a custom VLMEvalKit dataset:
    a multiple-choice TSV (`A`, `B`... columns) or, for Hypo3D's open questions, a VQA TSV whose question
    carries the world frame and the change; images base64 (Hypo3D: the semantic top view), no `image`
    column when no item has one. M3-Verse's videos are not in it (VLMEvalKit's video datasets read their
    own files; use the lmms-eval task): its TSV is a text-only multiple-choice set."""
    family = release.benchmark.family
    if family in ("3dsrbench", "spatial457"):
        return published_file(release)[1]
    items = release_items(release)
    media, cache, images, rows = scene_media(items, ("image",)), {}, ImageColumn(), []
    width = max((len(item.choices) for item in items), default=0)
    top_views = {}
    if family == "hypo3d":
        top_views = {item.pk: cell for item, cell in zip(items, item_media(release, items)["image"], strict=True)}
    lines = {line["id"]: line for line in release_lines(release)}
    for index, item in zip(row_indexes(items), items, strict=True):
        beat_job(release.job_id)  # built in memory, not streamed: the export's sign of life (core.jobs)
        tags = item.tags or {}
        row = {"index": index, "id": item.scoring_id, "question": item.question,
               **{LETTERS[k]: choice for k, choice in enumerate(item.choices)}}
        if family == "hypo3d":
            line = lines[item.release_id]
            row["question"] = (f"Scene Orientation: {' '.join(line['world_frame'])}\n"
                               f"Context Change: {line['context_change'] or ''}\nQuestion: {item.question}")
            row["answer"] = item.answers[0] if item.answers else ""
            row["category"] = " ".join(question_types_of(tags))
            image = (top_views.get(item.pk) or {}).get("bytes")
        else:
            row["answer"] = ",".join(item.answers)
            row["category"] = tags.get("task") or tags.get("type") or tags.get("category") or ""
            image = item_image(item, media, cache) if family == "causalspatial" else None
        row["image"] = images.cell(index, image)
        rows.append(row)
    # VLMEvalKit reads a TSV with an `image` column as an image dataset: none when no item has one
    pictured = any(row["image"] for row in rows)
    columns = ["index", "id", "question", *LETTERS[:width], "answer", "category", *(["image"] if pictured else [])]
    return tsv_bytes(columns, rows)


# --- lmms-eval ------------------------------------------------------------------------------------

def task_name(release: Release) -> str:
    return f"hypolab_{release.benchmark.slug}_{release.version}".replace("-", "_").replace(".", "_")


# The papers' runs as data (modeleval/recipes/<family>.json, read as files: benchmarks does not import
# modeleval): the task sends the family's first recipe's default prompt, the paper's, not a paraphrase.
RECIPES = Path(__file__).resolve().parents[2] / "modeleval" / "recipes"


def family_recipe(family: str) -> dict | None:
    """The family's main recipe (the first of its file), or None where there is none."""
    path = RECIPES / f"{family}.json"
    if not path.is_file():
        return None
    recipes = json.loads(path.read_text())
    return recipes[0] if recipes else None


def family_prompt(family: str) -> dict:
    """{"prompt", "scene_intro"[, "answer_count"][, "prompts_by", "prompts"]}: the recipe's default condition
    (Spatial457: one prompt per level, `prompts_by: level`), else modeleval's latest template."""
    kind = SHOWN_KIND.get(family, "image")
    template = next((answer for _, answer in harness_prompt.send(sender=Release, family=family, kind=kind)
                     if answer), None)
    recipe = family_recipe(family)
    if recipe is None:
        return template or FALLBACK_PROMPT
    defaults, prompts = recipe.get("defaults") or {}, recipe["prompts"]
    condition = defaults.get("condition") or next(iter(prompts))
    if defaults.get("prompts_by"):  # a prompt per value of a tag; the first stands for an item with none
        chosen = defaults["prompts"]
        condition = next(iter(chosen.values()))
    answer = {"prompt": prompts[condition]["text"], "scene_intro": prompts[condition].get("scene_intro", {}).get(kind, "")}
    if "{answer_count}" in answer["prompt"]:
        answer["answer_count"] = (template or {}).get("answer_count") or {}
    if defaults.get("prompts_by"):
        answer["prompts_by"] = defaults["prompts_by"]
        answer["prompts"] = {value: prompts[name]["text"] for value, name in chosen.items()}
    return answer


def generation_kwargs(family: str) -> dict:
    """The family's settings (GENERATION) with the recipe's own where it states them: its `max_tokens` and
    `temperature`, a null one left unsent as the recipe leaves it (CausalSpatial's eval.py sends no
    temperature: the model's default sampling)."""
    settings = dict(GENERATION[family])
    stated = ((family_recipe(family) or {}).get("defaults") or {}).get("settings") or {}
    for ours, theirs in (("max_new_tokens", "max_tokens"), ("temperature", "temperature")):
        if theirs not in stated:
            continue
        if stated[theirs] is None:
            settings.pop(ours, None)
            if ours == "temperature":
                settings.pop("do_sample", None)
        else:
            settings[ours] = stated[theirs]
            if ours == "temperature":
                settings["do_sample"] = stated[theirs] > 0
    return settings


def task_yaml(release: Release, data_file: str) -> str:
    """lmms-eval's task YAML: the `!function` lines by hand (safe_dump cannot write tags), the rest dumped."""
    import yaml

    family = release.benchmark.family
    rest = {
        "generation_kwargs": generation_kwargs(family),
        "metric_list": [{"metric": "accuracy", "aggregation": "mean", "higher_is_better": True}],
        "lmms_eval_specific_kwargs": {"default": family_prompt(family)},
        "metadata": {"version": 0.0, "hypolab_release": f"{release.benchmark.slug}@{release.version}",
                     "family": family},
    }
    head = [
        f"task: {task_name(release)}", "dataset_path: parquet", "dataset_kwargs:", "  data_files:",
        f"    test: {data_file}", "test_split: test", "output_type: generate_until",
        "doc_to_visual: !function utils.doc_to_visual", "doc_to_text: !function utils.doc_to_text",
        "doc_to_target: !function utils.doc_to_target", "process_results: !function utils.process_results",
    ]
    return "\n".join(head) + "\n" + yaml.safe_dump(rest, sort_keys=False, allow_unicode=True, width=1000)


def lmms_eval_zip(release: Release) -> bytes:
    """lmms_eval/<task>/ with <task>.yaml, utils.py and <task>.parquet (every item, one `test` split; images
    typed, with their marks drawn in; M3-Verse's two videos as {bytes, path}; `prompt_question`, the question
    with its options as the model reads it); data_files is relative to the folder lmms_eval/ sits in."""
    name = task_name(release)
    folder = f"lmms_eval/{name}"
    family, items = release.benchmark.family, release_items(release)
    slot = has_option_slot(family_prompt(family)["prompt"])
    # the question as the model reads it: with its options where the prompt has no slot for them and the
    # question spells none (an item written with a list of choices), as modeleval's requests have it
    asked = [with_options(family, item.question, item.choices, item.choices, slot) for item in items]
    beat_job(release.job_id)  # built in memory, not streamed: the export's sign of life between its stages
    parquet = dataset_parquet(release, release_lines(release), items, typed_video=False, question_ids=True,
                              texts={"prompt_question": asked})
    files = {f"{folder}/{name}.yaml": task_yaml(release, f"{folder}/{name}.parquet").encode(),
             f"{folder}/utils.py": UTILS.read_bytes(), f"{folder}/{name}.parquet": parquet}
    beat_job(release.job_id)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in files.items():  # a fixed date: the same release gives the same bytes
            archive.writestr(zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0)), content,
                             compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()
