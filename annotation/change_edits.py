"""A change's geometric edit on the database's side: the scene's boxes, room and approved world frame
as change_geometry's plain values; the edit checked for shape (400 naming the field at fault) and against
the text (change_checks, 400 listing each disagreement) before any row is written; the after-state and the
answers it decides (change_answers). Crowd writes (services.add_description, submit_assignment) and review's
edits (review/geometry.py, through services) all call `checked_edit`."""

from typing import NamedTuple

from benchmarks.models import AssetRole, ContextChange, Scene, WorldFrame
from benchmarks.services import scene_asset
from benchmarks.world_frames import approved
from core.errors import DomainError

from . import change_answers, change_checks
from . import change_geometry as geo
from .checks import changed_object


def scene_boxes(scene: Scene) -> list[geo.Box]:
    return [geo.Box(o.instance_id, o.label.lower(), o.center, o.size, o.yaw) for o in scene.scene_objects.all()]


def scene_room(scene: Scene, boxes: list[geo.Box]) -> geo.Room | None:
    """The room: its boxes' extent, widened to the plain top view's point bounds where the scene has one."""
    if not boxes:
        return None
    top_view = scene_asset(scene, AssetRole.TOPVIEW_PLAIN)
    bounds = (top_view.meta or {}).get("bounds") if top_view is not None else None
    return geo.room_of(boxes, bounds if isinstance(bounds, list) and len(bounds) == 4 else None)


def scene_frame(scene: Scene, boxes: list[geo.Box], room: geo.Room | None) -> tuple[geo.WorldAxes | None, WorldFrame | None]:
    """The axes of the scene's approved world frame (its oldest one whose anchor gives a direction)."""
    by_id = {b.instance_id: b for b in boxes}
    for frame in approved(scene.world_frames.select_related("anchor")):
        anchor = by_id.get(frame.anchor.instance_id)
        axes = geo.world_axes(anchor, room, frame.side) if anchor is not None and room is not None else None
        if axes is not None:
            return axes, frame
    return None, None


class SceneGeometry:
    """What one scene's checks and answers read, loaded once."""

    def __init__(self, scene: Scene):
        self.scene = scene
        self.boxes = scene_boxes(scene)
        self.room = scene_room(scene, self.boxes)
        self.axes, self.frame = scene_frame(scene, self.boxes, self.room)


def _shape(scene_geometry: SceneGeometry, raw) -> dict:
    """The edit in its stored shape, in aligned coordinates, its object ids the scene's; 400 otherwise."""
    try:
        edit, frame = geo.parse_edit(raw)
    except geo.EditError as exc:
        raise DomainError(f"{exc.field} {exc.message}", field="edit", path=exc.field) from None
    ids = {b.instance_id for b in scene_geometry.boxes}
    for i, entry in enumerate(edit["objects"]):
        if entry["instance_id"] not in ids:
            path = f"edit.objects[{i}].instance_id"
            raise DomainError(f"{path} names no object of this scene ({entry['instance_id']}).", field="edit",
                              path=path)
    if frame == "world":
        if scene_geometry.axes is None:
            raise DomainError("edit.frame is 'world', but this scene has no approved world frame; send the edit in "
                              "the scene's aligned coordinates.", field="edit", path="edit.frame")
        edit = {**edit, **geo.edit_from_world(edit, scene_geometry.axes)}
    return edit


def with_world(scene_geometry: SceneGeometry, edit: dict) -> dict:
    """The stored edit: aligned, and in the approved world frame where the scene has one."""
    if scene_geometry.axes is None:
        return {**edit, "world": None}
    frame = scene_geometry.frame
    return {**edit, "world": {"anchor": frame.anchor.instance_id, "side": frame.side,
                              **geo.edit_in_world(edit, scene_geometry.axes)}}


def edit_problems(scene_geometry: SceneGeometry, text: str, change_type: str, edit: dict) -> list[str]:
    """Each disagreement between the words and the (stored-shape) edit; [] when they agree."""
    if scene_geometry.room is None:
        return []
    labels = sorted({b.label for b in scene_geometry.boxes})
    named = changed_object(labels, text) or None
    return change_checks.check_edit(text, change_type, scene_geometry.boxes, edit, scene_geometry.room,
                                    scene_geometry.axes, named)


def checked_edit(scene: Scene, text: str, change_type: str, raw, scene_geometry: SceneGeometry | None = None):
    """The edit to store with a change (None for none), after its shape and every check of the text against
    it: a DomainError on `edit` otherwise (the shape's path in `path`, the disagreements in `problems`)."""
    if raw is None:
        return None
    scene_geometry = scene_geometry or SceneGeometry(scene)
    edit = _shape(scene_geometry, raw)
    problems = edit_problems(scene_geometry, text, change_type, edit)
    if problems:
        raise DomainError(" ".join(problems), field="edit", problems=problems)
    return with_world(scene_geometry, edit)


def check_text_against_edit(change: ContextChange, text: str) -> None:
    """A new text for a change that carries an edit (a reviewer's refinement, the author's resubmission)
    must still agree with the edit."""
    if not change.edit:
        return
    edit = {"objects": change.edit.get("objects", []), "added": change.edit.get("added", [])}
    problems = edit_problems(SceneGeometry(change.scene), text, change.change_type, edit)
    if problems:
        raise DomainError(" ".join(problems), field="text", problems=problems)


class AfterState(NamedTuple):
    boxes: list[geo.Box]           # the scene's boxes after the change (before it, for a change without an edit)
    axes: geo.WorldAxes | None     # the approved world frame's
    touched: list                  # keys of the boxes the edit moved, turned, scaled or added
    gone: list[str]                # labels of the objects it removed


def after_state(change: ContextChange) -> AfterState:
    scene_geometry = SceneGeometry(change.scene)
    edit = change.edit or {}
    pairs = geo.edited_boxes(scene_geometry.boxes, edit)
    return AfterState(geo.apply_edit(scene_geometry.boxes, edit), scene_geometry.axes,
                      [a.key for _, a in pairs if a is not None], [b.label for b, a in pairs if a is None])


def derive_answer(change: ContextChange, question: str, state: AfterState | None = None) -> str | None:
    """The answer the geometry after the change gives `question` (change_answers), or None."""
    state = state or after_state(change)
    return change_answers.derived_answer(question, state.boxes, state.axes, state.touched)


def draft_questions(change: ContextChange, limit: int = 8) -> list[dict]:
    """Questions of the supported shapes about the change's objects, each with its derived answer."""
    state = after_state(change)
    return change_answers.draft_questions(state.boxes, state.axes, state.touched, state.gone, limit)
