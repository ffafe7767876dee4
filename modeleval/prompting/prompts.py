"""Prompt templates as data, one per family and condition (Hypo3D Figs. 11-13 and its no-CoT ablation;
VLMEvalKit multiple choice for 3DSRBench; JSON answers for CausalSpatial and Spatial457; M3-Verse's
prompt stating one or several correct options) and their rendering."""

import hashlib
from dataclasses import dataclass, field

from django.db import transaction

from benchmarks import option_text, protocols
from benchmarks.models import Item
from benchmarks.option_text import lettered
from benchmarks.protocols import VANILLA, Variant
from benchmarks.world_frames import frame_texts

from ..models import ModelSpec, PromptTemplate
from . import visual_inputs
from .visual_inputs import PointCloudInput, VisualInput


def _per_kind(caption: str, top_view: str, three_d: str) -> dict:
    """A Hypo3D sentence per visual input: the LLM's, the 2D VLM's (top views) and the 3D VLM's (point
    clouds and camera views of the scan, as LLaVA-3D's multi-view frames)."""
    return {"caption_only": caption, "top_view_plain": top_view, "top_view_semantic": top_view,
            "point_cloud": three_d, "multi_view": three_d, "egocentric": three_d}


# Hypo3D Fig. 11: only the sentence that introduces the scene differs between model kinds.
HYPO3D_SCENE_INTRO = _per_kind(
    "Given a 3D scene description, mentally match it with the specified orientation.",
    "Given a top-view of a 3D scene, mentally rotate the image to align with the orientation.",
    "Given a 3D scene, mentally rotate the scene to align with the specified orientation.")
# Figs. 12 and 13 as printed name the top view; a run shown another input is told what it is shown.
HYPO3D_NO_FRAME_INTRO = _per_kind("Given a 3D scene description and a context change,",
                                  "Given a top-view of a 3D scene and a context change,",
                                  "Given a 3D scene and a context change,")
HYPO3D_NO_CHANGE_INTRO = _per_kind(
    "Given a 3D scene description, mentally match it with the specified orientation.",
    "Given a top-view of a 3D scene, mentally rotate the image to align with the specified orientation.",
    "Given a 3D scene, mentally rotate the scene to align with the specified orientation.")
# M3-Verse Fig. 19: the frames come first, before-state frames then after-state frames.
M3VERSE_SCENE_INTRO = {
    "video_frames": "The first half of the frames is the first video (the 'before' state); the second half is "
                    "the second video (the 'after' state).\n",
}
ANSWER_TAIL = "The answer should be a single word or a short phrase.\n\nThe answer is:"
# A choice item of a family without its own template (VLMEvalKit's multiple-choice prompt).
CHOICE_TAIL = "Answer with the option's letter from the given choices directly."

DEFAULT_TEMPLATES = [
    ("hypo3d", "main", HYPO3D_SCENE_INTRO,
     "{scene_intro}{scene_text}\n\nScene Orientation: {world_frame}\n\nNow, given a context change, imagine how "
     "the scene would appear after the change has been applied. Then, answer a question based on the modified "
     "scene.\n\nContext Change: {change} Question: {question}\n\n" + ANSWER_TAIL),
    ("hypo3d", "no-world-frame", HYPO3D_NO_FRAME_INTRO,
     "{scene_intro} imagine how the scene would appear after the change "
     "has been applied. Then, answer a question based on the modified scene.{scene_text}\n\n"
     "Context Change: {change} Question: {question}\n\n" + ANSWER_TAIL),
    ("hypo3d", "no-context-change", HYPO3D_NO_CHANGE_INTRO,
     "{scene_intro}{scene_text}\n\nScene Orientation: {world_frame}\n\nThen, answer a question based on the aligned scene."
     "\n\nQuestion: {question}\n\n" + ANSWER_TAIL),
    ("hypo3d", "no-cot", {},
     "Scene orientation: {world_frame}{scene_text}\nContext Change: {change}\nQuestion: {question}\nAnswer:"),
    # VLMEvalKit's multiple-choice prompt, which 3DSRBench's official evaluation uses.
    ("3dsrbench", "main", {},
     "Question: {question}\nOptions:\n{choices}\nPlease select the correct answer from the options above."),
    # CausalSpatial §4: options (with "Not sure") are in the question text; reasoning, then JSON.
    ("causalspatial", "main", {},
     "{question}\n\nReason step by step about what the motion would cause, then put your answer in this JSON "
     "format: {{'Reasoning': '<reasoning>', 'Answer': '<option letter>'}}"),
    # Spatial457 Figs. 9-15: describe, reason briefly, answer as JSON.
    ("spatial457", "main", {},
     "You are an intelligent chatbot designed to answer questions based on an image. Your task is to analyze "
     "the images, identify attributes of the objects and then determine the answer to the question.\n\n"
     "Step 1: Identify the objects mentioned in the question, noting each object's shape, color, size, "
     "location and pose.\nStep 2: Use the identified details to form a brief reasoning process for answering "
     "the question. Answer with a phrase, an integer between 0-10 for counting questions, or 'Yes' or 'No'."
     "\n\nOutput your response using this JSON format: {{ 'Reasoning': '<reasoning>', 'Answer': '<answer>'}}"
     "\n\n{question}"),
    # M3-Verse Figs. 18-19: the prompt states whether one or several options are correct.
    ("m3verse", "main", M3VERSE_SCENE_INTRO,
     "Your task is to answer questions based on the provided videos and options.\n{scene_intro}"
     "Question: {question}\noptions: {choices}\nReturn ONLY the letter(s) corresponding to the correct "
     "option(s) (e.g., A, B, C, or A,C for multiple correct answers)\n{answer_count}"),
]
M3VERSE_ANSWER_COUNT = {
    "single": "There is only one correct option for this question.",
    "multi": "There are more than one correct option for this question.",
}


