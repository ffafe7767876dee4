"""A context change as geometry, Django-free: the edit's shape, boxes before and after it, the
scene's world frame and what boxes say about each other. Plain dicts and tuples in and out.

The edit, as stored on `ContextChange.edit` (aligned coordinates: metres, z up; yaw and rotation in radians,
counter-clockwise seen from above):

    {"objects": [{"instance_id": 3,              # a SceneObject of the change's scene, once each
                  "translation": [dx, dy, dz],   # default [0, 0, 0]
                  "rotation": 0.0,               # about the vertical through the box's centre; default 0
                  "scale": 1.2 | [sx, sy, sz],   # > 0, along the box's own axes, about its bottom centre
                  "removed": false}],            # true: the object is gone (then no transform)
     "added": [{"label": "lamp", "center": [x, y, z], "size": [sx, sy, sz], "yaw": 0.0}],
     "world": null | {"anchor": 1, "side": "left", "origin": [x, y], "front": [fx, fy], "right": [rx, ry],
                      "objects": [... translation as [right, front, up] ...],
                      "added": [... center as [right, front, up] from origin, yaw from world right ...]}}

A client may send the edit in the world frame instead (`"frame": "world"`); it is stored converted.
`world` is derived on write where the scene has an approved world frame: the anchor lies on the side
named, seen from the centre of the room; right, front and up make a right-handed frame.
"""

import math
from dataclasses import dataclass, replace

MAX_OBJECTS, MAX_ADDED = 20, 5
MAX_TRANSLATION_M, MAX_SIZE_M, MAX_SCALE = 50.0, 30.0, 10.0
OBJECT_KEYS = {"instance_id", "translation", "rotation", "scale", "removed"}
ADDED_KEYS = {"label", "center", "size", "yaw"}
SIDES = ("front", "back", "left", "right")
# Parts of the room that are not objects one moves things against or into.
STRUCTURE = {"floor", "ceiling", "wall", "walls", "room"}
# The eight directions in the world frame, from the front counter-clockwise, as scoring/hypo3d.py
# normalises answers ("front left", never "left front").
DIRECTIONS = ("front", "front left", "left", "back left", "back", "back right", "right", "front right")


