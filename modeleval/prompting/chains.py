"""Chained runs: M3-Verse's caption-then-reason baseline (HCTR, App. B.2 Figs. 20-22). Each of the
scene's videos is split into `clips` clips of `clip_frames` frames; a captioning model describes each
clip (the clip prompt) and then summarises the clip captions (the summary prompt); the run's model
answers from the summaries as text (the run's own prompt, with {context}, {question}, {options_text}).

The captions and summaries are stored once (ChainOutput), keyed by the captioning model, the hash of
the two step prompts and the clip sampling, the scene and the video's state: every reasoning model run
on the same scenes with the same captioner reuses them and sends no caption request.

Run.inputs["chain"] = {"caption_model": {"id", "name"}, "clips" (per video) or "clip_length" (the video's
frames per clip, M3-Verse's clip length), "clip_frames" (frames sampled per clip), "clip_prompt" and
"summary_prompt" ({"id", "condition", "version"}), "context" (how the summaries are put together: a
text with {before} and {after}, the videos' states), "settings" (the captioner's generation settings),
"sha256"}; at launch the captioner is named by id or name (default: the run's model) and the prompts by
condition (default: hctr-clip, hctr-summary)."""

import hashlib
import json
import math

from benchmarks import option_text, protocols
from benchmarks.models import AssetRole, Item
from core.errors import DomainError
from scenes.frames import frame_set

from ..clients.adapters import load_adapter, model_settings_key
from ..models import ChainOutput, ModelSpec, PromptTemplate
from . import generation
from .prompts import InferenceRequest, latest_template, lettered, with_examples
from .visual_inputs import VisualInput

DEFAULTS = {"clips": 4, "clip_frames": 8, "clip_prompt": "hctr-clip", "summary_prompt": "hctr-summary",
            "context": "This is the first video: {before}\nThis is the second video: {after}"}
KNOWN = ("caption_model", "clips", "clip_length", "clip_frames", "clip_prompt", "summary_prompt", "context", "settings")
SUMMARY = -1  # ChainOutput.index of a video's summary
TEXT_ADAPTERS = (ModelSpec.Adapter.OPENAI_COMPATIBLE, ModelSpec.Adapter.HF_LOCAL)


def _captioner(value, model: ModelSpec) -> ModelSpec:
    if value in (None, ""):
        found = model
    elif isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        found = ModelSpec.objects.filter(pk=int(value)).first()
    else:
        found = ModelSpec.objects.filter(name=str(value)).first()
    if found is None or found.adapter not in TEXT_ADAPTERS:
        raise DomainError("chain caption_model is a registered OpenAI-compatible or local model (id or name).",
                          field="inputs")
    return found


def _template(family: str, condition, what: str) -> PromptTemplate:
    template = latest_template(family, condition) if isinstance(condition, str) else None
    if template is None:
        raise DomainError(f"chain {what}: no prompt template {condition!r} for {family}.", field="inputs")
    return template


def checked(chain, model: ModelSpec, benchmark, shown: VisualInput) -> dict:
    if not isinstance(chain, dict):
        raise DomainError("chain is an object: {caption_model, clips, clip_frames, ...}.", field="inputs")
    unknown = sorted(set(chain) - set(KNOWN))
    if unknown:
        raise DomainError(f"chain: unknown field(s) {', '.join(unknown)}; known: {', '.join(KNOWN)}.",
                          field="inputs")
    if shown.kind != ModelSpec.Modality.VIDEO_FRAMES:
        raise DomainError(f"A chained run captions the scene's videos; {model.name} is shown {shown} "
                          "(choose video_frames).", field="inputs")
    merged = {**DEFAULTS, **chain}
    for name, high in (("clips", 64), ("clip_frames", 256)):
        if type(merged[name]) is not int or not 1 <= merged[name] <= high:
            raise DomainError(f"chain {name} is a whole number from 1 to {high}.", field="inputs")
    if "clip_length" in merged and (type(merged["clip_length"]) is not int or merged["clip_length"] < 1):
        raise DomainError("chain clip_length is a whole number of the video's frames per clip.", field="inputs")
    if not isinstance(merged["context"], str) or not merged["context"]:
        raise DomainError("chain context is a text with {before} and {after}.", field="inputs")
    captioner = _captioner(chain.get("caption_model"), model)
    settings = generation.checked_settings(merged.get("settings"))
    generation.check_supported(captioner, settings)
    clip = _template(benchmark.family, merged["clip_prompt"], "clip_prompt")
    summary = _template(benchmark.family, merged["summary_prompt"], "summary_prompt")
    size = list((captioner.config or {}).get("frame_size", (448, 448)))
    clips = {"clip_length": merged["clip_length"]} if "clip_length" in merged else {"clips": merged["clips"]}
    digest = hashlib.sha256(json.dumps([clip.text, summary.text, clips, merged["clip_frames"], size, settings],
                                       sort_keys=True).encode()).hexdigest()
    return {"caption_model": {"id": captioner.pk, "name": captioner.name}, **clips,
            "clip_frames": merged["clip_frames"], "context": merged["context"], "settings": settings,
            "clip_prompt": {"id": clip.pk, "condition": clip.condition, "version": clip.version},
            "summary_prompt": {"id": summary.pk, "condition": summary.condition, "version": summary.version},
            "sha256": digest}


