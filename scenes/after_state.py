"""A change's after-state ("the changed scene"): the scene's points and boxes as they are after the
change's edit (`ContextChange.edit`, schema in annotation/change_geometry.py), built from the scene's scan
(scans.load_scene_points) and stored as the scene's viewer file and plain and semantic top views, the same
formats as the before-state's (processing.viewer_points: the levels file, or an octree over the viewer's
point budget; topview.render_topview from the same seeded sample).

- an edited object's points (by instance id) move with its box: scaled about the box's bottom centre along
  its own axes, turned about the vertical through its centre, translated (change_geometry.moved's order);
- a removed object's points are gone;
- an added box is drawn with the points of an object of the scene with the same label, fitted into the new
  box along its axes, or, when the scene has none, as points on the box's surface in the label's colour;
  each added object gets a new instance id above the scene's.

The assets are the scene's, with meta `after_state: <change id>` and `edit_digest` (the sha256 of the
edit's JSON), which keeps them from people and from a run's default inputs (services.shown_to_people);
`after_state_assets(change)` (benchmarks.selectors) gives the current ones. Building again for the same
edit keeps them (one of each role); a changed edit replaces them in one transaction (their files once it
commits). Sent by `scenes.tasks.make_after_state` (a core.Job, kind `after_state`) when a change with
an edit is approved (review/services.py) and on a reviewer's request.

Its camera views (`after_state_view_set`, a `multi_view:N` or `egocentric:N` set) are rendered when a run
with `scene_state: changed` asks for them, from the cameras the scene before its change is shown from: the
scene's posed frames where a set of N shows them (their poses in the aligned frame), else the poses its own
renders take (renders.room_poses of the scan as it was), so that the two conditions differ in the change
alone. They are `render` assets with the same marks, removed with the rest when the edit changes.
"""

import hashlib
import math

import numpy as np
from django.db import transaction

from benchmarks.edit_digest import edit_digest
from benchmarks.models import Asset, AssetRole, ContextChange
from benchmarks.selectors import AFTER_STATE_KEY, AFTER_STATE_ROLES, current_after_state
from benchmarks.services import delete_assets, scene_asset, store_asset

from . import renders
from .processing import _topview_sample, viewer_points
from .rgbd_frames import posed_view_set
from .scans import load_scene_points
from .topview import render_topview

# An added box drawn as its surface: points per square metre (at least MIN, at most MAX points a box).
SURFACE_DENSITY, MIN_SURFACE_POINTS, MAX_SURFACE_POINTS = 4000, 400, 50_000
SURFACE_SEED = 47


def label_colour(label: str) -> tuple[int, int, int]:
    """A label's colour, the same every time (and mid-bright, so it shows on the map's background)."""
    digest = hashlib.sha256(label.lower().encode()).digest()
    return tuple(int(60 + b * 150 / 255) for b in digest[:3])


# --- the geometry ----------------------------------------------------------------------------------


def _rotation(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s], [s, c]])


def _scale(entry: dict) -> np.ndarray:
    scale = entry.get("scale", 1.0)
    return np.array(scale if isinstance(scale, list | tuple) else [scale] * 3, dtype=np.float64)


def to_local(xyz: np.ndarray, box: dict) -> np.ndarray:
    """Points in the box's own axes, from its bottom centre."""
    cx, cy, cz = box["center"]
    local = np.asarray(xyz, dtype=np.float64) - [cx, cy, cz - box["size"][2] / 2]
    local[:, :2] = local[:, :2] @ _rotation(float(box.get("yaw") or 0.0))  # rows times R: R^T applied
    return local


def from_local(local: np.ndarray, box: dict) -> np.ndarray:
    """Points given in a box's own axes (from its bottom centre) placed in the scene."""
    cx, cy, cz = box["center"]
    out = np.array(local, dtype=np.float64)
    out[:, :2] = out[:, :2] @ _rotation(float(box.get("yaw") or 0.0)).T
    return out + [cx, cy, cz - box["size"][2] / 2]


def moved_box(box: dict, entry: dict) -> dict:
    """The box after an object entry (change_geometry.moved, on the dicts processing uses)."""
    scale = _scale(entry)
    size = [float(s) * float(k) for s, k in zip(box["size"], scale, strict=True)]
    dx, dy, dz = entry.get("translation") or (0.0, 0.0, 0.0)
    bottom = float(box["center"][2]) - float(box["size"][2]) / 2
    return {**box, "center": [float(box["center"][0]) + dx, float(box["center"][1]) + dy, bottom + size[2] / 2 + dz],
            "size": size, "yaw": float(box.get("yaw") or 0.0) + float(entry.get("rotation") or 0.0)}