@dataclass
class InferenceRequest:
    """What one model call receives: the exact prompt, images as PNG/JPEG bytes (or a scan's points
    for a point-cloud input), the choices in the order shown, and the protocol variant
    (benchmarks.protocols) they come from."""

    prompt: str
    images: list[bytes] = field(default_factory=list)
    point_cloud: PointCloudInput | None = None
    choices: list[str] = field(default_factory=list)
    variant: str = ""
    # Provider parameters of the run (Run.settings): temperature, max_tokens, reasoning_effort, thinking_budget.
    params: dict = field(default_factory=dict)

    @property
    def prompt_sha256(self) -> str:
        return hashlib.sha256(self.prompt.encode()).hexdigest()


@transaction.atomic
def ensure_default_templates() -> None:
    for family, condition, intro, text in DEFAULT_TEMPLATES:
        PromptTemplate.objects.get_or_create(
            family=family, condition=condition, version=1, defaults={"text": text, "scene_intro": intro}
        )


def latest_template(family: str, condition: str = "main") -> PromptTemplate | None:
    ensure_default_templates()
    return PromptTemplate.objects.filter(family=family, condition=condition).order_by("-version").first()


def render_prompt(template: PromptTemplate, item: Item, kind: str, choices: list[str] | None = None) -> str:
    """The template filled for this item shown the visual input `kind` (its scene intro says what the
    model is given); `choices` are the options in the order shown (default: as stored): in the
    template's options slot, or, for a template without one (CausalSpatial's), in the question in the
    family's wording, as benchmarks.option_text writes them for every reader."""
    scene = item.scene
    frames = " ".join(frame_texts(scene))  # the approved frame only (benchmarks/world_frames.py)
    caption_only = kind == ModelSpec.Modality.CAPTION_ONLY
    scene_text = f"\n\nScene description: {scene.caption}" if caption_only and scene else ""
    shown = item.choices if choices is None else choices
    question = option_text.with_options(template.family, item.question, item.choices, shown,
                                        option_text.has_option_slot(template.text))
    return template.text.format(
        scene_intro=template.scene_intro.get(kind, ""),
        scene_text=scene_text,
        world_frame=frames,
        change=item.change.text if item.change else "",
        question=question,
        choices=lettered(shown),
        answer_count=M3VERSE_ANSWER_COUNT.get(item.answer_format, ""),
    )


def with_examples(prompt: str, examples: list[dict] | None) -> str:
    """In-context examples ({question, answer}) put before the prompt, in the order given."""
    if not examples:
        return prompt
    shots = "".join(f"Example question: {e['question']}\nExample answer: {e['answer']}\n\n" for e in examples)
    return shots + prompt


def template_for(run, item: Item) -> PromptTemplate | None:
    """The run's prompt for this item: the template named for the item's value of the run's `by` tag
    (Run.prompt_templates), else the run's template."""
    per_tag = run.prompt_templates or {}
    chosen = (per_tag.get("templates") or {}).get(str((item.tags or {}).get(per_tag.get("by"), "")))
    if not chosen:
        return run.prompt_template
    cache = run.__dict__.setdefault("_templates_by_id", {})
    if chosen["id"] not in cache:
        cache[chosen["id"]] = PromptTemplate.objects.get(pk=chosen["id"])
    return cache[chosen["id"]]


def build_request(
    model: ModelSpec, template: PromptTemplate | None, item: Item, variant: Variant = VANILLA,
    examples: list[dict] | None = None, params: dict | None = None, visual_input: str = "",
) -> InferenceRequest:
    """The prompt and stimulus of one item under one protocol variant (rotated options, mirrored image),
    after the run's in-context examples, with the run's provider parameters, shown the run's visual
    input (default: the model's modality)."""
    shown = VisualInput.parse(visual_input or visual_inputs.model_default(model))
    choices = protocols.shown_choices(item.choices, variant)
    if template:
        prompt = render_prompt(template, item, shown.kind, choices)
    elif choices:
        prompt = f"{option_text.question_as_shown(item.question, item.choices, choices)}\n{lettered(choices)}\n{CHOICE_TAIL}"
    else:
        prompt = item.question
    prompt = with_examples(prompt, examples)
    mirrored = protocols.shows_mirrored(item.tags, variant)
    points = None
    if shown.kind == ModelSpec.Modality.POINT_CLOUD and item.scene is not None and not model.withhold_stimulus:
        points = visual_inputs.point_cloud(item.scene)
    return InferenceRequest(prompt=prompt, images=visual_inputs.images(shown, model, item, mirrored),
                            point_cloud=points, choices=choices, variant=variant.name, params=dict(params or {}))
