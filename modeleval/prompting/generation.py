"""Generation settings: what a run may ask of a model (temperature, top_p, max tokens, seed, stop, the
thinking controls, the size and detail of its images, the layout of its messages), checked at launch
against what the model's adapter can honour, and written into each request as its provider reads them.

A sampling setting given as null (`"temperature": null`) is left unsent: the request carries no such key,
whatever the model's registration says, so the provider's (or the checkpoint's generation config's)
default applies, as in a paper whose script sent none (CausalSpatial's eval.py sends no temperature).

A setting the model cannot honour is refused with a DomainError naming it (a 400 at launch), never
dropped. Each repeat of each item gets its own seed, derived from the run's seed, the item, its
protocol variant and the repeat, so repeats are independent samples that a rerun reproduces."""

import hashlib
import re

from core.errors import DomainError

from ..models import ModelSpec

KNOWN = ("temperature", "top_p", "max_tokens", "seed", "stop", "reasoning_effort", "thinking_budget",
         "enable_thinking", "image_size", "image_detail", "layout")
# The settings a model registration gives a value (ModelSpec temperature, max_new_tokens, seed) or a run
# may name as null: left out of the request, the provider's default.
UNSENDABLE = ("temperature", "top_p", "max_tokens", "seed")
PROVIDER_DEFAULT = "provider default"
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
# OpenAI's image_url detail; VLMEvalKit's GPT wrapper sends it (img_detail) with each image.
IMAGE_DETAILS = ("low", "high", "auto")
MAX_IMAGE_SIZE = 8192
# The order of a user turn's parts, and its system message: a fixed text, or the prompt's part before
# the item's question (Spatial457's System block, Supp. Figs. 9-15). `source` says whose layout it is.
LAYOUT_KEYS = ("images", "system", "system_from_prompt", "source")
IMAGES_FIRST, TEXT_FIRST = "before_text", "after_text"
MAX_STOP = 4  # the OpenAI API takes up to 4 stop sequences

# Provider kinds of an OpenAI-compatible endpoint (ModelSpec.config["provider"]), each with its own
# thinking control: OpenAI `reasoning_effort`; vLLM `chat_template_kwargs.enable_thinking` (Qwen3's
# chat template); Anthropic `thinking: {type, budget_tokens}`; Gemini's `thinking_config` under
# `extra_body.google`, as its OpenAI-compatible API reads it.
OPENAI, VLLM, ANTHROPIC, GEMINI = "openai", "vllm", "anthropic", "gemini"
PROVIDERS = (OPENAI, VLLM, ANTHROPIC, GEMINI)
_COMMON = {"temperature", "top_p", "max_tokens", "seed", "stop", "image_size", "layout"}
ENDPOINT_SETTINGS = {
    OPENAI: _COMMON | {"reasoning_effort", "image_detail"},
    VLLM: _COMMON | {"reasoning_effort", "enable_thinking"},
    ANTHROPIC: (_COMMON - {"seed"}) | {"thinking_budget"},
    GEMINI: _COMMON | {"reasoning_effort", "thinking_budget"},
}
# The local transformers adapter samples with generate(); a chat template may read enable_thinking.
LOCAL_SETTINGS = {"temperature", "top_p", "max_tokens", "seed", "stop", "enable_thinking", "image_size", "layout"}
# OpenAI reasoning models take max_completion_tokens, and no temperature or top_p but the default.
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")


