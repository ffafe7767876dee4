"""Top views turned into a scene's world frame: Hypo3D Table 11's aligned map ("the top-view map is
physically aligned with the world frame, i.e. no mental alignment required").

A map reads front at the top, back at the bottom, left and right as the image's own (scoring/hypo3d.py
reads "top" as "front"). The scene's approved world frame says where its anchor lies ("The desk is to
the left of the scene"), so the aligned map turns the scene about the vertical through its centre by
k quarter turns, k in 0..3 maximising the dot product of the anchor's direction (from the scene's
centre) with its side's direction on the image (summed over the approved frames: a staff frame written
one sentence per side is several). The points and object boxes are turned, not the PNG, so the same
renderer (topview.render_topview) writes upright labels and the map data (label pixels, boxes) fits
the new image.

The maps are TOPVIEW_PLAIN / TOPVIEW_SEMANTIC assets with meta `aligned: true` (so people never see
them: services.shown_to_people), `rotation_quarter_turns: k`, `world_frame` (the newest approved frame
they were made from) and `world_frames` (every approved frame's id). They are made with the scene's
other top views when its scan is processed (scenes.tasks.process_scene: an imported scan's frames
arrive approved), and when a frame is approved (`world_frames_changed`, from review/frames.py): the
maps of frames no longer approved are deleted in the approval's transaction, and
`scenes.tasks.make_aligned_topviews` renders the new ones after it commits. `manage.py
make_aligned_topviews` makes them for scenes approved before (and the demo's rooms). An aligned map
uploaded by hand (no `world_frames` in its meta) is left alone.
"""

import math

import numpy as np
from django.db import transaction

from benchmarks.models import Asset, AssetRole, Scene, WorldFrame
from benchmarks.services import delete_assets

from .topview import render_topview

# Each side's direction on the map, as world (x, y) before the render: the image shows x to the
# right and y up (topview.py), so front is +y, back -y, left -x, right +x.
SIDE_DIRECTIONS = {"front": (0.0, 1.0), "back": (0.0, -1.0), "left": (-1.0, 0.0), "right": (1.0, 0.0)}
ROLES = (AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC)


# --- the geometry ----------------------------------------------------------------------------------


def turn(x, y, k: int):
    """(x, y) turned k quarter turns counter-clockwise about the origin, exactly (no sines)."""
    k %= 4
    if k == 0:
        return x, y
    if k == 1:
        return -y, x
    if k == 2:
        return -x, -y
    return y, -x


def quarter_turns(anchors) -> int:
    """The k in 0..3 that brings each anchor towards its side: `anchors` are (dx, dy, side), the anchor's
    centre relative to the scene's; the sum of dot products is maximised, a tie goes to the smaller k
    (an anchor on the centre leaves the scene as it is)."""
    scores = []
    for k in range(4):
        score = 0.0
        for dx, dy, side in anchors:
            tx, ty = turn(float(dx), float(dy), k)
            sx, sy = SIDE_DIRECTIONS[side]
            score += tx * sx + ty * sy
        scores.append(round(score, 9))
    return scores.index(max(scores))


def scene_centre(xyz: np.ndarray, objects: list[dict]) -> tuple[float, float]:
    """The centre of the points' footprint (the map's centre), or of the objects' when there are no points."""
    if len(xyz):
        lo, hi = xyz[:, :2].min(axis=0), xyz[:, :2].max(axis=0)
    elif objects:
        centres = np.array([o["center"][:2] for o in objects], dtype=float)
        lo, hi = centres.min(axis=0), centres.max(axis=0)
    else:
        return 0.0, 0.0
    return float(lo[0] + hi[0]) / 2, float(lo[1] + hi[1]) / 2


def turn_scene(xyz: np.ndarray, objects: list[dict], k: int, centre) -> tuple[np.ndarray, list[dict]]:
    """The points and objects turned k quarter turns about the vertical through `centre`: an object's
    centre turns with the points and its yaw grows by k * 90 degrees (its size is its own)."""
    cx, cy = centre
    xyz = np.asarray(xyz, dtype=np.float64)
    x, y = turn(xyz[:, 0] - cx, xyz[:, 1] - cy, k)
    turned = np.column_stack([x + cx, y + cy, xyz[:, 2]]) if len(xyz) else xyz.reshape(0, 3)
    moved = []
    for obj in objects:
        ox, oy = turn(float(obj["center"][0]) - cx, float(obj["center"][1]) - cy, k)
        yaw = math.remainder(float(obj.get("yaw") or 0.0) + k * math.pi / 2, 2 * math.pi)
        moved.append({**obj, "center": [ox + cx, oy + cy, float(obj["center"][2])], "yaw": yaw})
    return turned, moved