def boxes_after(objects: list[dict], edit: dict) -> list[dict]:
    """The objects' boxes as the edit leaves them (removed ones gone, added ones last, numbered after the
    scene's highest instance id as apply_to_points numbers them when the scan has no higher one)."""
    entries = {e["instance_id"]: e for e in edit.get("objects", [])}
    after = [obj if (entry := entries.get(obj["instance_id"])) is None else moved_box(obj, entry)
             for obj in objects if not entries.get(obj["instance_id"], {}).get("removed")]
    next_id = max([int(o["instance_id"]) for o in objects], default=0) + 1
    return after + [{"instance_id": next_id + i, "label": added["label"], "center": list(added["center"]),
                     "size": list(added["size"]), "yaw": float(added.get("yaw") or 0.0)}
                    for i, added in enumerate(edit.get("added", []))]


def surface_points(box: dict, colour) -> tuple[np.ndarray, np.ndarray]:
    """Points on the box's six faces (uniform by area, seeded) in one colour."""
    sx, sy, sz = (float(s) for s in box["size"])
    faces = np.array([sy * sz, sy * sz, sx * sz, sx * sz, sx * sy, sx * sy])
    n = int(min(MAX_SURFACE_POINTS, max(MIN_SURFACE_POINTS, faces.sum() * SURFACE_DENSITY)))
    rng = np.random.default_rng(SURFACE_SEED)
    face = rng.choice(6, n, p=faces / faces.sum())  # x-, x+, y-, y+, bottom, top
    local = np.column_stack([rng.uniform(-0.5, 0.5, n) * sx, rng.uniform(-0.5, 0.5, n) * sy, rng.uniform(0, 1, n) * sz])
    axis, high = face // 2, face % 2 == 1
    local[axis == 0, 0] = np.where(high[axis == 0], sx / 2, -sx / 2)
    local[axis == 1, 1] = np.where(high[axis == 1], sy / 2, -sy / 2)
    local[axis == 2, 2] = np.where(high[axis == 2], sz, 0.0)
    return from_local(local, box), np.tile(np.asarray(colour, dtype=np.uint8), (n, 1))


def apply_to_points(xyz, rgb, instance, objects: list[dict], edit: dict):
    """The after-state: (xyz, rgb, instance, objects after, changed instance ids) for the scene's points and
    objects ({instance_id, label, center, size, yaw}) under the edit."""
    xyz, rgb = np.asarray(xyz, dtype=np.float64), np.asarray(rgb, dtype=np.uint8)
    instance = np.asarray(instance)
    entries = {e["instance_id"]: e for e in edit.get("objects", [])}
    keep = np.ones(len(xyz), dtype=bool)
    out_xyz = xyz.copy()
    after, changed = [], []
    for obj in objects:
        entry = entries.get(obj["instance_id"])
        if entry is None:
            after.append(obj)
            continue
        mask = instance == obj["instance_id"]
        changed.append(obj["instance_id"])
        if entry.get("removed"):
            keep &= ~mask
            continue
        new_box = moved_box(obj, entry)
        out_xyz[mask] = from_local(to_local(xyz[mask], obj) * _scale(entry), new_box)
        after.append(new_box)
    parts = [(out_xyz[keep], rgb[keep], instance[keep])]
    next_id = max([int(o["instance_id"]) for o in objects] + [int(instance.max()) if len(instance) else 0]) + 1
    for added in edit.get("added", []):
        box = {"instance_id": next_id, "label": added["label"], "center": list(added["center"]),
               "size": list(added["size"]), "yaw": float(added.get("yaw") or 0.0)}
        source = next((o for o in objects if str(o["label"]).lower() == added["label"].lower()
                       and np.any(instance == o["instance_id"])), None)
        if source is not None:  # an instance of its class from the scene, fitted into the new box
            mask = instance == source["instance_id"]
            fit = np.array(box["size"], dtype=np.float64) / np.maximum(np.array(source["size"], dtype=np.float64), 1e-6)
            points, colours = from_local(to_local(xyz[mask], source) * fit, box), rgb[mask]
        else:
            points, colours = surface_points(box, label_colour(added["label"]))
        parts.append((points, colours, np.full(len(points), next_id, dtype=instance.dtype if len(instance) else np.int32)))
        after.append(box)
        changed.append(next_id)
        next_id += 1
    return (np.concatenate([p[0] for p in parts]).astype(np.float32), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]), after, changed)


# --- the stored after-state ------------------------------------------------------------------------


def after_state_files(change: ContextChange) -> list[tuple[str, str, bytes, dict]]:
    """(role, filename, content, meta) of the change's after-state, built from its scene's scan."""
    xyz, rgb, instance, objects = load_scene_points(change.scene)
    xyz, rgb, instance, after, changed = apply_to_points(xyz, rgb, instance, objects, change.edit)
    points, points_meta = viewer_points(xyz, rgb, instance)
    sample = _topview_sample(len(xyz))
    top_xyz, top_rgb = xyz[sample], rgb[sample]
    made_from = {AFTER_STATE_KEY: change.pk, "edit_digest": edit_digest(change.edit), "changed": changed}
    name = f"{change.scene.external_id}_after_{change.pk}"
    files = [(AssetRole.VIEWER_POINTS, f"{name}.hlpc", points, points_meta)]
    for role, kind, semantic in ((AssetRole.TOPVIEW_PLAIN, "plain", False),
                                 (AssetRole.TOPVIEW_SEMANTIC, "semantic", True)):
        content, meta = render_topview(top_xyz, top_rgb, after, semantic=semantic)
        files.append((role, f"{name}_topview_{kind}.png", content, meta))
    return [(role, filename, content, {**meta, **made_from}) for role, filename, content, meta in files]


