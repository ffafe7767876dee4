"""3D scans as arrays: PLY point clouds and meshes (binary either endian, or ASCII; OBJ meshes are read
in obj.py), objects from ScanNet segment aggregations, 3RScan semseg files or labelled boxes, and the
canonical PLY a scene keeps.

Everything here is numpy on whole columns, never a loop over points: a 1,000,000-vertex binary PLY
parses in tens of milliseconds. Problems raise `ScanError` with a reason a researcher can act on;
the import service puts the file name in front of it. Formats: ../shared/FORMATS.md, docs/IMPORT.md.
"""

import io
import math
import mmap
import re
from pathlib import Path

import numpy as np

from benchmarks.models import AssetRole, Scene
from benchmarks.services import scene_asset

from .alignment import box_from_axes, oriented_boxes, rigid_error

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
    if data[:3] != b"ply":  # `data` may be an mmap, which has no startswith
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


def _binary_faces(data: bytes, body: int, endian: str, elements: list[_Element]) -> np.ndarray | None:
    offset, seen_vertices = body, False
    for element in elements:
        if element.name == "vertex":
            seen_vertices = True
        elif seen_vertices and element.name == "face":
            if len(element.lists) != 1:
                return None
            _, count, item = element.lists[0]
            dtype = np.dtype([*[(name, endian + code) for name, code in element.scalars],
                              ("n", endian + count), ("v", endian + item, 3)])
            if offset + dtype.itemsize * element.count > len(data):
                return None
            table = np.frombuffer(data, dtype=dtype, count=element.count, offset=offset)
            return table["v"].astype(np.int64) if (table["n"] == 3).all() else None
        if element.lists:
            return None  # list sizes vary: no fixed offset past this element
        offset += np.dtype([(name, endian + code) for name, code in element.scalars]).itemsize * element.count
    return None


def _ascii_faces(data: bytes, body: int, elements: list[_Element]) -> np.ndarray | None:
    skip = 0
    for element in elements:
        if element.name == "face" and skip and len(element.lists) == 1 and not element.scalars:
            rows = data[body:].split(b"\n", skip + element.count)[skip: skip + element.count]
            try:
                values = np.array(b" ".join(rows).split(), dtype=np.int64)
            except ValueError:
                return None
            if values.size != 4 * element.count or not (values[::4] == 3).all():
                return None
            return values.reshape(-1, 4)[:, 1:]
        skip += element.count
    return None


def read_ply_faces(data: bytes) -> np.ndarray | None:
    """The triangles (F, 3) of a PLY mesh whose faces all have three vertices, else None (a point
    cloud, polygons, or a layout past which offsets are not fixed). Indices are checked."""
    fmt, elements, body = _parse_header(data)
    endian = FORMATS[fmt]
    faces = _ascii_faces(data, body, elements) if endian is None else _binary_faces(data, body, endian, elements)
    vertices = next((e.count for e in elements if e.name == "vertex"), 0)
    if faces is None or not len(faces) or faces.min() < 0 or faces.max() >= vertices:
        return None
    return faces


# --- OBJ meshes (3RScan) ---------------------------------------------------------------------------


def scannet_meta(text: str) -> dict[str, str]:
    """`key = value` lines of a ScanNet scene's .txt as a dict (other lines are ignored)."""
    meta = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            meta[key.strip()] = value.strip()
    return meta


def axis_alignment(meta: dict[str, str]) -> np.ndarray | None:
    """The `axisAlignment` 4x4 (row-major, 16 numbers) of a ScanNet scene's metadata, None when the
    scene has none; ScanError (source "meta") when it is not a rigid transform."""
    if "axisAlignment" not in meta:
        return None
    try:
        values = [float(v) for v in meta["axisAlignment"].split()]
    except ValueError:
        raise ScanError("axisAlignment holds something that is not a number", "meta") from None
    if len(values) != 16:
        raise ScanError(f"axisAlignment must be 16 numbers (a row-major 4x4), it has {len(values)}", "meta")
    matrix = np.array(values, dtype=np.float64).reshape(4, 4)
    problem = rigid_error(matrix)
    if problem:
        raise ScanError(f"axisAlignment is not a rotation plus translation: {problem}", "meta")
    return matrix


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
    return b"".join((header.encode("ascii"), table.data))  # one copy of the table, not two


# --- objects ---------------------------------------------------------------------------------------


