"""What a run is, said in its label: model x prompt condition x visual input x item subset x protocol
x in-context examples x the generation settings that differ from its recipe's defaults.

`run_setting` is that description without the model: runs with equal settings are comparable (the
best of a column is chosen among them), and runs of one model whose settings differ on one axis
form an ablation table (results/ablations.py)."""

import json

from benchmarks.protocols import Protocol

from ..models import Run
from ..prompting import run_inputs, visual_inputs

# The axes a run's setting varies on, each with its main value (visual input: the model's modality).
AXES = ("condition", "visual_input", "inputs", "subset", "protocol", "examples", "prompts", "settings")
MAIN = {"condition": "main", "inputs": {}, "subset": {}, "protocol": "vanilla", "examples": 0, "prompts": {},
        "settings": {}}


def differing_settings(run: Run) -> dict:
    """The run's generation settings that differ from its recipe's defaults (all of them without a recipe)."""
    defaults = (run.recipe or {}).get("settings") or {}
    return {name: value for name, value in sorted((run.settings or {}).items()) if defaults.get(name) != value}


def differing_inputs(run: Run) -> dict:
    """The run's inputs, as labels name them, but those its recipe gives this model (M3-Verse's frames per
    video or fps per model): rows of one table stay comparable across models."""
    per_model = (run.recipe or {}).get("inputs") or {}
    return {name: value for name, value in run_inputs.label_value(run.inputs).items()
            if per_model.get(name) != (run.inputs or {}).get(name)}


def run_setting(run: Run) -> dict:
    templates = ((run.prompt_templates or {}).get("templates") or {}).items()
    return {
        "condition": run.prompt_template.condition if run.prompt_template else "main",
        "visual_input": run.visual_input,
        "inputs": differing_inputs(run),  # frames per video / fps, extra frames, chain
        "subset": run.subset or {},
        "protocol": Protocol.from_data(run.protocol).name,
        "examples": len(run.examples or []),
        "prompts": {value: chosen["condition"] for value, chosen in sorted(templates)},
        "settings": differing_settings(run),
    }


def main_value(run: Run, axis: str):
    """The axis's main value: the recipe's main run's (its first), else the platform's default."""
    main = (run.recipe or {}).get("main") or {}
    if axis in main:
        return main[axis]
    return visual_inputs.model_default(run.model) if axis == "visual_input" else MAIN[axis]


def comparable_key(run: Run) -> str:
    """Equal for runs whose rows may be ranked against each other: every setting but the model."""
    return json.dumps(run_setting(run), sort_keys=True)


def axis_text(axis: str, value) -> str:
    if axis == "subset":
        return " & ".join(f"{tag}=={{{','.join(values['equals'])}}}" if isinstance(values, dict)
                          else f"{tag}={','.join(values)}" for tag, values in sorted(value.items())) or "all items"
    if axis == "examples":
        return f"{value}-shot" if value else "zero-shot"
    if axis == "prompts":
        return ", ".join(f"{v}: {c}" for v, c in value.items()) or "one prompt"
    if axis in ("settings", "inputs"):
        return ", ".join(f"{name}={json.dumps(v) if not isinstance(v, str) else v}" for name, v in value.items()) \
            or "defaults"
    return str(value)


def run_label(run: Run) -> str:
    """`Model[ · condition][ · visual input][ · inputs][ · subset][ · protocol][ · n-shot][ · prompts][ · settings]
    (run N)`: the condition and the visual input only where they are not the main ones (a row saying
    "main · caption_only" of every run, a baseline's or a 3DSRBench run's, said nothing)."""
    setting = run_setting(run)
    parts = [run.model.name]
    if setting["condition"] != MAIN["condition"]:
        parts.append(setting["condition"])
    if setting["visual_input"] not in ("", main_value(run, "visual_input")):
        parts.append(setting["visual_input"])
    parts += [axis_text(axis, setting[axis]) for axis in ("inputs", "subset", "protocol", "examples", "prompts",
                                                          "settings")
              if setting[axis] != MAIN[axis]]
    return f"{' · '.join(parts)} (run {run.pk})"