def build_after_state(change_id: int) -> list[Asset]:
    """Store the change's after-state (viewer file, plain and semantic top views); [] for a change without
    an edit (its earlier after-state goes) or whose scene has no scan. Its current assets are kept when they were made from the same
    edit; otherwise (a changed edit, a role missing) they are replaced, never added to."""
    change = ContextChange.objects.select_related("scene").filter(pk=change_id).first()
    if change is None:
        return []
    if not change.edit:
        with transaction.atomic():
            delete_assets(list(Asset.objects.select_for_update().filter(meta__after_state=change_id)))
        return []
    if scene_asset(change.scene, AssetRole.POINT_CLOUD) is None:
        return []  # no scan to build it from (the job's report says so)
    kept = list(current_after_state(change).order_by("role"))
    if sorted(a.role for a in kept) == sorted(AFTER_STATE_ROLES):
        return kept
    files = after_state_files(change)
    with transaction.atomic():
        locked = ContextChange.objects.select_for_update().filter(pk=change_id).first()
        if locked is None or edit_digest(locked.edit) != edit_digest(change.edit):
            return []  # the edit changed while building: the task sent for it builds that one
        delete_assets(list(Asset.objects.select_for_update().filter(scene_id=change.scene_id, meta__after_state=change_id)))
        return [store_asset(change.scene, role, filename, content, meta) for role, filename, content, meta in files]


def _camera_poses(change: ContextChange, xyz, kind: str, count: int) -> tuple[list, list[dict], str]:
    """The cameras the scene before the change is shown from for a set of `count` (see the module's
    opening): OpenGL camera-to-world poses in the aligned frame, the cameras' intrinsics, and where they
    come from."""
    frames = posed_view_set(change.scene, count)
    if frames:
        aligned = np.asarray(((change.scene.meta or {}).get("alignment") or {}).get("matrix", np.eye(4)), dtype=float)
        poses = [aligned @ np.asarray(frame.pose, dtype=float) @ renders.OPENCV_TO_OPENGL for frame in frames]
        return poses, [frame.intrinsics for frame in frames], "posed_frames"
    poses = renders.room_poses(xyz, kind, count)
    return poses, [renders.intrinsics()] * count, "renders"


def after_state_view_set(change_id: int, name: str) -> list[Asset]:
    """The change's after-state views of the set `name` in view order, rendered and stored first when it
    has no whole set made from its edit as it is now; [] for a change without an edit or a scan.
    RenderError for a set name that is not one."""
    kind, count = renders.parse_view_set(name)
    change = ContextChange.objects.select_related("scene").filter(pk=change_id).first()
    if change is None or not change.edit or scene_asset(change.scene, AssetRole.POINT_CLOUD) is None:
        return []
    digest = edit_digest(change.edit)
    stored = sorted(Asset.objects.filter(scene_id=change.scene_id, role=AssetRole.RENDER, meta__set=name,
                                         meta__after_state=change.pk, meta__edit_digest=digest),
                    key=lambda asset: asset.meta.get("index", 0))
    if len(stored) == count:
        return stored
    xyz, rgb, instance, objects = load_scene_points(change.scene)
    poses, cameras, source = _camera_poses(change, xyz, kind, count)
    after_xyz, after_rgb, *_ = apply_to_points(xyz, rgb, instance, objects, change.edit)
    camera = cameras[0]  # one capture, one colour camera: every view through the first's lens
    pictures = renders.render_views(after_xyz, after_rgb, poses, size=(int(camera["width"]), int(camera["height"])),
                                    yfov=2 * math.atan(camera["height"] / 2 / camera["fy"]))
    with transaction.atomic():
        locked = ContextChange.objects.select_for_update().filter(pk=change_id).first()
        if locked is None or edit_digest(locked.edit) != digest:
            return []  # the edit changed while rendering: its own after-state replaces this one
        delete_assets(list(Asset.objects.select_for_update().filter(
            scene_id=change.scene_id, role=AssetRole.RENDER, meta__set=name, meta__after_state=change.pk)))
        return [store_asset(change.scene, AssetRole.RENDER, f"{change.scene.external_id}_after_{change.pk}_{kind}-"
                            f"{count}-{index}.png", picture,
                            {"set": name, "index": index, "pose": pose.round(6).tolist(), "intrinsics": camera,
                             "cameras_from": source, AFTER_STATE_KEY: change.pk, "edit_digest": digest})
                for index, (picture, pose) in enumerate(zip(pictures, poses, strict=True))]
