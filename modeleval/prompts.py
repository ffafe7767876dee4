"""Prompt templates as data (Hypo3D Figs. 11-13 and its no-CoT ablation) and their rendering."""

import hashlib
from dataclasses import dataclass, field

from django.db import transaction

from benchmarks.models import Item
from benchmarks.video import sample_frames

from .models import ModelSpec, PromptTemplate

# Hypo3D Fig. 11: only the sentence that introduces the scene differs between model kinds.
HYPO3D_SCENE_INTRO = {
    "caption": "Given a 3D scene description, mentally match it with the specified orientation.",
    "topview_plain": "Given a top-view of a 3D scene, mentally rotate the image to align with the orientation.",
    "topview_semantic": "Given a top-view of a 3D scene, mentally rotate the image to align with the orientation.",
}
ANSWER_TAIL = "The answer should be a single word or a short phrase.\n\nThe answer is:"

DEFAULT_TEMPLATES = [
    ("hypo3d", "main", HYPO3D_SCENE_INTRO,
     "{scene_intro}{scene_text}\n\nScene Orientation: {world_frame}\n\nNow, given a context change, imagine how "
     "the scene would appear after the change has been applied. Then, answer a question based on the modified "
     "scene.\n\nContext Change: {change} Question: {question}\n\n" + ANSWER_TAIL),
    ("hypo3d", "no-world-frame", {},
     "Given a top-view of a 3D scene and a context change, imagine how the scene would appear after the change "
     "has been applied. Then, answer a question based on the modified scene.{scene_text}\n\n"
     "Context Change: {change} Question: {question}\n\n" + ANSWER_TAIL),
    ("hypo3d", "no-context-change", {},
     "Given a top-view of a 3D scene, mentally rotate the image to align with the specified orientation."
     "{scene_text}\n\nScene Orientation: {world_frame}\n\nThen, answer a question based on the aligned scene."
     "\n\nQuestion: {question}\n\n" + ANSWER_TAIL),
    ("hypo3d", "no-cot", {},
     "Scene orientation: {world_frame}{scene_text}\nContext Change: {change}\nQuestion: {question}\nAnswer:"),
]


@dataclass
class InferenceRequest:
    """What one model call receives: the exact prompt, images as PNG/JPEG bytes, the choices shown."""

    prompt: str
    images: list[bytes] = field(default_factory=list)
    choices: list[str] = field(default_factory=list)

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


def render_prompt(template: PromptTemplate, item: Item, modality: str) -> str:
    scene = item.scene
    frames = " ".join(frame.text for frame in scene.world_frames.all()) if scene else ""
    scene_text = f"\n\nScene description: {scene.caption}" if modality == "caption" and scene else ""
    choices = "\n".join(f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(item.choices))
    return template.text.format(
        scene_intro=template.scene_intro.get(modality, ""),
        scene_text=scene_text,
        world_frame=frames,
        change=item.change.text if item.change else "",
        question=item.question,
        choices=choices,
    )


def stimulus_images(model: ModelSpec, item: Item) -> list[bytes]:
    """The images the model is shown for this item (none for text-only or vision-blind models)."""
    if model.withhold_stimulus or model.modality == ModelSpec.Modality.CAPTION or item.scene is None:
        return []
    if model.modality == ModelSpec.Modality.VIDEO_FRAMES:
        n = int(model.config.get("n_frames", 8))
        size = tuple(model.config.get("frame_size", (448, 448)))
        videos = item.scene.assets.filter(role="video").order_by("id")  # before, then after
        if not videos:
            raise LookupError(f"scene {item.scene.external_id} has no video")
        frames = []
        for video in videos:
            with video.file.open("rb") as handle:
                frames += sample_frames(handle.read(), n, size)
        return frames
    # The latest map of a top-view modality; every image of the scene for `image`.
    assets = item.scene.assets.filter(role=model.modality)
    assets = list(assets.order_by("id") if model.modality == ModelSpec.Modality.IMAGE else assets.order_by("-id")[:1])
    if not assets:
        raise LookupError(f"scene {item.scene.external_id} has no {model.modality} asset")
    images = []
    for asset in assets:
        with asset.file.open("rb") as handle:
            images.append(handle.read())
    return images


def build_request(model: ModelSpec, template: PromptTemplate | None, item: Item) -> InferenceRequest:
    prompt = render_prompt(template, item, model.modality) if template else item.question
    return InferenceRequest(prompt=prompt, images=stimulus_images(model, item), choices=list(item.choices))