def _object(instance_id: int, label: str, box: tuple[list[float], list[float], float]) -> dict:
    centre, size, yaw = box
    return {"instance_id": instance_id, "label": label, "center": [round(float(v), 5) for v in centre],
            "size": [round(float(v), 5) for v in size], "yaw": round(float(yaw), 6)}


def _segment_instances(n_vertices: int, segs: dict, groups, source: str, first_id: int):
    """Per-vertex instance ids from segIndices and segGroups (ScanNet aggregation, 3RScan semseg):
    a group's instance id is its objectId + first_id. Returns (instance, {instance id: (label,
    group, its index)}); ScanError naming the file ("segments" or `source`) when they do not fit."""
    seg_indices = segs.get("segIndices") if isinstance(segs, dict) else None
    if not isinstance(seg_indices, list):
        raise ScanError("no 'segIndices' list", "segments")
    if len(seg_indices) != n_vertices:
        raise ScanError(f"{len(seg_indices)} segment ids for {n_vertices} vertices of the scan", "segments")
    if not isinstance(groups, list):
        raise ScanError("no 'segGroups' list", source)
    try:
        segments = np.asarray(seg_indices, dtype=np.int64)
    except (TypeError, ValueError):
        raise ScanError("segIndices must be whole numbers", "segments") from None
    if len(segments) and segments.min() < 0:
        raise ScanError("negative segment ids", "segments")
    lookup = np.zeros(int(segments.max()) + 1 if len(segments) else 1, dtype=np.uint16)
    found = {}
    for g, group in enumerate(groups):
        try:
            instance_id = int(group.get("objectId", group.get("id"))) + first_id
            label = str(group["label"]).strip()
            listed = np.asarray(group["segments"], dtype=np.int64).reshape(-1)
        except (AttributeError, KeyError, TypeError, ValueError):
            raise ScanError(f"segGroups[{g}] needs objectId, label and segments", source) from None
        if not label or not 0 < instance_id <= MAX_INSTANCE or instance_id in found:
            raise ScanError(f"segGroups[{g}] has an empty label or a bad or repeated objectId", source)
        found[instance_id] = (label, group, g)
        listed = listed[(listed >= 0) & (listed < len(lookup))]
        lookup[listed] = instance_id
    return lookup[segments], found


def scannet_objects(xyz: np.ndarray, aggregation: dict, segs: dict) -> tuple[np.ndarray, list[dict]]:
    """Per-point instance ids and objects from ScanNet's segments and their aggregation: an object
    is the union of the vertices whose segment its segGroup lists; instance id = objectId + 1
    (0 stays 'no object'); its box is fitted to those vertices in the frame `xyz` is given in (the
    aligned one): the minimum-area rectangle of their footprint, with its yaw, from floor to top."""
    groups = aggregation.get("segGroups") if isinstance(aggregation, dict) else None
    instance, found = _segment_instances(len(xyz), segs, groups, "aggregation", 1)
    boxes = oriented_boxes(xyz, instance)
    empty = sorted(set(found) - set(boxes))
    if empty:
        named = ", ".join(f"objectId {i - 1} ({found[i][0]})" for i in empty[:5])
        raise ScanError(f"no vertex of the scan lies in {named}", "aggregation")
    return instance, [_object(i, found[i][0], boxes[i]) for i in sorted(boxes)]


def _obb(group: dict, g: int):
    """(centroid, axesLengths, normalizedAxes as 3 rows) of a 3RScan segGroup's `obb`, or None."""
    obb = group.get("obb")
    if obb is None:
        return None
    try:
        centroid = np.asarray(obb["centroid"], dtype=np.float64).reshape(3)
        lengths = np.asarray(obb["axesLengths"], dtype=np.float64).reshape(3)
        axes = np.asarray(obb["normalizedAxes"], dtype=np.float64).reshape(3, 3)
    except (KeyError, TypeError, ValueError):
        raise ScanError(f"segGroups[{g}].obb needs centroid (3), axesLengths (3) and normalizedAxes (9 numbers)",
                        "semseg") from None
    if not (np.isfinite(centroid).all() and np.isfinite(lengths).all() and np.isfinite(axes).all()) \
            or (lengths < 0).any() or not np.allclose(np.linalg.norm(axes, axis=1), 1, atol=1e-2):
        raise ScanError(f"segGroups[{g}].obb has non-finite or negative lengths or axes that are not unit vectors",
                        "semseg")
    return centroid, lengths, axes


