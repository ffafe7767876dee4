"""What an item's page shows a participant. Humans see what models see: an item's page carries every
piece of context the family's prompt gives a model (modeleval.prompting.prompts.render_prompt): the scene's
world-frame sentences in the prompt's order, the context change as refined, the question with its
options, what the prompt says about the answer, the same images (the mirrored twin where the model's
image is mirrored) and the before/after videos, named as such. Never the gold.

A study with `scene_state: changed` shows each item's scene as its change left it: the viewer's
points, both top-view maps and the objects' boxes are the change's after-state (assets whose meta says
`{"after_state": <change id>}`; the boxes moved by its edit), never the scene before it; the change's
text is shown as in every study."""

from django.db.models import Q
from django.utils import timezone

from benchmarks import option_text, overlays, protocols
from benchmarks.edit_digest import edit_digest
from benchmarks.media import VIEWER_ROLES
from benchmarks.models import Asset, AssetRole, ContextChange, Item
from benchmarks.protocols import Variant
from benchmarks.services import shown_to_people
from benchmarks.uploads import lasting_url
from benchmarks.world_frames import frame_texts
from core.errors import DomainError

from .. import sql
from ..models import EvalSession, ItemRole, Response, SessionItem

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


def shown_choices(entry: SessionItem) -> list[str]:
    return [entry.item.choices[index] for index in entry.choice_order]


def shows_mirrored_image(entry: SessionItem) -> bool:
    return protocols.shows_mirrored(entry.item.tags, Variant.parse(entry.variant))


def question_as_shown(item: Item, order: list[int]) -> str:
    """The question as the page shows it: the model's question word for word, except that options
    written into the question ("(A) Yes (B) No") are listed in the order the buttons show them, so
    the letters read in the question are the letters answered with (benchmarks.option_text, as the
    model's prompt writes them). A question that spells other options than its stored ones is never
    reordered (sessions' plan keeps its order)."""
    return option_text.question_as_shown(item.question, item.choices, [item.choices[i] for i in order])


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
    # the image's own overlays and the item's marks, in the shown image's pixels: what the model's
    # pixels have printed in (benchmarks.overlays; modeleval.prompting.visual_inputs)
    images = [
        {"url": a.file.url, "overlays": overlays.shown_overlays(a, index, item, mirrored)}
        for index, a in enumerate(a for a in assets if a.role in (AssetRole.IMAGE, protocols.FLIPPED_IMAGE_ROLE))
    ]
    videos = {a.meta.get("which"): a for a in assets if a.role == AssetRole.VIDEO}
    # fps (probed on import) lets the player step and sync by whole frames from the start
    pair = (
        {"before": videos["before"].file.url, "after": videos["after"].file.url,
         "fps": videos["before"].meta.get("fps")}
        if {"before", "after"} <= videos.keys()
        else None
    )
    world_frame = frame_texts(item.scene)  # the approved frame only (benchmarks/world_frames.py)
    return {"images": images, "videos": pair, "world_frame": world_frame}


# --- the changed scene (a study's scene_state: changed) --------------------------------------------------

AFTER_STATE_ROLES = (AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC, AssetRole.VIEWER_POINTS)
LISTED = 10


def after_state_assets(change_ids, role: str):
    """The after-state assets of `role` of these changes: a key test on meta `after_state` (`__in` on the
    key: portable, where JSON containment is PostgreSQL's alone)."""
    return Asset.objects.filter(role=role, meta__after_state__in=[int(pk) for pk in change_ids])


def _of_edit(assets, edit):
    """Those made from the change's edit as it is now (meta edit_digest; an unmarked, uploaded one as it is)."""
    return assets.filter(Q(meta__edit_digest=edit_digest(edit)) | Q(meta__edit_digest__isnull=True))


def with_after_state(item_ids) -> list[int]:
    """Those of the items whose change has geometry and an after-state map (the page's plain map) made
    from that geometry as it is now."""
    rows = list(Item.objects.filter(pk__in=list(item_ids)).exclude(change=None).exclude(change__edit=None)
                .values_list("pk", "change_id", "change__edit"))
    digests = {change: edit_digest(edit) for _, change, edit in rows}
    mapped = {int(change) for change, digest in after_state_assets(digests, AssetRole.TOPVIEW_PLAIN).values_list(
        "meta__after_state", "meta__edit_digest") if digest in (None, digests.get(int(change)))}
    return sorted(pk for pk, change, _ in rows if change in mapped)