class EditError(ValueError):
    """A malformed edit: `field` is its path ("edit.objects[0].scale"), the message says why."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


@dataclass(frozen=True)
class Box:
    instance_id: int | None
    label: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw: float = 0.0

    @property
    def bottom(self) -> float:
        return self.center[2] - self.size[2] / 2

    @property
    def top(self) -> float:
        return self.center[2] + self.size[2] / 2

    @property
    def volume(self) -> float:
        return self.size[0] * self.size[1] * self.size[2]

    @property
    def key(self):
        return self.instance_id if self.instance_id is not None else ("added", self.label, self.center)


def box_of(obj: dict) -> Box:
    """A box from {"instance_id", "label", "center", "size", "yaw"} (what scene_boxes gives)."""
    return Box(obj.get("instance_id"), obj["label"], tuple(map(float, obj["center"])),
               tuple(map(float, obj["size"])), float(obj.get("yaw") or 0.0))


# --- the edit's shape ----------------------------------------------------------------------------


def _number(value, field: str, low=None, high=None, positive=False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise EditError(field, "must be a finite number.")
    if positive and value <= 0:
        raise EditError(field, "must be greater than 0.")
    if (low is not None and value < low) or (high is not None and value > high):
        raise EditError(field, f"must lie between {low:g} and {high:g}.")
    return float(value)


def _vector(value, field: str, bound: float, positive=False) -> list[float]:
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise EditError(field, "must be a list of three numbers [x, y, z].")
    low = None if positive else -bound
    return [_number(v, f"{field}[{i}]", low, bound, positive) for i, v in enumerate(value)]


def _mapping(value, field: str, allowed: set) -> dict:
    if not isinstance(value, dict):
        raise EditError(field, "must be an object.")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise EditError(f"{field}.{unknown[0]}", f"is not part of an edit (allowed: {', '.join(sorted(allowed))}).")
    return value


def _object_edit(raw, field: str) -> dict:
    raw = _mapping(raw, field, OBJECT_KEYS)
    if isinstance(raw.get("instance_id"), bool) or not isinstance(raw.get("instance_id"), int):
        raise EditError(f"{field}.instance_id", "must be the instance id (an integer) of an object of the scene.")
    removed = raw.get("removed", False)
    if not isinstance(removed, bool):
        raise EditError(f"{field}.removed", "must be true or false.")
    translation = _vector(raw.get("translation", [0, 0, 0]), f"{field}.translation", MAX_TRANSLATION_M)
    rotation = _number(raw.get("rotation", 0.0), f"{field}.rotation", -4 * math.pi, 4 * math.pi)
    scale = raw.get("scale", 1.0)
    scale = (_number(scale, f"{field}.scale", high=MAX_SCALE, positive=True) if not isinstance(scale, list | tuple)
             else _vector(scale, f"{field}.scale", MAX_SCALE, positive=True))
    moves = any(translation) or rotation or scale not in (1.0, [1.0, 1.0, 1.0])
    if removed and moves:
        raise EditError(field, "a removed object takes no translation, rotation or scale.")
    if not removed and not moves:
        raise EditError(field, "changes nothing: give a translation, rotation, scale or removed: true.")
    return {"instance_id": raw["instance_id"], "translation": translation, "rotation": rotation, "scale": scale,
            "removed": removed}


def _added_box(raw, field: str) -> dict:
    raw = _mapping(raw, field, ADDED_KEYS)
    label = raw.get("label")
    if not isinstance(label, str) or not label.strip() or len(label) > 100:
        raise EditError(f"{field}.label", "must name the added object (1 to 100 characters).")
    for key in ("center", "size"):
        if key not in raw:
            raise EditError(f"{field}.{key}", "is required for an added box.")
    return {"label": label.strip().lower(), "center": _vector(raw["center"], f"{field}.center", 1000.0),
            "size": _vector(raw["size"], f"{field}.size", MAX_SIZE_M, positive=True),
            "yaw": _number(raw.get("yaw", 0.0), f"{field}.yaw", -4 * math.pi, 4 * math.pi)}


def parse_edit(raw) -> tuple[dict, str]:
    """The edit in its stored shape (defaults filled in) and the frame it was given in ("aligned" or
    "world"); EditError on the first thing wrong with it."""
    raw = _mapping(raw, "edit", {"objects", "added", "frame"})
    frame = raw.get("frame", "aligned")
    if frame not in ("aligned", "world"):
        raise EditError("edit.frame", "must be 'aligned' (the scene's coordinates) or 'world'.")
    objects, added = raw.get("objects", []), raw.get("added", [])
    for key, value, most in (("objects", objects, MAX_OBJECTS), ("added", added, MAX_ADDED)):
        if not isinstance(value, list):
            raise EditError(f"edit.{key}", "must be a list.")
        if len(value) > most:
            raise EditError(f"edit.{key}", f"holds at most {most} entries.")
    objects = [_object_edit(o, f"edit.objects[{i}]") for i, o in enumerate(objects)]
    ids = [o["instance_id"] for o in objects]
    for i, instance_id in enumerate(ids):
        if instance_id in ids[:i]:
            raise EditError(f"edit.objects[{i}].instance_id", f"object {instance_id} is edited twice; give one entry.")
    added = [_added_box(a, f"edit.added[{i}]") for i, a in enumerate(added)]
    if not objects and not added:
        raise EditError("edit", "changes nothing: give objects to transform or remove, or a box to add.")
    return {"objects": objects, "added": added}, frame


def scale_of(entry: dict) -> tuple[float, float, float]:
    scale = entry.get("scale", 1.0)
    return tuple(scale) if isinstance(scale, list | tuple) else (scale, scale, scale)


# --- before and after ----------------------------------------------------------------------------


def moved(box: Box, entry: dict) -> Box:
    """The box with an object entry's transform: scaled about its bottom centre, turned, translated."""
    sx, sy, sz = scale_of(entry)
    size = (box.size[0] * sx, box.size[1] * sy, box.size[2] * sz)
    dx, dy, dz = entry.get("translation", (0, 0, 0))
    z = box.bottom + size[2] / 2
    return replace(box, center=(box.center[0] + dx, box.center[1] + dy, z + dz), size=size,
                   yaw=box.yaw + entry.get("rotation", 0.0))


def apply_edit(boxes: list[Box], edit: dict) -> list[Box]:
    """The scene's boxes after the edit: removed ones gone, edited ones transformed, added ones last."""
    entries = {e["instance_id"]: e for e in edit.get("objects", [])}
    after = []
    for box in boxes:
        entry = entries.get(box.instance_id)
        if entry is None:
            after.append(box)
        elif not entry.get("removed"):
            after.append(moved(box, entry))
    return after + [Box(None, a["label"], tuple(a["center"]), tuple(a["size"]), a.get("yaw", 0.0))
                    for a in edit.get("added", [])]