def checked_settings(settings) -> dict:
    """The run's generation settings, each checked and named when wrong."""
    settings = settings or {}
    if not isinstance(settings, dict):
        raise DomainError("Generation settings are an object.", field="settings")
    unknown = sorted(set(settings) - set(KNOWN))
    if unknown:
        raise DomainError(f"Unknown setting(s): {', '.join(unknown)}; known: {', '.join(KNOWN)}.", field="settings")
    checked = {name: None for name in UNSENDABLE if name in settings and settings[name] is None}
    settings = {name: value for name, value in settings.items() if name not in checked}
    for name in ("temperature", "top_p"):
        if name in settings:
            value, high = settings[name], 2 if name == "temperature" else 1
            if type(value) not in (int, float) or not 0 <= value <= high:
                raise DomainError(f"{name} is a number from 0 to {high}.", field="settings")
            checked[name] = float(value)
    for name, low, high in (("max_tokens", 1, 262_144), ("seed", 0, 2**31 - 1), ("thinking_budget", 0, 262_144),
                            ("image_size", 1, MAX_IMAGE_SIZE)):
        if name in settings:
            value = settings[name]
            if type(value) is not int or not low <= value <= high:
                raise DomainError(f"{name} is a whole number from {low} to {high}.", field="settings")
            checked[name] = value
    if "stop" in settings:
        stop = settings["stop"]
        stop = [stop] if isinstance(stop, str) else stop
        if not isinstance(stop, list) or not 1 <= len(stop) <= MAX_STOP or not all(
                isinstance(s, str) and s for s in stop):
            raise DomainError(f"stop is a text or a list of 1 to {MAX_STOP} texts.", field="settings")
        checked["stop"] = stop
    if "reasoning_effort" in settings:
        if settings["reasoning_effort"] not in REASONING_EFFORTS:
            raise DomainError(f"reasoning_effort is one of {', '.join(REASONING_EFFORTS)}.", field="settings")
        checked["reasoning_effort"] = settings["reasoning_effort"]
    if "enable_thinking" in settings:
        if not isinstance(settings["enable_thinking"], bool):
            raise DomainError("enable_thinking is true or false.", field="settings")
        checked["enable_thinking"] = settings["enable_thinking"]
    if "image_detail" in settings:
        if settings["image_detail"] not in IMAGE_DETAILS:
            raise DomainError(f"image_detail is one of {', '.join(IMAGE_DETAILS)}.", field="settings")
        checked["image_detail"] = settings["image_detail"]
    if "layout" in settings:
        checked["layout"] = checked_layout(settings["layout"])
    return checked


def checked_layout(layout) -> dict:
    """{"images": before_text | after_text, "system": text, "system_from_prompt": bool, "source": text}."""
    if not isinstance(layout, dict) or set(layout) - set(LAYOUT_KEYS):
        raise DomainError(f"layout is an object of {', '.join(LAYOUT_KEYS)}.", field="settings")
    if layout.get("images", IMAGES_FIRST) not in (IMAGES_FIRST, TEXT_FIRST):
        raise DomainError(f"layout images is {IMAGES_FIRST} or {TEXT_FIRST}.", field="settings")
    for name in ("system", "source"):
        if name in layout and not (isinstance(layout[name], str) and layout[name].strip()):
            raise DomainError(f"layout {name} is a text.", field="settings")
    if not isinstance(layout.get("system_from_prompt", False), bool):
        raise DomainError("layout system_from_prompt is true or false.", field="settings")
    if layout.get("system_from_prompt") and "system" in layout:
        raise DomainError("layout: a system text or the system message from the prompt, not both.",
                          field="settings")
    return dict(layout)


def sent_settings(model: ModelSpec, settings: dict) -> dict:
    """Each setting a run's requests carry, as the run page shows it: the run's value over the model's
    registration, "provider default" where neither gives one or the run left it unsent."""
    shown = {name: PROVIDER_DEFAULT for name in UNSENDABLE}
    shown.update({name: value for name, value in effective(model, settings).items() if name != "layout"})
    return {name: PROVIDER_DEFAULT if value is None else value for name, value in shown.items()}


def provider(model: ModelSpec) -> str:
    return (model.config or {}).get("provider") or OPENAI


def is_reasoning_model(model: ModelSpec) -> bool:
    """An OpenAI reasoning model (o1, o3, o4-mini, gpt-5...), or one whose config says it is one."""
    config = model.config or {}
    if "reasoning_model" in config:
        return bool(config["reasoning_model"])
    return provider(model) == OPENAI and bool(_REASONING_MODEL.match(str(config.get("model") or model.name)))


def honoured(model: ModelSpec) -> set[str] | None:
    """The settings the model's adapter honours; None where every setting is moot (the baselines and
    recorded outputs generate nothing; a point-cloud class reads the settings it knows)."""
    if model.adapter == ModelSpec.Adapter.OPENAI_COMPATIBLE:
        return ENDPOINT_SETTINGS[provider(model)]
    if model.adapter == ModelSpec.Adapter.HF_LOCAL:
        return LOCAL_SETTINGS
    return None