def check_after_states(scored: list[int], attention: list[int]) -> None:
    """A changed-scene study's items each have a change with geometry and its after-state map; a refusal
    says how many and which do not."""
    wanted = sorted(set(scored) | set(attention))
    lacking = sorted(set(wanted) - set(with_after_state(wanted)))
    if lacking:
        names = [external_id or f"#{pk}" for pk, external_id in
                 Item.objects.filter(pk__in=lacking).order_by("pk").values_list("pk", "external_id")]
        more = f" and {len(names) - LISTED} more" if len(names) > LISTED else ""
        raise DomainError(f"A changed-scene study shows each item's after-state: {len(lacking)} of its {len(wanted)} "
                          f"items have no change with geometry and an after-state map: {', '.join(names[:LISTED])}"
                          f"{more}.", field="scene_state")


def changed_scene(viewer: dict, item: Item) -> dict:
    """The viewer data of the item's scene as its change left it: the after-state's points and maps (None
    where the after-state has none: the scene before the change is never shown), the boxes after the edit."""
    from annotation import services as annotation_services  # the edit's geometry

    change = ContextChange.objects.select_related("scene").get(pk=item.change_id)
    latest = {role: _of_edit(after_state_assets([change.pk], role), change.edit).order_by("-id").first()
              for role in AFTER_STATE_ROLES}
    plain, semantic, points = (latest[role] for role in AFTER_STATE_ROLES)
    boxes = annotation_services.after_state(change).boxes
    return {
        **viewer,
        "points_url": lasting_url(points) if points else None,
        "topview_plain_url": plain.file.url if plain else None,
        "topview_semantic_url": semantic.file.url if semantic else None,
        "map": plain.meta if plain else None,
        "objects": [{"instance_id": box.instance_id, "label": box.label, "center": list(box.center),
                     "size": list(box.size), "yaw": box.yaw} for box in boxes],
    }


# --- which files a participant may read (benchmarks.media's rule; registered in apps.py) -------------


def shown_roles(entry: SessionItem) -> set[str]:
    """The roles of the files an item's page shows (scene_stimulus): the viewer's, the videos, and the
    images or, on a mirrored variant, their twins."""
    image = protocols.FLIPPED_IMAGE_ROLE if shows_mirrored_image(entry) else AssetRole.IMAGE
    return {*VIEWER_ROLES, AssetRole.VIDEO, image}


def _on_screen_now(entry: SessionItem, now) -> bool:
    """The entry is the item on screen (shown, open, before its deadline), the next one (its stimulus
    is fetched ahead), or an answered one the study lets the participant go back to."""
    response = Response.objects.filter(session_id=entry.session_id, item_id=entry.item_id).first()
    if response is None:
        following = sql.first_unshown_entry(entry.session_id)
        return following is not None and following.pk == entry.pk
    if response.answered_at is None:
        return not response.timed_out and response.deadline > now
    return entry.session.study.allow_going_back and entry.role != ItemRole.FAMILIARISATION


def shows_asset(user, asset) -> bool:
    """An active session of the user's, before its deadline, whose page shows the file now: never an
    item not reached yet (beyond the next), and nothing once the session is over or its time is up."""
    now = timezone.now()
    entries = SessionItem.objects.filter(
        session__participant_id=user.pk, session__status=EvalSession.Status.ACTIVE, session__deadline__gt=now,
        item__scene_id=asset.scene_id,
    ).select_related("session__study", "item")
    after = (asset.meta or {}).get("after_state")  # a changed scene: only to a changed-scene study's item of that change
    return any(asset.role in shown_roles(entry) and _on_screen_now(entry, now) and (
        after is None or (entry.session.study.scene_state == "changed" and entry.item.change_id == after))
        for entry in entries)


# --- the next item's files, fetched ahead --------------------------------------------------------------


def following_entry(session_id: int) -> SessionItem | None:
    """The plan entry after the one on screen: the first not shown yet."""
    return sql.first_unshown_entry(session_id)


def viewer_points_bytes(scene_id: int) -> int:
    """The size of the scene's viewer point file (0 when it has none); a change's after-state is not it."""
    files = shown_to_people(Asset.objects.filter(scene_id=scene_id, role=AssetRole.VIEWER_POINTS))
    sizes = files.values_list("size", flat=True)
    return max(sizes, default=0) or 0
