"""Recipes: a paper's protocol as data. A recipe is a named, versioned set of runs (prompt conditions x
visual inputs x item subsets x generation settings x repeats x protocol) with the paper's prompt texts
verbatim (../shared/PROTOCOLS.md) and its defaults; `launch_recipe` launches every run of it for each
model given, all or none.

The shipped recipes are the JSON files beside this module, one per family (a list of recipes each); a
team copies one and edits it as data (`run_eval --recipe FILE.json`, or the object in the API body).

A recipe object:
- `name`, `version`, `family`, `title`, `source` (where its settings and prompts come from);
- `prompts`: {condition: {"text", "scene_intro"}}: installed as the family's prompt templates (a new
  version when the text differs from the latest of that condition);
- `defaults`: what every run takes unless its entry says otherwise: `settings`, `repeats`, `subset`,
  `protocol`, `examples`, `prompts_by` + `prompts` (a condition per tag value);
- `model_settings`: [{"match": regex on the model's name or served model, "provider": openai / vllm /
  anthropic / gemini / hf_local, "shown": [visual input kinds], "settings", "inputs", "source"}]: every
  rule that fits a model (and, with `shown`, a run showing it one of those kinds) adds its settings and
  inputs, later rules over earlier ones (the paper's per-model temperatures, token limits, thinking
  controls, image size and detail, message layout, frames per video or fps). A setting given as null is
  left unsent (modeleval.prompting.generation). A rule's frame count replaces an earlier rule's (frames_per_video
  and fps are one choice), and an entry's own inputs win over every rule's;
- `runs`: [{"key", "condition", "visual_inputs": {model modality: visual input}, ...defaults' fields}];
  `inputs` (frames_per_video or fps, extra_frames, chain, camera_view, map_first: modeleval.prompting.run_inputs);
  `shown`: [visual input kinds]: the entry is launched only for a model shown one of them (Hypo3D
  Table 2's "w. camera" is a 2D-VLM row); `scene_sample`: {"scenes": N, "seed": S}, the run scored on
  N sampled scenes (recipes.scene_sample); an entry that comes out the same as an earlier one for a
  model (a caption model under a "semantic map" entry) is launched once;
- `sources`: in `defaults` and in each run, {field or setting name: where its value comes from},
  beside each rule's `source`, each layout's and each prompt's: docs/RECIPES.md is written from them
  (`manage.py recipe_table`);
- `baselines`: chance models run beside (random_baseline, random_plus_plus), under every entry.
"""

import json
import re
from pathlib import Path

from django.db import transaction

from benchmarks.protocols import Protocol
from core.errors import DomainError

from .. import services
from ..analysis import labels
from ..models import ModelSpec, PromptTemplate, Run
from ..prompting import generation, run_inputs, visual_inputs
from ..prompting.visual_inputs import VisualInput
from . import scene_sample, shots

FOLDER = Path(__file__).parent
RUN_FIELDS = ("condition", "settings", "repeats", "subset", "protocol", "examples", "prompts_by", "prompts",
              "visual_inputs", "inputs", "shown", "scene_sample", "sources")
CHOICE_JUDGE = "choice_extraction"  # a judge reads the choices the rules cannot (3DSRBench, MMBench-style)
NO_JUDGE = ("exact matching only: no judge model was named, so an answer no rule reads is wrong (the paper "
            "reads those with an LLM judge, MMBench-style)")
RULE_FIELDS = ("match", "provider", "shown", "settings", "inputs", "source")
BASELINES = {"random_baseline": ("Random baseline (seed 0)", ModelSpec.Adapter.RANDOM_BASELINE),
             "random_plus_plus": ("Random++ (seed 0)", ModelSpec.Adapter.RANDOM_PLUS_PLUS)}


def shipped() -> list[dict]:
    """Every recipe of the JSON files here, in file and list order."""
    recipes = []
    for path in sorted(FOLDER.glob("*.json")):
        recipes += json.loads(path.read_text(encoding="utf-8"))
    return recipes


