"""The recipes' settings as a table per recipe, each with its source line in the paper or the official
code, written from the recipe declarations (docs/RECIPES.md is this module's output: `manage.py
recipe_table --write docs/RECIPES.md`; a test keeps the two equal). A declared setting with no source
is listed by `unsourced`, and a test keeps that empty."""

import json

from ..analysis import labels
from ..runs import run_options

UNSENT = "unset (provider default)"
EVERY_RUN = "every run"
DOC_HEAD = """# What each recipe sends, per model, and where it comes from

Written by `manage.py recipe_table --write docs/RECIPES.md` from the recipe declarations
(`modeleval/recipes/*.json`); a test fails when this file and the declarations differ. Per recipe:
what every run takes (`defaults`), each `model_settings` rule (the models whose name or served model
the `match` pattern fits, a provider, the visual inputs it applies to; later rules over earlier ones)
and what each run entry adds, each with its source. "unset (provider default)" is a setting the request
leaves out (the authors sent none); a setting not listed comes from the model's registration.
"""


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _layout(layout: dict) -> str:
    order = {"before_text": "images, then the text", "after_text": "the text, then the images"}
    parts = [order.get(layout.get("images"), "the endpoint's order (text first; a local checkpoint's images first)")]
    if layout.get("system"):
        parts.append(f'system message "{layout["system"]}"')
    if layout.get("system_from_prompt"):
        parts.append("system message: the prompt's part before the question; the question as the user turn")
    return "; ".join(parts)


def _value(name: str, value) -> str:
    if value is None:
        return UNSENT
    if name == "layout":
        return _layout(value)
    if name == "subset":
        return labels.axis_text("subset", run_options.checked_subset(value))
    if name == "visual_inputs":
        return ", ".join(f"{modality} → {shown}" for modality, shown in value.items())
    if name == "protocol":
        return ", ".join(part for part, on in value.items() if on) or "vanilla"
    if name == "examples":
        if isinstance(value, dict):
            return f"{value.get('from_items')} shots drawn from the items (seed {value.get('seed', 0)})"
        return f"{len(value)} given shots"
    if name == "scene_sample":
        return f"{value.get('scenes')} scenes drawn (seed {value.get('seed', 0)})"
    if name == "shown":
        return "launched only for models shown " + ", ".join(value)
    if name == "prompts":
        return ", ".join(f"{tag} → {condition}" for tag, condition in value.items())
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _declared(recipe: dict, fields: dict, sources: dict) -> list[tuple[str, str, str]]:
    """(setting, value, source) for each field of a `defaults` or run entry, settings and inputs by name."""
    prompts = recipe.get("prompts") or {}
    rows = []
    for field, value in fields.items():
        if field in ("key", "sources"):
            continue
        if field in ("settings", "inputs"):
            for name, setting in value.items():
                source = (setting or {}).get("source", "") if name == "layout" else sources.get(name, "")
                rows.append((name, _value(name, setting), source))
            continue
        source = sources.get(field, "")
        if field == "condition" and not source:
            source = (prompts.get(value) or {}).get("source", "")
        rows.append((field, _value(field, value), source))
    return rows


def _models(rule: dict) -> str:
    parts = [f"`{rule['match']}`"] if rule.get("match") else []
    if rule.get("provider"):
        parts.append(f"provider {rule['provider']}")
    if rule.get("shown"):
        parts.append("shown " + ", ".join(rule["shown"]))
    return " · ".join(parts) or "every model"


def rows(recipe: dict) -> list[tuple[str, str, str, str]]:
    """(who, setting, value, source): the defaults, each model rule, each run entry, in that order."""
    defaults = recipe.get("defaults") or {}
    sources = defaults.get("sources") or {}
    table = [(EVERY_RUN, *row) for row in _declared(recipe, defaults, sources)]
    for name in ("judge", "baselines"):
        if recipe.get(name):
            table.append((EVERY_RUN, name, _value(name, recipe[name]), sources.get(name, "")))
    for rule in recipe.get("model_settings") or []:
        for part in ("settings", "inputs"):
            for name, value in (rule.get(part) or {}).items():
                source = (value or {}).get("source") or rule.get("source", "") if name == "layout" else rule.get(
                    "source", "")
                table.append((_models(rule), name, _value(name, value), source))
    for entry in recipe["runs"]:
        table += [(f"run `{entry['key']}`", *row) for row in _declared(recipe, entry, entry.get("sources") or {})]
    return table


def unsourced(recipe: dict) -> list[str]:
    """`who: setting` for each declared setting of the recipe without a source."""
    return [f"{who}: {setting}" for who, setting, _, source in rows(recipe) if not str(source).strip()]


def markdown(recipes: list[dict]) -> str:
    out = [DOC_HEAD]
    for recipe in recipes:
        out += [f"## `{recipe['name']}` (version {recipe.get('version', 1)})", "", _cell(recipe.get("title", "")), "",
                f"Source: {_cell(recipe.get('source', ''))}", "", "| Models | Setting | Value | Source |",
                "|---|---|---|---|"]
        out += [f"| {' | '.join(_cell(part) for part in row)} |" for row in rows(recipe)]
        out.append("")
    return "\n".join(out)
