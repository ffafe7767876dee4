"""The demo's furnished rooms, generated procedurally: the sandbox's scenes and the finished Hypo3D scans.

Each room is a coloured point cloud sampled from box, cylinder and sphere parts: a floor on the XY
plane (Z up, metres, the room spans [0, width] x [0, depth]), walls just outside it, and furniture
standing on the floor or against the walls. Every point carries an instance id: 0 for floor and
walls, 1..K for the room's objects in the order they are listed.

Sides follow the top-view map (x to the right, y up): left is the x = 0 wall, right the x = width
wall, front the y = 0 wall (bottom of the map) and back the y = depth wall (top of the map).
"""

from collections import Counter
from dataclasses import dataclass

import numpy as np

from benchmarks.models import Side

from .files import demo_table

WALL_HEIGHT = 2.6
WALL_THICKNESS = 0.1
STRUCTURE_ID = 0
# Relative points per square metre: floors and furniture are what people look at.
FLOOR_DENSITY = 3.0
OBJECT_DENSITY = 3.0
WALL_DENSITY = 0.6
# Doors and windows sit in the walls; a world frame anchored on them would say little.
NOT_ANCHORS = {"door", "window"}
# The faces sampled on a box that stands on something: all but the bottom.
OPEN_SIDES = ("+z", "+x", "-x", "+y", "-y")

FACE_AXIS = {"+x": (0, 1.0), "-x": (0, -1.0), "+y": (1, 1.0), "-y": (1, -1.0), "+z": (2, 1.0)}
# Fixed light from above and slightly in front, so faces of one box read as different planes.
FACE_SHADE = {"+z": 1.0, "+x": 0.86, "-x": 0.76, "+y": 0.8, "-y": 0.92}


@dataclass(frozen=True)
class Part:
    kind: str  # "box", "cylinder" (size = 2r, 2r, h) or "sphere" (size = 2r, 2r, 2r)
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    colour: tuple[int, int, int]
    instance_id: int
    density: float = OBJECT_DENSITY
    faces: tuple[str, ...] = OPEN_SIDES
    planks: bool = False


@dataclass(frozen=True)
class Furniture:
    """One object: `shape` picks how it is built from parts; (x, y) is its footprint centre."""

    label: str
    shape: str
    x: float
    y: float
    size: tuple[float, float, float]
    colour: tuple[int, int, int]
    back: str | None = None  # which side a chair/sofa back or bed headboard is on: "+x", "-y", ...
    z0: float = 0.0


@dataclass(frozen=True)
class RoomTemplate:
    room_type: str
    width: float
    depth: float
    floor_colour: tuple[int, int, int]
    wall_colour: tuple[int, int, int]
    wooden_floor: bool
    furniture: tuple[Furniture, ...]


@dataclass
class RoomCloud:
    """One sampled room: the cloud, its objects as top-view dicts, and the world-frame anchor."""

    external_id: str
    room_type: str
    caption: str
    xyz: np.ndarray
    rgb: np.ndarray
    instance: np.ndarray
    objects: list[dict]
    anchor: dict
    side: str

    @property
    def world_frame_text(self) -> str:
        return f"The {self.anchor['label']} is to the {self.side} of the scene."


OAK, WALNUT, WHITE, GREY, DARK = (170, 124, 78), (110, 74, 48), (236, 236, 232), (128, 130, 136), (38, 38, 42)
TERRACOTTA, LEAF, DOOR, GLASS, SHADE = (176, 92, 60), (58, 128, 62), (150, 108, 70), (150, 196, 224), (246, 226, 170)
# The colours data/rooms.json names; its other colours are written out as [r, g, b].
NAMED_COLOURS = {
    "oak": OAK, "walnut": WALNUT, "white": WHITE, "grey": GREY, "dark": DARK,
    "leaf": LEAF, "door": DOOR, "glass": GLASS, "shade": SHADE,
}


def _colour(value: str | list[int]) -> tuple[int, int, int]:
    return NAMED_COLOURS[value] if isinstance(value, str) else tuple(value)


def _furniture(row: dict) -> Furniture:
    return Furniture(
        label=row["label"], shape=row["shape"], x=float(row["x"]), y=float(row["y"]),
        size=tuple(float(v) for v in row["size"]), colour=_colour(row["colour"]),
        back=row.get("back"), z0=float(row.get("z0", 0.0)),
    )


def _room_template(row: dict) -> RoomTemplate:
    return RoomTemplate(
        room_type=row["room_type"], width=float(row["width"]), depth=float(row["depth"]),
        floor_colour=_colour(row["floor_colour"]), wall_colour=_colour(row["wall_colour"]),
        wooden_floor=bool(row["wooden_floor"]), furniture=tuple(_furniture(f) for f in row["furniture"]),
    )


