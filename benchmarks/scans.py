"""3D scans as arrays: PLY point clouds and meshes (binary either endian, or ASCII), objects from
ScanNet segment aggregations or from labelled boxes, and the canonical PLY a scene keeps.

Everything here is numpy on whole columns, never a loop over points: a 1,000,000-vertex binary PLY
parses in tens of milliseconds. Problems raise `ScanError` with a reason a researcher can act on;
the import service puts the file name in front of it. Formats: ../shared/FORMATS.md, docs/IMPORT.md.
"""

import math
import re

import numpy as np

from .models import AssetRole, Scene
from .services import scene_asset

# PLY scalar type names (both spellings) -> numpy type codes.
PLY_TYPES = {
    "char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1",
    "short": "i2", "int16": "i2", "ushort": "u2", "uint16": "u2",
    "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
    "float": "f4", "float32": "f4", "double": "f8", "float64": "f8",
}
FORMATS = {"binary_little_endian": "<", "binary_big_endian": ">", "ascii": None}
COLOUR_NAMES = (("red", "green", "blue"), ("r", "g", "b"), ("diffuse_red", "diffuse_green", "diffuse_blue"))
MAX_INSTANCE = np.iinfo(np.uint16).max
HEADER_LIMIT = 64 * 1024


class ScanError(ValueError):
    """A file cannot be used; the message says why and `source` which input it was: the point
    cloud ("ply"), the ScanNet "aggregation" or "segments" file, or the "boxes" file."""

    def __init__(self, message: str, source: str = "ply"):
        super().__init__(message)
        self.source = source


# --- PLY reading ---------------------------------------------------------------------------------


class _Element:
    def __init__(self, name: str, count: int):
        self.name, self.count = name, count
        self.scalars: list[tuple[str, str]] = []  # (property name, numpy type code)
        self.lists: list[tuple[str, str, str]] = []  # (property name, count type, item type)


def _ply_type(name: str) -> str:
    if name not in PLY_TYPES:
        raise ScanError(f"unknown PLY property type '{name}'")
    return PLY_TYPES[name]


def _parse_header(data: bytes) -> tuple[str, list[_Element], int]:
    """(format, elements in file order, offset of the body)."""
    if not data.startswith(b"ply"):
        raise ScanError("not a PLY file (it does not start with 'ply')")
    match = re.search(rb"end_header\r?\n", data[:HEADER_LIMIT])
    if not match:
        raise ScanError("no 'end_header' line: the header is cut off or not PLY")
    fmt, elements = None, []
    for raw in data[: match.start()].decode("ascii", errors="replace").splitlines()[1:]:
        words = raw.split()
        if not words or words[0] in ("comment", "obj_info"):
            continue
        if words[0] == "format":
            if len(words) < 2 or words[1] not in FORMATS:
                raise ScanError(f"unsupported PLY format line '{raw.strip()}'")
            fmt = words[1]
        elif words[0] == "element":
            if len(words) != 3 or not words[2].isdigit():
                raise ScanError(f"bad element line '{raw.strip()}'")
            elements.append(_Element(words[1], int(words[2])))
        elif words[0] == "property":
            if not elements:
                raise ScanError("a property comes before any element")
            if len(words) == 5 and words[1] == "list":
                elements[-1].lists.append((words[4], _ply_type(words[2]), _ply_type(words[3])))
            elif len(words) == 3:
                if elements[-1].lists:
                    raise ScanError(f"element '{elements[-1].name}' has scalars after a list property")
                elements[-1].scalars.append((words[2], _ply_type(words[1])))
            else:
                raise ScanError(f"bad property line '{raw.strip()}'")
    if fmt is None:
        raise ScanError("the header has no 'format' line")
    return fmt, elements, match.end()


