"""The compact point-cloud binary the browser viewer loads ("HLPC", version 2).

One file holds the whole cloud as disjoint levels: level 0 is a uniform random sample (at most
`FIRST_LEVEL_POINTS` points) the viewer draws first and keeps drawing while the camera moves; the
further levels split the other points into uniform samples of at most `REFINE_LEVEL_POINTS`,
so the browser decompresses one while it draws the previous. No point is stored twice.

Layout, all little-endian:

    offset      size      field
    0           4         magic b"HLPC"
    4           4         uint32 version (2)
    8           4         uint32 N, number of points in all levels
    12          4         uint32 L, number of levels
    16          12        float32[3] origin (x, y, z): the bbox minimum
    28          12        float32[3] step per axis, in metres
    40          8L        per level: uint32 points, uint32 section bytes
    40+8L       ...       the L sections in order, each one gzip member

A section of n points decompresses to 11n bytes of byte planes, each n bytes long:

    x lo, y lo, z lo, x hi, y hi, z hi   position deltas: the points are sorted by the Morton code
                                         of their quantised position q (uint16 per axis,
                                         v = origin + q * step); each plane holds the low or high
                                         byte of zigzag(q[i] - q[i-1]) (q[-1] = 0), so close points
                                         give small deltas and the high planes are mostly zeros
    r, g, b                              colour deltas: c[i] - c[i-1] modulo 256 (c[-1] = 0)
    id lo, id hi                         instance id per point (0 = floor / wall structure)

The step is the bbox extent / 65535 but never under `MIN_STEP` (1 mm): finer than scans resolve
and coarse enough that deltas stay small. Dequantising is off by at most half a step per axis.
Sections are gzip because browsers decode it natively (DecompressionStream), whatever storage
serves the file and with which Content-Encoding.

Version 3, for clouds over `VIEWER_BUDGET_POINTS` (the most points the browser keeps): the same
header with L = K octree nodes, then `top` (uint32: the root cube is 2**top quantised units a side),
then per node (breadth first) uint32 points, uint32 section bytes, uint16[3] cell and uint8 depth,
one pad byte; then the K sections in table order, coded as above. A node of depth d and cell c
spans the quantised cube [c * 2**(top - d), (c + 1) * 2**(top - d)) per axis. An inner node holds
a seeded uniform sample of `NODE_POINTS` of the points in its cube that no ancestor holds and
passes the others to its eight children; a node with at most NODE_POINTS such points is a leaf
holding them all. As Potree does, the viewer reads the header, the table and the root (the first
bytes of the file) and then fetches by HTTP range request only the nodes in view at the detail the
view needs, never holding more than its point budget.
"""

import gzip
import struct
import zlib
from collections import deque

import numpy as np

MAGIC = b"HLPC"
VERSION = 2
OCTREE_VERSION = 3
HEADER = struct.Struct("<4sIII3f3f")
LEVEL = struct.Struct("<II")
OCTREE_TOP = struct.Struct("<I")
NODE = struct.Struct("<II3HBx")
QUANT_MAX = 65535
MIN_STEP = 0.001
# Small enough that software GL (this project's test machine) orbits it at 10+ frames a second.
FIRST_LEVEL_POINTS = 100_000
REFINE_LEVEL_POINTS = 300_000
PLANES_PER_POINT = 11
# The viewer's default point budget (VIEWER_BUDGET_POINTS in pointcloud-viewer.js): a cloud up to it
# is one levels file the browser reads whole; a larger one becomes an octree read node by node.
VIEWER_BUDGET_POINTS = 2_000_000
# Points an octree node holds: the root is drawn first and while the camera moves, as level 0 is.
NODE_POINTS = FIRST_LEVEL_POINTS
# Fixed, so encoding the same cloud twice gives the same bytes (and sha256).
LEVEL_SEED = 0