# The demo's room layouts, one a room number (demo_room_01 is the first), from data/rooms.json.
ROOMS = tuple(_room_template(row) for row in demo_table("rooms"))


# --- building parts -------------------------------------------------------------------------


def _panel(f: Furniture, side: str, thickness: float, z_from: float, z_to: float) -> tuple[tuple, tuple]:
    """Centre and size of a panel along one side ("+x", "-y", ...) of f's footprint, between two heights."""
    sx, sy, _ = f.size
    axis, sign = FACE_AXIS[side]
    cx = f.x + (sign * (sx - thickness) / 2 if axis == 0 else 0.0)
    cy = f.y + (sign * (sy - thickness) / 2 if axis == 1 else 0.0)
    size = (thickness, sy, z_to - z_from) if axis == 0 else (sx, thickness, z_to - z_from)
    return (cx, cy, f.z0 + (z_from + z_to) / 2), size


def _legs(f: Furniture, height: float, leg: float, colour, iid: int) -> list[Part]:
    sx, sy, _ = f.size
    dx, dy = sx / 2 - leg, sy / 2 - leg
    return [
        Part("box", (f.x + ax * dx, f.y + ay * dy, f.z0 + height / 2), (leg, leg, height), colour, iid)
        for ax in (-1, 1)
        for ay in (-1, 1)
    ]


def _table(f: Furniture, iid: int) -> list[Part]:
    sx, sy, sz = f.size
    top = Part("box", (f.x, f.y, f.z0 + sz - 0.02), (sx, sy, 0.04), f.colour, iid)
    return [top, *_legs(f, sz - 0.04, 0.05, f.colour, iid)]


def _chair(f: Furniture, iid: int) -> list[Part]:
    sx, sy, sz = f.size
    seat = Part("box", (f.x, f.y, f.z0 + 0.455), (sx, sy, 0.05), f.colour, iid)
    back_center, back_size = _panel(f, f.back, 0.05, 0.48, sz)
    return [seat, Part("box", back_center, back_size, f.colour, iid), *_legs(f, 0.43, 0.04, DARK, iid)]


def _sofa(f: Furniture, iid: int) -> list[Part]:
    sx, sy, sz = f.size
    parts = [Part("box", (f.x, f.y, f.z0 + 0.21), (sx, sy, 0.42), f.colour, iid)]
    back_center, back_size = _panel(f, f.back, 0.2, 0.0, sz)
    parts.append(Part("box", back_center, back_size, f.colour, iid))
    arm_colour = tuple(int(c * 0.9) for c in f.colour)
    arm_sides = ("+y", "-y") if f.back in ("+x", "-x") else ("+x", "-x")
    for side in arm_sides:
        arm_center, arm_size = _panel(f, side, 0.15, 0.0, 0.62)
        parts.append(Part("box", arm_center, arm_size, arm_colour, iid))
    return parts


def _bed(f: Furniture, iid: int) -> list[Part]:
    sx, sy, sz = f.size
    axis, sign = FACE_AXIS[f.back]
    # The mattress covers the frame's top, so only its sides are sampled.
    frame = Part("box", (f.x, f.y, f.z0 + 0.175), (sx, sy, 0.35), WALNUT, iid, faces=("+x", "-x", "+y", "-y"))
    mattress = Part("box", (f.x, f.y, f.z0 + 0.45), (sx - 0.06, sy - 0.06, 0.2), f.colour, iid)
    head_center, head_size = _panel(f, f.back, 0.08, 0.0, sz)
    pillow_offset = (sy if axis == 1 else sx) / 2 - 0.35
    pillow_center = (
        f.x + (sign * pillow_offset if axis == 0 else 0.0),
        f.y + (sign * pillow_offset if axis == 1 else 0.0),
        f.z0 + 0.6,
    )
    pillow_size = (0.35, sy - 0.3, 0.1) if axis == 0 else (sx - 0.3, 0.35, 0.1)
    return [
        frame,
        mattress,
        Part("box", head_center, head_size, WALNUT, iid),
        Part("box", pillow_center, pillow_size, WHITE, iid),
    ]


def _lamp(f: Furniture, iid: int) -> list[Part]:
    sx, _, sz = f.size
    shade_height = 0.35
    return [
        Part("cylinder", (f.x, f.y, f.z0 + 0.015), (0.3, 0.3, 0.03), DARK, iid),
        Part("cylinder", (f.x, f.y, f.z0 + (sz - shade_height) / 2), (0.04, 0.04, sz - shade_height), DARK, iid),
        Part("cylinder", (f.x, f.y, f.z0 + sz - shade_height / 2), (sx, sx, shade_height), f.colour, iid),
    ]