def check_supported(model: ModelSpec, settings: dict) -> None:
    """Refuse, naming it, a setting this model cannot honour."""
    kind = (model.config or {}).get("provider")
    if kind not in (None, "", *PROVIDERS):
        raise DomainError(f"{model.name}: config provider is one of {', '.join(PROVIDERS)}, not {kind!r}.",
                          field="model")
    allowed = honoured(model)
    if allowed is None:
        return
    where = (f"{provider(model)} endpoints" if model.adapter == ModelSpec.Adapter.OPENAI_COMPATIBLE
             else "the local transformers adapter")
    settings = {name: value for name, value in settings.items() if value is not None}  # unsent asks nothing
    for name in KNOWN:
        if name in settings and name not in allowed:
            raise DomainError(f"{name} cannot be honoured by {model.name} ({where} take "
                              f"{', '.join(sorted(allowed))}).", field="settings")
    if provider(model) == OPENAI and "reasoning_effort" in settings and not is_reasoning_model(model):
        raise DomainError(f"reasoning_effort: {model.name} is not an OpenAI reasoning model (config "
                          "reasoning_model).", field="settings")
    if is_reasoning_model(model):
        for name, default in (("temperature", 1.0), ("top_p", 1.0)):
            if name in settings and settings[name] != default:
                raise DomainError(f"{name}: {model.name} is a reasoning model; it takes only the default "
                                  f"{name} ({default:g}).", field="settings")
    if provider(model) == GEMINI and {"reasoning_effort", "thinking_budget"} <= set(settings):
        raise DomainError("reasoning_effort and thinking_budget: Gemini takes one or the other.", field="settings")
    if settings.get("enable_thinking") is not None and "thinking_budget" in settings:
        raise DomainError("enable_thinking and thinking_budget: give one.", field="settings")


def effective(model: ModelSpec, settings: dict) -> dict:
    """The settings a request carries: the run's, over the model's registered defaults."""
    values = {"temperature": model.temperature, "max_tokens": model.max_new_tokens, "seed": model.seed}
    return {**values, **settings}


def launch_warnings(model: ModelSpec, repeats: int, settings: dict) -> list[str]:
    if repeats > 1 and honoured(model) is not None and effective(model, settings)["temperature"] == 0:
        return [f"{repeats} repeats at temperature 0 are near copies of one greedy answer: set a temperature "
                "above 0 for independent samples."]
    return []


def repeat_seed(run_seed: int, item_key: str, variant: str, repeat: int) -> int:
    """Repeat k of item i's seed: a hash of (run seed, item, variant, k), a 31-bit integer."""
    digest = hashlib.sha256(f"{run_seed}:{item_key}:{variant}:{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def run_seed(run, item, variant: str, repeat: int) -> int | None:
    """Repeat k of this item's own seed in this run (from the run's seed, else the model's); none where
    the model samples nothing (baselines, recorded outputs)."""
    seed = run.settings.get("seed", run.model.seed)
    if honoured(run.model) is None or seed is None:  # none sampled, or the run leaves the seed unsent
        return None
    return repeat_seed(seed, item.scoring_id, variant, repeat)


def chat_fields(params: dict, kind: str = OPENAI, reasoning_model: bool = False) -> dict:
    """The chat-completions fields of these settings (`effective`, with the repeat's seed) for this
    provider kind. Reasoning models get max_completion_tokens and no sampling fields they refuse; a
    setting that is None is not sent."""
    params = {name: value for name, value in params.items() if value is not None}
    fields = {}
    if reasoning_model:
        if "max_tokens" in params:
            fields["max_completion_tokens"] = params["max_tokens"]
        fields.update({name: params[name] for name in ("temperature", "top_p") if name in params
                       and params[name] == 1.0})
    else:
        fields.update({name: params[name] for name in ("temperature", "top_p", "max_tokens") if name in params})
    if "seed" in params and kind != ANTHROPIC:
        fields["seed"] = params["seed"]
    if "stop" in params:
        fields["stop"] = params["stop"]
    if "reasoning_effort" in params:
        fields["reasoning_effort"] = params["reasoning_effort"]
    if "enable_thinking" in params:
        fields["chat_template_kwargs"] = {"enable_thinking": params["enable_thinking"]}
    if "thinking_budget" in params:
        budget = params["thinking_budget"]
        if kind == GEMINI:
            fields["extra_body"] = {"google": {"thinking_config": {"thinking_budget": budget}}}
        elif budget:
            fields["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return fields