def edited_boxes(boxes: list[Box], edit: dict) -> list[tuple[Box | None, Box | None]]:
    """(before, after) for every object the edit touches: after None for a removal, before None for an addition."""
    by_id = {b.instance_id: b for b in boxes}
    pairs = []
    for entry in edit.get("objects", []):
        before = by_id.get(entry["instance_id"])
        if before is not None:
            pairs.append((before, None if entry.get("removed") else moved(before, entry)))
    return pairs + [(None, Box(None, a["label"], tuple(a["center"]), tuple(a["size"]), a.get("yaw", 0.0)))
                    for a in edit.get("added", [])]


# --- the room --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Room:
    low: tuple[float, float, float]
    high: tuple[float, float, float]
    floor_z: float

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.low[0] + self.high[0]) / 2, (self.low[1] + self.high[1]) / 2)


def room_of(boxes: list[Box], xy_bounds=None) -> Room:
    """The room: the extent of the scene's boxes (widened to the point cloud's [xmin, ymin, xmax, ymax]
    where known); the floor is the top of the boxes labelled floor, else the lowest bottom of any box."""
    corners = [c for b in boxes for c in footprint(b)]
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    if xy_bounds:
        xs += [xy_bounds[0], xy_bounds[2]]
        ys += [xy_bounds[1], xy_bounds[3]]
    low_z, high_z = min(b.bottom for b in boxes), max(b.top for b in boxes)
    floors = [b.top for b in boxes if b.label.lower() == "floor"]
    return Room((min(xs), min(ys), low_z), (max(xs), max(ys), high_z), max(floors) if floors else low_z)


# --- the world frame -------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorldAxes:
    origin: tuple[float, float]
    front: tuple[float, float]
    right: tuple[float, float]

    def vector(self, dx: float, dy: float) -> tuple[float, float]:
        """An aligned floor-plane vector as (right, front)."""
        return (dx * self.right[0] + dy * self.right[1], dx * self.front[0] + dy * self.front[1])

    def aligned(self, r: float, f: float) -> tuple[float, float]:
        return (r * self.right[0] + f * self.front[0], r * self.right[1] + f * self.front[1])

    @property
    def turn(self) -> float:
        """The angle of world right in aligned coordinates: world yaw = aligned yaw - turn."""
        return math.atan2(self.right[1], self.right[0])


def world_axes(anchor: Box, room: Room, side: str) -> WorldAxes | None:
    """The frame in which the anchor lies on `side` of the room's centre; None when the anchor sits at it."""
    cx, cy = room.centre
    dx, dy = anchor.center[0] - cx, anchor.center[1] - cy
    length = math.hypot(dx, dy)
    if length < 1e-6 or side not in SIDES:
        return None
    sx, sy = dx / length, dy / length
    # z up, right-handed: left = up x front, so front = (left_y, -left_x) and right = (front_y, -front_x)
    front = {"front": (sx, sy), "back": (-sx, -sy), "left": (sy, -sx), "right": (-sy, sx)}[side]
    return WorldAxes((cx, cy), front, (front[1], -front[0]))


def edit_in_world(edit: dict, axes: WorldAxes) -> dict:
    """The stored edit's world-frame form: translations as [right, front, up], added boxes' centres from the
    room's centre, yaws from world right."""
    objects = [{**e, "translation": [*map(_round, axes.vector(*e["translation"][:2])), e["translation"][2]]}
               for e in edit.get("objects", [])]
    added = [{**a, "center": [*map(_round, axes.vector(a["center"][0] - axes.origin[0],
                                                       a["center"][1] - axes.origin[1])), a["center"][2]],
              "yaw": _round(a["yaw"] - axes.turn)} for a in edit.get("added", [])]
    return {"origin": list(map(_round, axes.origin)), "front": list(map(_round, axes.front)),
            "right": list(map(_round, axes.right)), "objects": objects, "added": added}


def edit_from_world(edit: dict, axes: WorldAxes) -> dict:
    """A world-frame edit as aligned coordinates (the inverse of edit_in_world's vectors)."""
    objects = [{**e, "translation": [*axes.aligned(*e["translation"][:2]), e["translation"][2]]}
               for e in edit.get("objects", [])]
    added = []
    for a in edit.get("added", []):
        x, y = axes.aligned(a["center"][0], a["center"][1])
        added.append({**a, "center": [x + axes.origin[0], y + axes.origin[1], a["center"][2]],
                      "yaw": a["yaw"] + axes.turn})
    return {"objects": objects, "added": added}


