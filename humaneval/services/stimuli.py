"""What an item's page shows a participant. Humans see what models see: an item's page carries every
piece of context the family's prompt gives a model (modeleval.prompts.render_prompt): the scene's
world-frame sentences in the prompt's order, the context change as refined, the question with its
options, what the prompt says about the answer, the same images (the mirrored twin where the model's
image is mirrored) and the before/after videos, named as such. Never the gold."""

import re
from string import ascii_uppercase as LETTERS

from benchmarks import protocols
from benchmarks.models import AssetRole, Item
from benchmarks.protocols import Variant

from ..models import SessionItem

# What a family's prompt tells the model about the form of an open answer (Hypo3D Fig. 11,
# Spatial457 Figs. 9-15).
OPEN_ANSWER_HINTS = {
    "hypo3d": "a single word or a short phrase",
    "spatial457": "a phrase, an integer between 0-10 for counting questions, or 'Yes' or 'No'",
}
# What M3-Verse's prompt tells the model about how many options are correct (Figs. 18-19).
ANSWER_COUNT_NOTES = {
    "m3verse": {
        "single": "There is only one correct option for this question.",
        "multi": "There is more than one correct option for this question.",
    },
}
# Options written into the question itself, as CausalSpatial does: "... (A) Yes (B) No (C) Not sure".
_OPTION_IN_QUESTION = re.compile(r"\(([A-J])\)\s*([^()]+?)(?=\s*\([A-J]\)|$)", re.DOTALL)


def shown_choices(entry: SessionItem) -> list[str]:
    return [entry.item.choices[index] for index in entry.choice_order]


def shows_mirrored_image(entry: SessionItem) -> bool:
    return protocols.shows_mirrored(entry.item.tags, Variant.parse(entry.variant))


def question_as_shown(item: Item, order: list[int]) -> str:
    """The question as the page shows it: the model's question word for word, except that options
    written into the question ("(A) Yes (B) No") are listed in the order the buttons show them, so
    the letters read in the question are the letters answered with."""
    if not order or order == sorted(order):
        return item.question
    listed = list(_OPTION_IN_QUESTION.finditer(item.question))
    texts = [match.group(2).strip() for match in listed]
    letters = "".join(match.group(1) for match in listed)
    if texts != [str(c).strip() for c in item.choices] or letters != LETTERS[: len(texts)]:
        return item.question
    rewritten = " ".join(f"({LETTERS[i]}) {texts[index]}" for i, index in enumerate(order))
    return item.question[: listed[0].start()] + rewritten + item.question[listed[-1].end():]


def item_context(family: str, entry: SessionItem) -> dict:
    """The words of one plan entry as the evaluator reads them: the question and options in the
    order shown, the context change (the refined text the model gets), and what the family's prompt
    says about the answer."""
    item = entry.item
    return {
        "question": question_as_shown(item, entry.choice_order),
        "answer_format": item.answer_format,
        "choices": shown_choices(entry),
        "context_change": item.change.text if item.change else None,
        "answer_hint": "" if item.choices else OPEN_ANSWER_HINTS.get(family, ""),
        "answer_count_note": ANSWER_COUNT_NOTES.get(family, {}).get(item.answer_format, "")
        if item.choices else "",
    }


def stimulus_files(item: Item, mirrored: bool = False) -> dict:
    """What the page shows of the item's scene besides the viewer: its images (with their overlays;
    the mirrored twins when `mirrored`, as the model's flipped variant gets them), the before/after
    video pair (before is the model's first video) and the world-frame sentences (in the order the
    model's prompt joins them)."""
    if item.scene is None:
        return {"images": [], "videos": None, "world_frame": []}
    assets = list(item.scene.assets.filter(role__in=[AssetRole.IMAGE, AssetRole.VIDEO]).order_by("id"))
    if mirrored:
        assets = [protocols.ensure_flipped_twin(a) if a.role == AssetRole.IMAGE else a for a in assets]
    images = [
        {"url": a.file.url, "overlays": a.meta.get("overlays", [])}
        for a in assets
        if a.role in (AssetRole.IMAGE, protocols.FLIPPED_IMAGE_ROLE)
    ]
    videos = {a.meta.get("which"): a for a in assets if a.role == AssetRole.VIDEO}
    # fps (probed on import) lets the player step and sync by whole frames from the start
    pair = (
        {"before": videos["before"].file.url, "after": videos["after"].file.url,
         "fps": videos["before"].meta.get("fps")}
        if {"before", "after"} <= videos.keys()
        else None
    )
    world_frame = list(item.scene.world_frames.order_by("id").values_list("text", flat=True))
    return {"images": images, "videos": pair, "world_frame": world_frame}