def rscan_objects(xyz: np.ndarray, semseg: dict, segs: dict, matrix: np.ndarray) -> tuple[np.ndarray, list[dict]]:
    """Instance ids and objects of a 3RScan scan: `xyz` in the aligned frame, `matrix` the transform
    from the mesh's frame to it. Instance id = objectId (3RScan counts from 1; a file using 0 has
    every id moved up by one). An object's box is its annotated `obb` (normalizedAxes: three unit
    axes, one per row; axesLengths: full lengths along them) brought into the aligned frame, the
    axis nearest the vertical giving the height and the first other one the yaw; without an obb
    the box is fitted to its vertices as for ScanNet. An object with neither is refused."""
    groups = semseg.get("segGroups") if isinstance(semseg, dict) else None
    ids = [g.get("objectId", g.get("id")) for g in groups if isinstance(g, dict)] if isinstance(groups, list) else []
    first_id = 1 if any(i == 0 for i in ids) else 0
    instance, found = _segment_instances(len(xyz), segs, groups, "semseg", first_id)
    fitted = oriented_boxes(xyz, instance)
    objects, empty = [], []
    for instance_id in sorted(found):
        label, group, g = found[instance_id]
        obb = _obb(group, g)
        if obb is not None:
            box = box_from_axes(matrix, *obb)
        elif instance_id in fitted:
            box = fitted[instance_id]
        else:
            empty.append(f"objectId {instance_id - first_id} ({label})")
            continue
        objects.append(_object(instance_id, label, box))
    if empty:
        raise ScanError(f"no vertex of the scan lies in {', '.join(empty[:5])}, which has no obb either", "semseg")
    return instance, objects


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


def _read_ply_file(handle) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """read_ply over a stored file: a local one is mapped, not read into a second copy (a 20M-point
    scan is 340 MB); a file with no descriptor (object storage) is read whole."""
    try:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return read_ply(handle.read())
    return read_ply(mapped)  # closed when collected: a refused file's traceback may still hold views of it


def ply_chunks(path, chunk_points: int = 1_000_000):
    """A function that yields a PLY file's vertices chunk by chunk as (xyz, rgb, instance), the
    arrays read_ply gives, for the out-of-core octree (octree_disk.py): a binary PLY is read a chunk
    at a time (plain reads, not a mapping, whose pages would count as the process's memory), so a
    chunk costs its own arrays and the file may be any size; an ASCII one is read whole (scanners
    write binary)."""
    with open(path, "rb") as handle:
        fmt, elements, body = _parse_header(handle.read(HEADER_LIMIT))
    endian = FORMATS[fmt]

    def whole():
        with open(path, "rb") as handle:
            yield read_ply(handle.read())

    if endian is None:
        return whole
    offset = body
    for element in elements:
        if element.lists:
            raise ScanError(f"element '{element.name}' has a list property; only scalar vertex properties are read")
        dtype = np.dtype([(name, endian + code) for name, code in element.scalars])
        if element.name == "vertex":
            break
        offset += dtype.itemsize * element.count
    else:
        raise ScanError("the file has no 'vertex' element")
    size = Path(path).stat().st_size
    if offset + dtype.itemsize * element.count > size:
        raise ScanError(f"truncated: the header promises {element.count} vertices, the file holds "
                        f"{(size - offset) // max(dtype.itemsize, 1)}")
    if element.count == 0:
        raise ScanError("the file has no vertices")

    def chunks():
        with open(path, "rb") as handle:
            handle.seek(offset)
            for start in range(0, element.count, chunk_points):
                part = np.fromfile(handle, dtype=dtype, count=min(chunk_points, element.count - start))
                yield _vertex_columns({name: part[name] for name in dtype.names}, len(part))

    return chunks


def load_scene_points(scene: Scene) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
    """The scene's canonical points (its latest POINT_CLOUD asset) and its objects as
    `{instance_id, label, center, size, yaw}` dicts, for processing into viewer assets."""
    asset = scene_asset(scene, AssetRole.POINT_CLOUD)
    if asset is None:
        raise ScanError(f"scene {scene.external_id} has no point cloud")
    with asset.file.open("rb") as handle:
        xyz, rgb, instance = _read_ply_file(handle)
    objects = [
        {"instance_id": o.instance_id, "label": o.label, "center": list(o.center), "size": list(o.size), "yaw": o.yaw}
        for o in scene.scene_objects.order_by("instance_id")
    ]
    return xyz, rgb, instance, objects