def _plant(f: Furniture, iid: int) -> list[Part]:
    sx, _, sz = f.size
    pot_d, pot_h = sx * 0.55, 0.35
    leaves_r = sx / 2
    return [
        Part("cylinder", (f.x, f.y, f.z0 + pot_h / 2), (pot_d, pot_d, pot_h), TERRACOTTA, iid),
        Part("sphere", (f.x, f.y, f.z0 + sz - leaves_r), (sx, sx, sx), f.colour, iid),
    ]


def _box(f: Furniture, iid: int) -> list[Part]:
    return [Part("box", (f.x, f.y, f.z0 + f.size[2] / 2), f.size, f.colour, iid)]


SHAPES = {"box": _box, "table": _table, "chair": _chair, "sofa": _sofa, "bed": _bed, "lamp": _lamp, "plant": _plant}


def _structure(t: RoomTemplate) -> list[Part]:
    """Floor plus four walls just outside it; walls show their inner face and top only."""
    w, d, h, k = t.width, t.depth, WALL_HEIGHT, WALL_THICKNESS
    floor = Part(
        "box", (w / 2, d / 2, 0.0), (w, d, 0.0), t.floor_colour, STRUCTURE_ID,
        density=FLOOR_DENSITY, faces=("+z",), planks=t.wooden_floor,
    )
    walls = [
        ((-k / 2, d / 2, h / 2), (k, d + 2 * k, h), ("+x", "+z")),
        ((w + k / 2, d / 2, h / 2), (k, d + 2 * k, h), ("-x", "+z")),
        ((w / 2, -k / 2, h / 2), (w, k, h), ("+y", "+z")),
        ((w / 2, d + k / 2, h / 2), (w, k, h), ("-y", "+z")),
    ]
    return [floor] + [
        Part("box", c, s, t.wall_colour, STRUCTURE_ID, density=WALL_DENSITY, faces=faces) for c, s, faces in walls
    ]


# --- sampling -------------------------------------------------------------------------------


def _face_areas(part: Part) -> np.ndarray:
    size = np.array(part.size)
    return np.array([np.prod(np.delete(size, FACE_AXIS[face][0])) for face in part.faces])


def _area(part: Part) -> float:
    if part.kind == "box":
        return float(_face_areas(part).sum())
    r, sz = part.size[0] / 2, part.size[2]
    if part.kind == "cylinder":
        return 2 * np.pi * r * sz + np.pi * r * r
    return 4 * np.pi * r * r


def _sample_box(rng, part: Part, n: int) -> tuple[np.ndarray, np.ndarray]:
    size = np.array(part.size)
    axes = np.array([FACE_AXIS[face][0] for face in part.faces])
    signs = np.array([FACE_AXIS[face][1] for face in part.faces])
    areas = _face_areas(part)
    face = rng.choice(len(axes), size=n, p=areas / areas.sum())
    local = rng.uniform(-0.5, 0.5, (n, 3))
    local[np.arange(n), axes[face]] = 0.5 * signs[face]
    shade = np.array([FACE_SHADE[f] for f in part.faces])[face]
    return np.asarray(part.center) + local * size, shade


def _sample_cylinder(rng, part: Part, n: int) -> tuple[np.ndarray, np.ndarray]:
    r, h = part.size[0] / 2, part.size[2]
    on_top = rng.uniform(size=n) < (np.pi * r * r) / (2 * np.pi * r * h + np.pi * r * r)
    theta = rng.uniform(0, 2 * np.pi, n)
    radius = np.where(on_top, r * np.sqrt(rng.uniform(size=n)), r)
    z = np.where(on_top, h / 2, rng.uniform(-h / 2, h / 2, n))
    local = np.column_stack([radius * np.cos(theta), radius * np.sin(theta), z])
    shade = np.where(on_top, 1.0, 0.8 + 0.15 * np.cos(theta + np.pi / 2))
    return np.asarray(part.center) + local, shade


def _sample_sphere(rng, part: Part, n: int) -> tuple[np.ndarray, np.ndarray]:
    normal = rng.normal(size=(n, 3))
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    # A little radial jitter reads as foliage rather than a ball.
    radius = part.size[0] / 2 * rng.uniform(0.85, 1.0, (n, 1))
    return np.asarray(part.center) + normal * radius, 0.65 + 0.35 * np.clip(normal[:, 2], 0, 1)


SAMPLERS = {"box": _sample_box, "cylinder": _sample_cylinder, "sphere": _sample_sphere}