def _round(value: float) -> float:
    return round(value, 6)


def direction(axes: WorldAxes, of: Box, to: Box) -> str | None:
    """Where `of` lies from `to` in the world frame: one of DIRECTIONS (45 degree sectors), None when
    their centres coincide on the floor plane."""
    r, f = axes.vector(of.center[0] - to.center[0], of.center[1] - to.center[1])
    if math.hypot(r, f) < 1e-6:
        return None
    angle = math.degrees(math.atan2(-r, f)) % 360  # counter-clockwise from front: left is 90
    return DIRECTIONS[int(((angle + 22.5) % 360) // 45)]


def holds(axes: WorldAxes, of: Box, to: Box, side: str) -> bool:
    """`of` is to `side` of `to`: within 67.5 degrees of that direction (a diagonal counts for both)."""
    found = direction(axes, of, to)
    return found is not None and side in found.split()


# --- boxes against boxes ----------------------------------------------------------------------------


def footprint(box: Box) -> list[tuple[float, float]]:
    """The box's four floor-plane corners, counter-clockwise."""
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    hx, hy = box.size[0] / 2, box.size[1] / 2
    return [(box.center[0] + c * x - s * y, box.center[1] + s * x + c * y)
            for x, y in ((-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy))]


def _clip(subject: list, edge_a, edge_b) -> list:
    def inside(p):
        return (edge_b[0] - edge_a[0]) * (p[1] - edge_a[1]) - (edge_b[1] - edge_a[1]) * (p[0] - edge_a[0]) >= 0

    def crossing(p, q):
        x1, y1, x2, y2 = *edge_a, *edge_b
        x3, y3, x4, y4 = *p, *q
        d = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4)
        t = ((x1 - x3) * (y3 - y4) - (y1 - y3) * (x3 - x4)) / d
        return (x1 + t * (x2 - x1), y1 + t * (y2 - y1))

    out = []
    for i, p in enumerate(subject):
        q = subject[(i + 1) % len(subject)]
        if inside(q):
            if not inside(p):
                out.append(crossing(p, q))
            out.append(q)
        elif inside(p):
            out.append(crossing(p, q))
    return out


def _area(polygon: list) -> float:
    return abs(sum(p[0] * q[1] - q[0] * p[1] for p, q in zip(polygon, polygon[1:] + polygon[:1], strict=True))) / 2


def footprint_overlap(a: Box, b: Box) -> float:
    """The area (m^2) the two oriented footprints share (Sutherland-Hodgman on the floor plane)."""
    polygon, clip = footprint(a), footprint(b)
    for i in range(4):
        if not polygon:
            return 0.0
        polygon = _clip(polygon, clip[i], clip[(i + 1) % 4])
    return _area(polygon) if len(polygon) >= 3 else 0.0


def overlap_fraction(a: Box, b: Box, contact: float = 0.0) -> float:
    """The volume the boxes share over the smaller one's volume (0 to 1); z overlap up to `contact`
    metres (one resting on the other) does not count."""
    z = min(a.top, b.top) - max(a.bottom, b.bottom) - contact
    smaller = min(a.volume, b.volume)
    if z <= 0 or smaller <= 0:
        return 0.0
    return min(1.0, footprint_overlap(a, b) * z / smaller)


def contains_xy(box: Box, x: float, y: float, margin: float = 0.0) -> bool:
    """(x, y) lies on the box's footprint (widened by `margin` metres)."""
    lx, ly = _local(box, x, y)
    return abs(lx) <= box.size[0] / 2 + margin and abs(ly) <= box.size[1] / 2 + margin


def _local(box: Box, x: float, y: float) -> tuple[float, float]:
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    dx, dy = x - box.center[0], y - box.center[1]
    return (c * dx + s * dy, -s * dx + c * dy)


def gap(point: tuple[float, float], box: Box) -> float:
    """Floor-plane distance from a point to the box's footprint (0 on it)."""
    lx, ly = _local(box, *point)
    return math.hypot(max(abs(lx) - box.size[0] / 2, 0.0), max(abs(ly) - box.size[1] / 2, 0.0))


def centre_distance(a: Box, b: Box) -> float:
    """Floor-plane distance between the boxes' centres (what the answer templates compare)."""
    return math.hypot(a.center[0] - b.center[0], a.center[1] - b.center[1])