def render_aligned(xyz, rgb, objects: list[dict], anchors) -> tuple[int, list[tuple[str, bytes, dict]]]:
    """k and the plain and semantic maps of the scene turned into its world frame: `anchors` are
    (x, y, side) of each approved frame's anchor centre. Returns (k, [(role, png, meta)])."""
    xyz = np.asarray(xyz, dtype=np.float64).reshape(-1, 3)
    centre = scene_centre(xyz, objects)
    k = quarter_turns([(x - centre[0], y - centre[1], side) for x, y, side in anchors])
    turned, moved = turn_scene(xyz, objects, k, centre)
    maps = []
    for role, semantic in ((AssetRole.TOPVIEW_PLAIN, False), (AssetRole.TOPVIEW_SEMANTIC, True)):
        content, meta = render_topview(turned, rgb, moved, semantic=semantic)
        maps.append((role, content, meta))
    return k, maps


# --- the scene's maps ------------------------------------------------------------------------------


def approved_frames(scene_id: int) -> list[WorldFrame]:
    """The scene's approved frames, oldest first (benchmarks/world_frames.py)."""
    return list(WorldFrame.objects.filter(scene_id=scene_id, status=WorldFrame.Status.APPROVED)
                .select_related("anchor").order_by("pk"))


def made_here(assets):
    """The aligned maps made by this module among `assets` (an uploaded aligned map has no `world_frames`)."""
    return assets.filter(role__in=ROLES, meta__aligned=True, meta__has_key="world_frames")


def aligned_files(scene: Scene, xyz, rgb, objects: list[dict], frames: list[WorldFrame] | None = None) -> list:
    """(role, filename, png, meta) of the scene's two aligned maps, from the same points and objects as
    its other top views; [] when no frame is approved."""
    frames = approved_frames(scene.pk) if frames is None else frames
    if not frames:
        return []
    anchors = [(f.anchor.center_x, f.anchor.center_y, f.side) for f in frames]
    k, maps = render_aligned(xyz, rgb, objects, anchors)
    made_from = {"aligned": True, "rotation_quarter_turns": k, "world_frame": frames[-1].pk,
                 "world_frames": [f.pk for f in frames]}
    kinds = {AssetRole.TOPVIEW_PLAIN: "plain", AssetRole.TOPVIEW_SEMANTIC: "semantic"}
    return [(role, f"{scene.external_id}_topview_{kinds[role]}_aligned.png", content, {**meta, **made_from})
            for role, content, meta in maps]


def is_current(asset: Asset, frame_ids: list[int]) -> bool:
    return list((asset.meta or {}).get("world_frames") or []) == frame_ids


def remove_superseded_maps(scene_id: int) -> set[str]:
    """Delete the scene's aligned maps made from frames that are no longer its approved ones (their
    files once the transaction commits); returns the roles of the current maps kept. Deleting rather
    than filtering keeps one rule for choosing a map (the newest, visual_inputs.latest_top_view) and
    leaves no map turned by a frame no longer in force, not even while the new one is being rendered."""
    frame_ids = [f.pk for f in approved_frames(scene_id)]
    maps = list(made_here(Asset.objects.filter(scene_id=scene_id)))
    delete_assets([a for a in maps if not is_current(a, frame_ids)])
    return {a.role for a in maps if is_current(a, frame_ids)}


def world_frames_changed(scene_id: int) -> None:
    """A frame of the scene was approved or rejected (call it inside that transaction): the aligned maps
    of frames no longer approved go now, and where the scene has an approved frame without its two
    maps, a task renders them once the transaction commits (approving the frame in force again keeps
    its maps; a rejected submission changes nothing)."""
    from . import dispatch

    kept = remove_superseded_maps(scene_id)
    if kept != set(ROLES) and WorldFrame.objects.filter(scene_id=scene_id, status=WorldFrame.Status.APPROVED).exists():
        transaction.on_commit(lambda: dispatch.send_aligned_topviews(scene_id))