def _seconds(value: float) -> str:
    return f"{value:.1f}s"


def _ask(adapter, prompt: str, images: list[bytes], settings: dict) -> str:
    return adapter.answer(InferenceRequest(prompt=prompt, images=images, params=dict(settings)), None)


def clip_count(chain: dict, video) -> int:
    """`clips` per video, or as many clips of `clip_length` of the video's frames as it holds (at most 64)."""
    if not chain.get("clip_length"):
        return chain["clips"]
    return max(1, min(64, math.ceil(int((video.meta or {}).get("frames") or 0) / chain["clip_length"])))


def video_summary(chain: dict, scene, video, benchmark_id: int) -> str:
    """The stored summary of one video (its clips captioned and summarised the first time)."""
    state = str((video.meta or {}).get("which") or f"video-{video.pk}")
    key = {"model_id": chain["caption_model"]["id"], "prompt_sha256": chain["sha256"], "scene": scene,
           "state": state}
    stored = dict(ChainOutput.objects.filter(**key).values_list("index", "text"))
    if SUMMARY in stored:
        return stored[SUMMARY]
    captioner = ModelSpec.objects.get(pk=chain["caption_model"]["id"])
    adapter = load_adapter(captioner.pk, model_settings_key(captioner), benchmark_id)
    clip_text = PromptTemplate.objects.get(pk=chain["clip_prompt"]["id"]).text
    summary_text = PromptTemplate.objects.get(pk=chain["summary_prompt"]["id"]).text
    clips, per_clip = clip_count(chain, video), chain["clip_frames"]
    size = tuple((captioner.config or {}).get("frame_size", (448, 448)))
    duration = float((video.meta or {}).get("duration") or 0)
    frames = frame_set(video, clips * per_clip, size)  # clip k holds the frames of its k-th slice of the video
    captions = []
    for k in range(clips):
        if k not in stored:
            prompt = clip_text.format(duration=_seconds(duration), timestamps=(
                f"{_seconds(duration * k / clips)} - {_seconds(duration * (k + 1) / clips)}"))
            stored[k] = _ask(adapter, prompt, list(frames[k * per_clip:(k + 1) * per_clip]), chain["settings"])
            ChainOutput.objects.bulk_create([ChainOutput(**key, index=k, text=stored[k])], ignore_conflicts=True)
        captions.append(stored[k])
    summary = _ask(adapter, summary_text.format(captions="\n".join(captions)), [], chain["settings"])
    ChainOutput.objects.bulk_create([ChainOutput(**key, index=SUMMARY, text=summary)], ignore_conflicts=True)
    # two workers that summarised at once: the first stored is the one every run reads
    return ChainOutput.objects.get(**key, index=SUMMARY).text


def request(run, template, item: Item, variant, params: dict) -> InferenceRequest:
    """The answer step: the run's prompt filled with the videos' summaries as context, no pictures."""
    chain = run.inputs["chain"]
    summaries = {}
    if item.scene is not None:
        for video in item.scene.assets.filter(role=AssetRole.VIDEO).order_by("id"):
            state = str((video.meta or {}).get("which") or f"video-{video.pk}")
            summaries[state] = video_summary(chain, item.scene, video, run.benchmark_id)
    if not summaries:
        raise LookupError(f"item {item.scoring_id} has no scene video to caption")
    try:
        context = chain["context"].format(**summaries)
    except (KeyError, IndexError):  # states other than before/after: the summaries in video order
        context = "\n".join(summaries.values())
    choices = protocols.shown_choices(item.choices, variant)
    question = option_text.question_as_shown(item.question, item.choices, choices)
    prompt = template.text.format(context=context, question=question, options_text=lettered(choices),
                                  choices=lettered(choices)) if template else context
    return InferenceRequest(prompt=with_examples(prompt, run.examples), choices=choices, variant=variant.name,
                            params=dict(params))