def _counts(weights: np.ndarray, total: int) -> np.ndarray:
    """Split `total` in proportion to `weights`, exactly, largest remainders first."""
    share = weights / weights.sum() * total
    counts = np.floor(share).astype(np.int64)
    counts[np.argsort(share - counts)[::-1][: total - counts.sum()]] += 1
    return counts


def _plank_factor(rng, xy: np.ndarray) -> np.ndarray:
    """Brightness per floor plank (18 cm wide boards along y, staggered 1.2 m lengths)."""
    board = np.floor(xy[:, 0] / 0.18).astype(np.int64)
    row = np.floor((xy[:, 1] + (board % 3) * 0.4) / 1.2).astype(np.int64)
    table = rng.uniform(0.86, 1.08, (board.max() + 1, row.max() + 2))
    return table[board, row]


def _sample_parts(rng, parts: list[Part], n_points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    weights = np.array([_area(p) * p.density for p in parts])
    xyz_chunks, rgb_chunks, id_chunks = [], [], []
    for part, n in zip(parts, _counts(weights, n_points), strict=True):
        xyz, shade = SAMPLERS[part.kind](rng, part, int(n))
        if part.planks:
            shade = shade * _plank_factor(rng, xyz[:, :2])
        colour = np.asarray(part.colour) * shade[:, None] + rng.normal(0, 5, (len(xyz), 3))
        xyz_chunks.append(xyz)
        rgb_chunks.append(np.clip(colour, 0, 255))
        id_chunks.append(np.full(len(xyz), part.instance_id))
    return (
        np.concatenate(xyz_chunks).astype(np.float32),
        np.rint(np.concatenate(rgb_chunks)).astype(np.uint8),
        np.concatenate(id_chunks).astype(np.uint16),
    )


# --- rooms ----------------------------------------------------------------------------------


def _object_dict(f: Furniture, instance_id: int) -> dict:
    sx, sy, sz = f.size
    return {
        "instance_id": instance_id,
        "label": f.label,
        "center": [f.x, f.y, f.z0 + sz / 2],
        "size": [sx, sy, sz],
    }


def _nearest_wall(t: RoomTemplate, objects: list[dict]) -> tuple[dict, str]:
    """The object with the smallest gap to a wall (ties: larger footprint) and that wall's side."""
    labels = Counter(o["label"] for o in objects)
    best = None
    for obj in objects:
        if obj["label"] in NOT_ANCHORS or labels[obj["label"]] > 1:
            continue
        (cx, cy, _), (sx, sy, _) = obj["center"], obj["size"]
        gaps = {
            Side.LEFT: cx - sx / 2,
            Side.RIGHT: t.width - (cx + sx / 2),
            Side.FRONT: cy - sy / 2,
            Side.BACK: t.depth - (cy + sy / 2),
        }
        side = min(gaps, key=gaps.get)
        key = (round(gaps[side], 2), -sx * sy)
        if best is None or key < best[0]:
            best = (key, obj, side)
    return best[1], best[2].value


def _caption(t: RoomTemplate) -> str:
    numbers = {2: "two", 3: "three", 4: "four", 5: "five"}
    counts = Counter(f.label for f in t.furniture if f.label not in NOT_ANCHORS)
    phrases = []
    for label, count in counts.items():
        if count > 1:
            phrases.append(f"{numbers.get(count, count)} {label}s")
        else:
            phrases.append(f"{'an' if label[0] in 'aeiou' else 'a'} {label}")
    listed = ", ".join(phrases[:-1]) + f" and {phrases[-1]}"
    return f"A {t.width:g} x {t.depth:g} m {t.room_type} with {listed}."


def generate_room(index: int, points_per_room: int = 220_000, seed: int = 0) -> RoomCloud:
    """Sample room number `index` (0-based) of the demo set as a coloured, instance-labelled cloud."""
    if not 0 <= index < len(ROOMS):
        raise ValueError(f"The demo has {len(ROOMS)} room layouts; room {index} does not exist.")
    template = ROOMS[index]
    rng = np.random.default_rng([seed, index])
    parts = _structure(template)
    objects = []
    for instance_id, furniture in enumerate(template.furniture, start=1):
        parts.extend(SHAPES[furniture.shape](furniture, instance_id))
        objects.append(_object_dict(furniture, instance_id))
    xyz, rgb, instance = _sample_parts(rng, parts, points_per_room)
    anchor, side = _nearest_wall(template, objects)
    return RoomCloud(external_id=f"demo_room_{index + 1:02d}", room_type=template.room_type, caption=_caption(template),
                     xyz=xyz, rgb=rgb, instance=instance, objects=objects, anchor=anchor, side=side)