def quantisation(xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Origin and per-axis step (float32) the cloud is quantised with."""
    lo = xyz.min(axis=0) if len(xyz) else np.zeros(3, dtype=np.float32)
    hi = xyz.max(axis=0) if len(xyz) else np.zeros(3, dtype=np.float32)
    step = np.maximum((hi.astype(np.float64) - lo) / QUANT_MAX, MIN_STEP)
    return lo.astype(np.float32), step.astype(np.float32)


def _spread_bits(values: np.ndarray) -> np.ndarray:
    """Move bit k of each 16-bit value to bit 3k, so three axes interleave into one Morton code."""
    v = values.astype(np.uint64)
    for shift, mask in ((16, 0x0000FF0000FF), (8, 0x00F00F00F00F), (4, 0x0C30C30C30C3), (2, 0x249249249249)):
        v = (v | (v << np.uint64(shift))) & np.uint64(mask)
    return v


def morton_codes(quantised: np.ndarray) -> np.ndarray:
    """uint64 Z-order codes of uint16 (n, 3) positions: bit k of x, y, z at bits 3k, 3k+1, 3k+2."""
    code = _spread_bits(quantised[:, 0])
    code |= _spread_bits(quantised[:, 1]) << np.uint64(1)
    code |= _spread_bits(quantised[:, 2]) << np.uint64(2)
    return code


def morton_order(quantised: np.ndarray) -> np.ndarray:
    """Indices that sort uint16 (n, 3) positions along the Z-order curve."""
    return np.argsort(morton_codes(quantised), kind="stable")


def level_split(n: int, first_level: int = FIRST_LEVEL_POINTS) -> list[np.ndarray]:
    """Disjoint point indices per level: a seeded uniform sample first, then the rest in nearly
    equal uniform samples of at most REFINE_LEVEL_POINTS."""
    if n <= first_level:
        return [np.arange(n)]
    order = np.random.default_rng(LEVEL_SEED).permutation(n)
    rest = order[first_level:]
    return [order[:first_level], *np.array_split(rest, -(-len(rest) // REFINE_LEVEL_POINTS))]


def _planes(values: np.ndarray) -> bytes:
    """Column-major bytes of an (n, k) uint8 array: k planes of n bytes."""
    return np.ascontiguousarray(values.T).tobytes()


def encode_section(quantised: np.ndarray, rgb: np.ndarray, instance: np.ndarray) -> bytes:
    delta = np.diff(quantised.astype(np.int32), axis=0, prepend=0)
    zigzag = ((delta << 1) ^ (delta >> 31)).astype("<u2")
    position_bytes = zigzag.view(np.uint8).reshape(len(zigzag), 3, 2)
    colour_delta = np.diff(rgb.astype(np.int16), axis=0, prepend=0).astype(np.uint8)
    id_bytes = instance.astype("<u2").view(np.uint8).reshape(len(instance), 2)
    raw = b"".join(
        [_planes(position_bytes[:, :, 0]), _planes(position_bytes[:, :, 1]), _planes(colour_delta), _planes(id_bytes)]
    )
    return gzip.compress(raw, compresslevel=6, mtime=0)


def _checked(xyz, rgb, instance) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(uint16 quantised positions, rgb, uint16 instance, origin, step) of a cloud, or ValueError."""
    xyz = np.asarray(xyz, dtype=np.float32)
    rgb = np.asarray(rgb, dtype=np.uint8)
    n = len(xyz)
    if xyz.shape != (n, 3) or rgb.shape != (n, 3) or np.shape(instance) != (n,):
        raise ValueError("xyz and rgb must be (N, 3) and instance (N,) for the same N.")
    if n and not 0 <= np.min(instance) <= np.max(instance) <= QUANT_MAX:
        raise ValueError("Instance ids must lie in 0..65535.")
    origin, step = quantisation(xyz)
    quantised = np.empty((n, 3), dtype=np.uint16)
    for axis in range(3):  # axis by axis: one float column at a time, not three (10M points: 120 MB)
        quantised[:, axis] = np.clip(np.rint((xyz[:, axis] - origin[axis]) / step[axis]), 0, QUANT_MAX)
    return quantised, rgb, np.asarray(instance, dtype=np.uint16), origin, step


def encode_viewer_points(
    xyz: np.ndarray, rgb: np.ndarray, instance: np.ndarray, first_level: int = FIRST_LEVEL_POINTS
) -> bytes:
    """Pack points, colours and instance ids into the HLPC v2 layout described above."""
    quantised, rgb, instance, origin, step = _checked(xyz, rgb, instance)
    n = len(quantised)
    levels, sections = [], []
    for indices in level_split(n, first_level):
        indices = indices[morton_order(quantised[indices])]
        sections.append(encode_section(quantised[indices], rgb[indices], instance[indices]))
        levels.append(LEVEL.pack(len(indices), len(sections[-1])))
    header = HEADER.pack(MAGIC, VERSION, n, len(levels), *origin.tolist(), *step.tolist())
    return b"".join([header, *levels, *sections])


def read_header(data: bytes, version: int = VERSION) -> dict:
    """The header fields: points, origin, step and per level (points, section bytes)."""
    if len(data) < HEADER.size:
        raise ValueError("Not an HLPC file: shorter than its header.")
    magic, found, n, n_levels, *numbers = HEADER.unpack_from(data, 0)
    if magic != MAGIC or found != version:
        raise ValueError(f"Not an HLPC v{version} file (magic {magic!r}, version {found}).")
    if len(data) < HEADER.size + LEVEL.size * n_levels:
        raise ValueError("The HLPC file is truncated.")
    levels = [LEVEL.unpack_from(data, HEADER.size + LEVEL.size * i) for i in range(n_levels)]
    return {"points": n, "origin": numbers[:3], "step": numbers[3:], "levels": levels}


def _undelta(planes: np.ndarray) -> np.ndarray:
    return np.cumsum(planes.astype(np.int64), axis=0)


def _decode_section(section: bytes, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One gzip section of n points: int64 (n, 3) quantised positions, uint8 rgb, uint16 ids."""
    try:
        raw = np.frombuffer(gzip.decompress(section), dtype=np.uint8)
    except (OSError, EOFError, zlib.error) as error:
        raise ValueError(f"A level of the HLPC file is damaged: {error}") from error
    if len(raw) != PLANES_PER_POINT * n:
        raise ValueError(f"A level of {n} points decompressed to {len(raw)} bytes, not {PLANES_PER_POINT * n}.")
    planes = raw.reshape(PLANES_PER_POINT, n).T
    zigzag = planes[:, 0:3].astype(np.int64) | (planes[:, 3:6].astype(np.int64) << 8)
    delta = (zigzag >> 1) ^ -(zigzag & 1)
    colours = (_undelta(planes[:, 6:9]) & 0xFF).astype(np.uint8)
    ids = planes[:, 9].astype(np.uint16) | (planes[:, 10].astype(np.uint16) << 8)
    return _undelta(delta) & 0xFFFF, colours, ids


def _dequantised(quantised: np.ndarray, header: dict) -> np.ndarray:
    origin = np.asarray(header["origin"], dtype=np.float64)
    return (origin + quantised * np.asarray(header["step"], dtype=np.float64)).astype(np.float32)


def decode_viewer_points(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inverse of `encode_viewer_points`, points in file order (level by level, Morton order within):
    float32 (N, 3) xyz, uint8 (N, 3) rgb, uint16 (N,) instance."""
    header = read_header(data)
    offset = HEADER.size + LEVEL.size * len(header["levels"])
    quantised, colours, ids = [], [], []
    for n, size in header["levels"]:
        if offset + size > len(data):
            raise ValueError("The HLPC file is truncated.")
        section = _decode_section(data[offset : offset + size], n)
        offset += size
        for out, part in zip((quantised, colours, ids), section, strict=True):
            out.append(part)
    if not quantised:
        return np.zeros((0, 3), np.float32), np.zeros((0, 3), np.uint8), np.zeros(0, np.uint16)
    return _dequantised(np.concatenate(quantised), header), np.concatenate(colours), np.concatenate(ids)


# --- version 3: the octree ------------------------------------------------------------------------


def octree_nodes(quantised: np.ndarray, node_points: int = NODE_POINTS) -> tuple[int, list[tuple]]:
    """(top, nodes) of the octree over uint16 (n, 3) positions: nodes breadth first as
    (depth, (cx, cy, cz), indices), each node's indices in Morton order; every point is in exactly
    one node. Whole columns at once per node: a 10M-point cloud splits in seconds."""
    n = len(quantised)
    top = octree_top(int(quantised.max()) if n else 0)
    # A seeded priority per point: an inner node keeps the node_points smallest, a uniform sample.
    priority = np.random.default_rng(LEVEL_SEED).random(n, dtype=np.float32)
    return top, subtree_nodes(morton_codes(quantised), priority, top, node_points)


def octree_top(largest_quantised: int) -> int:
    """The root cube's side as a power of two (2**top quantised units)."""
    return max(largest_quantised.bit_length(), 1)


def subtree_nodes(codes: np.ndarray, priority: np.ndarray, top: int, node_points: int = NODE_POINTS,
                  depth: int = 0, cell: tuple = (0, 0, 0), presorted: bool = False) -> list[tuple]:
    """The nodes (as octree_nodes gives them, breadth first) of the subtree rooted at the node of
    `depth` and `cell`, over the points in its cube that no ancestor holds: their Morton codes and
    priorities; indices are positions in these arrays. octree_nodes is this from the root; the
    out-of-core builder (octree_disk.py) calls it on each node that fits in memory, with the points
    already in Morton order (`presorted`: no second sort, and the indices are positions)."""
    order = None
    if not presorted:
        order = np.argsort(codes)
        codes = codes[order]  # sorted: a node's points are the ones whose code starts with its prefix
        priority = priority[order]
    nodes, queue = [], deque([(depth, tuple(cell), np.arange(len(codes)))])  # positions in the sorted order
    while queue:
        depth, cell, positions = queue.popleft()
        if len(positions) <= node_points or depth == top:
            nodes.append((depth, cell, positions if order is None else order[positions]))
            continue
        keep = np.zeros(len(positions), dtype=bool)
        keep[np.argpartition(priority[positions], node_points)[:node_points]] = True
        nodes.append((depth, cell, positions[keep] if order is None else order[positions[keep]]))
        rest = positions[~keep]
        octant = (codes[rest] >> np.uint64(3 * (top - depth - 1))) & np.uint64(7)
        bounds = np.searchsorted(octant, np.arange(9, dtype=np.uint64))  # rest is sorted by octant too
        for child in range(8):
            if bounds[child] < bounds[child + 1]:
                corner = tuple(2 * c + (child >> axis & 1) for axis, c in enumerate(cell))
                queue.append((depth + 1, corner, rest[bounds[child] : bounds[child + 1]]))
    return nodes


def encode_octree(xyz: np.ndarray, rgb: np.ndarray, instance: np.ndarray, node_points: int = NODE_POINTS) -> bytes:
    """Pack a cloud into the HLPC v3 octree layout described above."""
    quantised, rgb, instance, origin, step = _checked(xyz, rgb, instance)
    top, nodes = octree_nodes(quantised, node_points)
    table, sections = [], []
    for depth, cell, indices in nodes:
        sections.append(encode_section(quantised[indices], rgb[indices], instance[indices]))
        table.append(NODE.pack(len(indices), len(sections[-1]), *cell, depth))
    header = HEADER.pack(MAGIC, OCTREE_VERSION, len(quantised), len(nodes), *origin.tolist(), *step.tolist())
    return b"".join([header, OCTREE_TOP.pack(top), *table, *sections])


def read_octree(data: bytes) -> dict:
    """The v3 header: points, origin, step, top and per node {depth, cell, points, offset, bytes}
    (offset and bytes: the node's section, as a range request asks for it)."""
    header = read_header(data, OCTREE_VERSION)
    count = len(header.pop("levels"))
    offset = HEADER.size + OCTREE_TOP.size + NODE.size * count
    if len(data) < offset:
        raise ValueError("The HLPC file is truncated.")
    header["top"] = OCTREE_TOP.unpack_from(data, HEADER.size)[0]
    header["nodes"] = []
    for i in range(count):
        points, size, cx, cy, cz, depth = NODE.unpack_from(data, HEADER.size + OCTREE_TOP.size + NODE.size * i)
        header["nodes"].append({"depth": depth, "cell": (cx, cy, cz), "points": points, "offset": offset,
                                "bytes": size})
        offset += size
    return header


def decode_octree_node(section: bytes, node: dict, header: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A node's section (the bytes of its range) as float32 xyz, uint8 rgb, uint16 instance."""
    quantised, colours, ids = _decode_section(section, node["points"])
    return _dequantised(quantised, header), colours, ids