def find(name: str) -> dict:
    found = next((recipe for recipe in shipped() if recipe["name"] == name), None)
    if found is None:
        known = ", ".join(recipe["name"] for recipe in shipped())
        raise DomainError(f"No recipe {name!r}; known: {known}.", field="recipe")
    return found


CONDITION = re.compile(r"^[-a-zA-Z0-9_]{1,50}$")  # a PromptTemplate condition is a slug


def _check_run_fields(where: str, fields) -> None:
    if not isinstance(fields, dict):
        raise DomainError(f"{where} is an object.", field="recipe")
    unknown = set(fields) - {"key", *RUN_FIELDS}
    if unknown:
        raise DomainError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}.", field="recipe")
    for name in ("settings", "visual_inputs", "prompts", "subset", "protocol", "inputs", "sources"):
        if name in fields and not isinstance(fields[name], dict):
            raise DomainError(f"{where}: {name} is an object.", field="recipe")
    if not all(isinstance(text, str) and text.strip() for text in (fields.get("sources") or {}).values()):
        raise DomainError(f"{where}: each source is a text.", field="recipe")
    if "shown" in fields and not (isinstance(fields["shown"], list) and set(fields["shown"]) <= set(
            ModelSpec.Modality.values)):
        raise DomainError(f"{where}: shown is a list of visual input kinds.", field="recipe")
    if "condition" in fields and not (isinstance(fields["condition"], str) and CONDITION.match(fields["condition"])):
        raise DomainError(f"{where}: condition is a slug of at most 50 characters.", field="recipe")
    if "prompts_by" in fields and not isinstance(fields["prompts_by"], str):
        raise DomainError(f"{where}: prompts_by is a tag name.", field="recipe")