def _vertex_columns(columns: dict[str, np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    missing = [c for c in ("x", "y", "z") if c not in columns]
    if missing:
        raise ScanError(f"vertex element lacks {', '.join(missing)}")
    names = next((names for names in COLOUR_NAMES if all(c in columns for c in names)), None)
    if names is None:
        raise ScanError("vertices have no colours (properties red, green, blue)")
    xyz = np.empty((n, 3), dtype=np.float32)
    for axis, name in enumerate("xyz"):
        xyz[:, axis] = columns[name]
    if not np.isfinite(xyz).all():
        raise ScanError("some vertex coordinates are NaN or infinite")
    rgb = np.empty((n, 3), dtype=np.uint8)
    for channel, name in enumerate(names):
        values = columns[name]
        if values.dtype.kind == "f":  # colours stored as 0..1 floats
            values = np.clip(np.rint(values * 255), 0, 255)
        rgb[:, channel] = values
    instance = columns.get("instance")
    instance = np.zeros(n, dtype=np.uint16) if instance is None else instance.astype(np.uint16)
    return xyz, rgb, instance


def _binary_vertices(data: bytes, body: int, endian: str, elements: list[_Element]):
    offset = body
    for element in elements:
        dtype = np.dtype([(name, endian + code) for name, code in element.scalars])
        if element.name == "vertex":
            if element.lists:
                raise ScanError("the vertex element has a list property; only scalar vertex properties are read")
            end = offset + dtype.itemsize * element.count
            if end > len(data):
                have = (len(data) - offset) // max(dtype.itemsize, 1)
                raise ScanError(f"truncated: the header promises {element.count} vertices, the file holds {have}")
            table = np.frombuffer(data, dtype=dtype, count=element.count, offset=offset)
            _check_rest(data, end, elements[elements.index(element) + 1:])
            return {name: table[name] for name in dtype.names}, element.count
        if element.lists:
            raise ScanError(f"element '{element.name}' with list properties comes before the vertices")
        offset += dtype.itemsize * element.count
    raise ScanError("the file has no 'vertex' element")


def _check_rest(data: bytes, offset: int, rest: list[_Element]) -> None:
    """Cheap lower bound on the bytes the elements after the vertices need (a triangle list at
    least three indices per face), so a file cut off in its faces is refused too."""
    need = 0
    for element in rest:
        per = sum(np.dtype(code).itemsize for _, code in element.scalars)
        per += sum(np.dtype(count).itemsize + 3 * np.dtype(item).itemsize for _, count, item in element.lists)
        need += per * element.count
    if len(data) - offset < need:
        raise ScanError(f"truncated: the file ends before its {', '.join(e.name for e in rest)} data")


def _ascii_vertices(data: bytes, body: int, elements: list[_Element]):
    skip = 0
    for element in elements:
        if element.name == "vertex":
            break
        skip += element.count
    else:
        raise ScanError("the file has no 'vertex' element")
    if element.lists:
        raise ScanError("the vertex element has a list property; only scalar vertex properties are read")
    lines = data[body:].split(b"\n", skip + element.count)
    rows = lines[skip: skip + element.count]
    width = len(element.scalars)
    if len(rows) < element.count or (rows and not rows[-1].strip()):
        raise ScanError(f"truncated: the header promises {element.count} vertices, the file holds fewer")
    try:
        values = np.array(b" ".join(rows).split(), dtype=np.float64)
    except ValueError:
        raise ScanError("a vertex line holds something that is not a number") from None
    if values.size != width * element.count:
        bad = next((i for i, row in enumerate(rows) if len(row.split()) != width), None)
        where = f" (vertex line {bad + 1} has {len(rows[bad].split())})" if bad is not None else ""
        raise ScanError(f"each vertex line must hold {width} values{where}")
    table = values.reshape(element.count, width)
    columns = {}
    for i, (name, code) in enumerate(element.scalars):
        columns[name] = table[:, i].astype(code) if np.dtype(code).kind != "f" else table[:, i]
    return columns, element.count


def read_ply(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices of a PLY point cloud or mesh: float32 (N, 3) xyz, uint8 (N, 3) rgb and uint16 (N,)
    instance ids (from an `instance` property when present, else zeros). Faces are ignored."""
    fmt, elements, body = _parse_header(data)
    endian = FORMATS[fmt]
    if endian is None:
        columns, n = _ascii_vertices(data, body, elements)
    else:
        columns, n = _binary_vertices(data, body, endian, elements)
    if n == 0:
        raise ScanError("the file has no vertices")
    return _vertex_columns(columns, n)


# --- the canonical PLY ---------------------------------------------------------------------------

CANONICAL_DTYPE = np.dtype([
    ("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("red", "u1"), ("green", "u1"), ("blue", "u1"), ("instance", "<u2"),
])


def write_points_ply(xyz: np.ndarray, rgb: np.ndarray, instance: np.ndarray) -> bytes:
    """The scene's points as a binary little-endian PLY with x y z, red green blue and a ushort
    `instance` per vertex (0 = no object): 17 bytes a point, readable by any PLY tool."""
    n = len(xyz)
    table = np.empty(n, dtype=CANONICAL_DTYPE)
    for axis, name in enumerate("xyz"):
        table[name] = xyz[:, axis]
    for channel, name in enumerate(("red", "green", "blue")):
        table[name] = rgb[:, channel]
    table["instance"] = instance
    header = "\n".join([
        "ply", "format binary_little_endian 1.0", "comment HypoLab canonical scan", f"element vertex {n}",
        "property float x", "property float y", "property float z",
        "property uchar red", "property uchar green", "property uchar blue",
        "property ushort instance", "end_header", "",
    ])
    return header.encode("ascii") + table.tobytes()


# --- objects ---------------------------------------------------------------------------------------


def boxes_of_instances(xyz: np.ndarray, instance: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Axis-aligned (min, max) corners of each non-zero instance's points, from one sort."""
    order = np.argsort(instance, kind="stable")
    ids = instance[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    sorted_xyz = xyz[order]
    lows = np.minimum.reduceat(sorted_xyz, starts, axis=0)
    highs = np.maximum.reduceat(sorted_xyz, starts, axis=0)
    return {int(ids[s]): (lo, hi) for s, lo, hi in zip(starts, lows, highs, strict=True) if ids[s] != 0}


def _object(instance_id: int, label: str, lo: np.ndarray, hi: np.ndarray) -> dict:
    return {"instance_id": instance_id, "label": label,
            "center": [round(float(v), 5) for v in (lo + hi) / 2], "size": [round(float(v), 5) for v in hi - lo]}


def scannet_objects(xyz: np.ndarray, aggregation: dict, segs: dict) -> tuple[np.ndarray, list[dict]]:
    """Per-point instance ids and objects from ScanNet's segments and their aggregation: an object
    is the union of the vertices whose segment its segGroup lists; instance id = objectId + 1
    (0 stays 'no object'); its box is the axis-aligned box of those vertices."""
    seg_indices = segs.get("segIndices") if isinstance(segs, dict) else None
    if not isinstance(seg_indices, list):
        raise ScanError("no 'segIndices' list", "segments")
    if len(seg_indices) != len(xyz):
        raise ScanError(f"{len(seg_indices)} segment ids for {len(xyz)} vertices of the scan", "segments")
    groups = aggregation.get("segGroups") if isinstance(aggregation, dict) else None
    if not isinstance(groups, list):
        raise ScanError("no 'segGroups' list", "aggregation")
    segments = np.asarray(seg_indices, dtype=np.int64)
    if len(segments) and segments.min() < 0:
        raise ScanError("negative segment ids", "segments")
    lookup = np.zeros(int(segments.max()) + 1 if len(segments) else 1, dtype=np.uint16)
    labels = {}
    for g, group in enumerate(groups):
        try:
            instance_id = int(group.get("objectId", group.get("id"))) + 1
            label = str(group["label"]).strip()
            listed = np.asarray(group["segments"], dtype=np.int64)
        except (AttributeError, KeyError, TypeError, ValueError):
            raise ScanError(f"segGroups[{g}] needs objectId, label and segments", "aggregation") from None
        if not label or not 0 < instance_id <= MAX_INSTANCE or instance_id in labels:
            raise ScanError(f"segGroups[{g}] has an empty label or a bad or repeated objectId", "aggregation")
        labels[instance_id] = label
        listed = listed[(listed >= 0) & (listed < len(lookup))]
        lookup[listed] = instance_id
    instance = lookup[segments]
    boxes = boxes_of_instances(xyz, instance)
    empty = sorted(set(labels) - set(boxes))
    if empty:
        named = ", ".join(f"objectId {i - 1} ({labels[i]})" for i in empty[:5])
        raise ScanError(f"no vertex of the scan lies in {named}", "aggregation")
    return instance, [_object(i, labels[i], *boxes[i]) for i in sorted(boxes)]


def _number_list(value, n: int, what: str) -> list[float]:
    if not isinstance(value, list) or len(value) != n or not all(isinstance(v, int | float) for v in value):
        raise ScanError(f"{what} must be a list of {n} numbers", "boxes")
    return [float(v) for v in value]


def box_objects(xyz: np.ndarray, boxes) -> tuple[np.ndarray, list[dict]]:
    """Instance ids by point-in-box from a list of labelled boxes `{label, center, size[, yaw,
    instance_id]}` (or `{label, min, max}`); a point inside several boxes goes to the smallest."""
    if not isinstance(boxes, list) or not boxes:
        raise ScanError("expected a non-empty JSON list of {label, center, size} boxes", "boxes")
    objects = []
    for b, box in enumerate(boxes):
        where = f"box {b}"
        if not isinstance(box, dict) or not str(box.get("label", "")).strip():
            raise ScanError(f"{where}: needs a label", "boxes")
        if "min" in box:
            lo, hi = _number_list(box["min"], 3, f"{where}: min"), _number_list(box.get("max"), 3, f"{where}: max")
            center, size = [(a + c) / 2 for a, c in zip(lo, hi, strict=True)], [c - a for a, c in zip(lo, hi, strict=True)]
        else:
            center, size = _number_list(box.get("center"), 3, f"{where}: center"), _number_list(
                box.get("size"), 3, f"{where}: size")
        if min(size) <= 0:
            raise ScanError(f"{where}: sizes must be positive", "boxes")
        instance_id = box.get("instance_id", b + 1)
        if not isinstance(instance_id, int) or not 0 < instance_id <= MAX_INSTANCE:
            raise ScanError(f"{where}: instance_id must be a whole number from 1 to {MAX_INSTANCE}", "boxes")
        yaw = float(box.get("yaw", 0.0) or 0.0)
        objects.append({"instance_id": instance_id, "label": str(box["label"]).strip(), "center": center,
                        "size": size, "yaw": yaw})
    if len({o["instance_id"] for o in objects}) != len(objects):
        raise ScanError("instance ids repeat", "boxes")
    instance = np.zeros(len(xyz), dtype=np.uint16)
    # Largest first, so a smaller box inside a larger one (a pillow on a bed) keeps its points.
    for obj in sorted(objects, key=lambda o: -math.prod(o["size"])):
        local = xyz - np.asarray(obj["center"], dtype=np.float32)
        if obj["yaw"]:
            cos, sin = math.cos(obj["yaw"]), math.sin(obj["yaw"])
            local[:, 0], local[:, 1] = cos * local[:, 0] + sin * local[:, 1], -sin * local[:, 0] + cos * local[:, 1]
        inside = (np.abs(local) <= np.asarray(obj["size"], dtype=np.float32) / 2).all(axis=1)
        instance[inside] = obj["instance_id"]
    return instance, objects


# --- a scene's points back -----------------------------------------------------------------------


def load_scene_points(scene: Scene) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
    """The scene's canonical points (its latest POINT_CLOUD asset) and its objects as
    `{instance_id, label, center, size, yaw}` dicts, for processing into viewer assets."""
    asset = scene_asset(scene, AssetRole.POINT_CLOUD)
    if asset is None:
        raise ScanError(f"scene {scene.external_id} has no point cloud")
    with asset.file.open("rb") as handle:
        xyz, rgb, instance = read_ply(handle.read())
    objects = [
        {"instance_id": o.instance_id, "label": o.label, "center": list(o.center), "size": list(o.size), "yaw": o.yaw}
        for o in scene.scene_objects.order_by("instance_id")
    ]
    return xyz, rgb, instance, objects