def checked(recipe) -> dict:
    """A recipe object with its parts in the shapes launch reads; a DomainError on `recipe` otherwise."""
    if not isinstance(recipe, dict) or not all(isinstance(recipe.get(k), str) and recipe[k] for k in (
            "name", "family")) or not isinstance(recipe.get("runs"), list) or not recipe["runs"]:
        raise DomainError("A recipe is an object with name, family and a list of runs.", field="recipe")
    if not isinstance(recipe.get("version", 1), int):
        raise DomainError("A recipe's version is a whole number.", field="recipe")
    _check_run_fields("defaults", recipe.get("defaults") or {})
    for entry in recipe["runs"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
            raise DomainError("Each run of a recipe is an object with a key.", field="recipe")
        _check_run_fields(f"Run {entry['key']}", entry)
    prompts = recipe.get("prompts") or {}
    if not isinstance(prompts, dict):
        raise DomainError("prompts is {condition: {text, scene_intro}}.", field="recipe")
    for condition, prompt in prompts.items():
        if not CONDITION.match(condition) or not isinstance(prompt, dict) or not isinstance(
                prompt.get("text"), str) or not isinstance(prompt.get("scene_intro") or {}, dict):
            raise DomainError(f"Prompt {condition}: a slug naming {{text, scene_intro}}.", field="recipe")
    rules = recipe.get("model_settings") or []
    if not isinstance(rules, list) or not all(
            isinstance(rule, dict) and not set(rule) - set(RULE_FIELDS) and isinstance(rule.get("settings", {}), dict)
            and isinstance(rule.get("inputs", {}), dict) and isinstance(rule.get("match", ""), str)
            and isinstance(rule.get("shown", []), list) for rule in rules):
        raise DomainError(f"model_settings is a list of {{{', '.join(RULE_FIELDS)}}}.", field="recipe")
    for rule in rules:
        try:
            re.compile(rule.get("match", ""))
        except re.error as error:
            raise DomainError(f"model_settings match {rule['match']!r}: {error}.", field="recipe") from None
    if recipe.get("judge", False) not in (True, False, CHOICE_JUDGE):
        raise DomainError(f'judge is true (a judge model is needed) or "{CHOICE_JUDGE}".', field="recipe")
    if not isinstance(recipe.get("baselines") or [], list):
        raise DomainError("baselines is a list.", field="recipe")
    for baseline in recipe.get("baselines") or []:
        if not isinstance(baseline, str) or baseline not in BASELINES:
            raise DomainError(f"Unknown baseline {baseline!r}; known: {', '.join(BASELINES)}.", field="recipe")
    return recipe


def install_prompts(recipe: dict) -> None:
    """The recipe's prompt texts as the family's templates: a new version where the text differs."""
    for condition, prompt in (recipe.get("prompts") or {}).items():
        intro = prompt.get("scene_intro") or {}
        latest = PromptTemplate.objects.filter(family=recipe["family"], condition=condition).order_by(
            "-version").first()
        if latest is None or latest.text != prompt["text"] or latest.scene_intro != intro:
            PromptTemplate.objects.create(family=recipe["family"], condition=condition, text=prompt["text"],
                                          scene_intro=intro, version=latest.version + 1 if latest else 1)


def with_inputs(inputs: dict, more: dict) -> dict:
    """`more` over `inputs`; a frame count in `more` replaces the other's (frames_per_video or fps)."""
    if set(more) & set(run_inputs.FRAME_KEYS):
        inputs = {name: value for name, value in inputs.items() if name not in run_inputs.FRAME_KEYS}
    return {**inputs, **more}


def model_rules(recipe: dict, model: ModelSpec, shown: str) -> tuple[dict, dict]:
    """(settings, inputs) of every `model_settings` rule that fits the model shown `shown`, in order."""
    kind = generation.provider(model) if model.adapter == ModelSpec.Adapter.OPENAI_COMPATIBLE else model.adapter
    names = f"{model.name}\n{(model.config or {}).get('model', '')}"
    settings, inputs = {}, {}
    for rule in recipe.get("model_settings") or []:
        if rule.get("provider") not in (None, kind):
            continue
        if rule.get("match") and not re.search(rule["match"], names, re.IGNORECASE):
            continue
        if rule.get("shown") and VisualInput.parse(shown).kind not in rule["shown"]:
            continue
        settings.update(rule.get("settings") or {})
        inputs = with_inputs(inputs, rule.get("inputs") or {})
    return settings, inputs


def planned_runs(recipe: dict, model: ModelSpec) -> list[dict]:
    """The launch options of each of the recipe's runs for this model, the same one once."""
    defaults = recipe.get("defaults") or {}
    baseline = model.adapter in ModelSpec.BASELINE_ADAPTERS
    plans, seen = [], set()
    for entry in recipe["runs"]:
        merged = {**defaults, **entry}
        visual_input = (merged.get("visual_inputs") or {}).get(model.modality) or ""
        shown = visual_input or visual_inputs.model_default(model)
        if merged.get("shown") and VisualInput.parse(shown).kind not in merged["shown"]:
            continue  # a row of the paper's table for other model kinds
        rule_settings, rule_inputs = model_rules(recipe, model, shown)
        if baseline:
            rule_settings, rule_inputs = {}, {}
        per_model = {"settings": {**(defaults.get("settings") or {}), **rule_settings},
                     "inputs": with_inputs(defaults.get("inputs") or {}, rule_inputs)}
        prompts = {"by": merged["prompts_by"], "templates": merged["prompts"]} if merged.get("prompts") else {}
        plan = {
            "condition": merged.get("condition", "main"), "repeats": 1 if baseline else merged.get("repeats", 1),
            "protocol": merged.get("protocol") or {}, "subset": merged.get("subset") or {}, "prompts": prompts,
            "settings": {} if baseline else {**per_model["settings"], **(entry.get("settings") or {})},
            "examples": merged.get("examples") or [], "visual_input": visual_input,
            "inputs": with_inputs(per_model["inputs"], entry.get("inputs") or {}),
            "scene_sample": merged.get("scene_sample") or {},
        }
        if baseline and plan["protocol"].get("flip"):
            plan["visual_input"] = ModelSpec.Modality.IMAGE  # a mirrored image is an image, even to a guesser
        same = json.dumps(plan, sort_keys=True)
        if same not in seen:
            seen.add(same)
            plans.append({"key": entry["key"], "per_model": per_model, **plan})
    return plans


def baseline_models(recipe: dict) -> list[ModelSpec]:
    models = []
    for key in recipe.get("baselines") or []:
        name, adapter = BASELINES[key]
        models.append(ModelSpec.objects.get_or_create(name=name, defaults={"adapter": adapter, "seed": 0})[0])
    return models


@transaction.atomic
def launch_recipe(recipe, benchmark, model_ids: list, created_by=None, batch_size: int = 8,
                  judge_model=None) -> list[Run]:
    """Every run of the recipe (a shipped name or a recipe object) for each model and its baselines,
    each recorded with the recipe's name, version, entry and default settings; all or none.
    `judge_model` rates each run's answers (Hypo3D Table 10) or reads the choices the rules cannot
    (3DSRBench); a recipe with `"judge": true` needs one, one with `"judge": "choice_extraction"` records
    on each run, without one, that its table is read by exact matching only."""
    recipe = checked(find(recipe) if isinstance(recipe, str) else recipe)
    if recipe["family"] != benchmark.family:
        raise DomainError(f"{recipe['name']} is a {recipe['family']} recipe; {benchmark.slug} is "
                          f"{benchmark.family}.", field="recipe")
    if not model_ids:
        raise DomainError("Name at least one model.", field="models")
    if recipe.get("judge") is True and judge_model in (None, ""):
        raise DomainError(f"{recipe['name']} rates answers with a judge: name a judge model.", field="judge_model")
    models = [ModelSpec.objects.filter(pk=pk).first() if str(pk).isdigit() else None for pk in model_ids]
    if None in models:
        raise DomainError("Choose registered models.", field="models")
    install_prompts(recipe)
    runs = []
    for model in models + baseline_models(recipe):
        plans = planned_runs(recipe, model)
        if not plans:
            raise DomainError(f"{recipe['name']} has no run for a model shown "
                              f"{visual_inputs.model_default(model)} ({model.name}).", field="models")
        # the recipe's first run is its main setting: ablation rows are told by their difference from it
        main = {"condition": plans[0]["condition"], "protocol": Protocol.from_data(plans[0]["protocol"]).name}
        held_out = set()  # the items shots are drawn from ({"from_items": N}) are scored in none of its runs
        for plan in plans:
            plan["examples"], drawn = shots.resolved(plan["examples"], benchmark, plan["subset"])
            held_out.update(drawn)
        for index, plan in enumerate(plans):
            key, per_model, sample = plan.pop("key"), plan.pop("per_model"), plan.pop("scene_sample")
            outside, scenes = scene_sample.left_out(sample, benchmark, plan["subset"])
            run = services.launch_run(model.pk, benchmark, created_by, batch_size, judge_model=judge_model,
                                      held_out=sorted(held_out | set(outside)), **plan)
            # the recipe's settings and inputs for this model: a row is told by what differs from them
            run.recipe = {"name": recipe["name"], "version": recipe.get("version", 1), "entry": key,
                          "settings": per_model["settings"], "inputs": per_model["inputs"], "main": main}
            if sample:
                run.recipe["scene_sample"] = {**sample, "drawn": scenes}
            if recipe.get("judge") == CHOICE_JUDGE:
                run.recipe["extraction"] = (f"by rule, then the judge {run.judge_model.name}" if run.judge_model
                                            else NO_JUDGE)
            if index == 0:  # the main run's inputs (a sweep's main frame count), as labels name them
                main["inputs"] = labels.differing_inputs(run)
            run.save(update_fields=["recipe"])
            runs.append(run)
    return runs
