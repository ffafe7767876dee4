"""The HLPC v3 octree (pointcloud.py) built out of core, for scans of any size in bounded memory.

The in-memory builder (`pointcloud.encode_octree`) holds the whole cloud and about 60 bytes a point
of sort keys: a 10M-point scan peaks at 1.35 GB. Here the cloud arrives as chunks (a PLY mapped
from disk, a LAS/LAZ file read with laspy's chunk iterator, see `ply_chunks` and `las.las_chunks`)
and goes to disk as fixed-size records (uint16[3] quantised position, float32 priority, rgb,
uint16 instance: 15 bytes), one spill file per octree node:

1. a first pass finds the bounding box (the quantisation and the root cube, as `quantisation`);
2. a node with more points than `memory_points` is split by streaming its records twice: once for
   the `node_points` smallest priorities (the node's own uniform sample; ties go to the earliest
   records), once to write every other record to the spill file of its child octant;
3. a node that fits (at most `memory_points` points) is read whole and finished in memory by
   `pointcloud.subtree_nodes`, the code the in-memory builder runs from the root, so both give
   the same nodes.

Priorities are the in-memory builder's (a seeded uniform draw per point in input order, drawn
chunk by chunk from the same generator) and spill files keep input order, so for the same cloud
the file is the in-memory builder's up to the order of points with equal positions within a
node, and equal to its bytes when no two points share a quantised position. Encoded sections
go to a scratch file as nodes finish; the output is the header, the node table in breadth-first
order (depth, then the cell's Morton code: the order the in-memory queue gives) and the sections
copied in that order. Peak memory: one `memory_points` node (about 70 bytes a point while it is
sorted) or one chunk, whichever is larger; disk: the spill files (15 bytes a point) and the output.
"""

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from .pointcloud import (
    HEADER,
    LEVEL_SEED,
    MAGIC,
    MIN_STEP,
    NODE,
    NODE_POINTS,
    OCTREE_TOP,
    OCTREE_VERSION,
    QUANT_MAX,
    encode_section,
    morton_codes,
    octree_top,
    subtree_nodes,
)

RECORD = np.dtype([("q", "<u2", 3), ("priority", "<f4"), ("rgb", "u1", 3), ("instance", "<u2")])
RAW = np.dtype(f"V{RECORD.itemsize}")
CHUNK_POINTS = 1_000_000
# A node up to this many points is finished in memory (about 70 bytes a point while sorted: 420 MB).
MEMORY_POINTS = 6_000_000

Chunk = tuple[np.ndarray, np.ndarray, np.ndarray]  # float32 (n, 3) xyz, uint8 (n, 3) rgb, uint16 (n,) ids
Chunks = Callable[[], Iterator[Chunk]]  # each call starts the cloud again from its first point


def _bounds(chunks: Chunks) -> tuple[int, np.ndarray, np.ndarray]:
    n, lo, hi = 0, None, None
    for xyz, rgb, instance in chunks():
        m = len(xyz)
        if np.shape(xyz) != (m, 3) or np.shape(rgb) != (m, 3) or np.shape(instance) != (m,):
            raise ValueError("xyz and rgb must be (N, 3) and instance (N,) for the same N.")
        if not m:
            continue
        if not 0 <= np.min(instance) <= np.max(instance) <= QUANT_MAX:
            raise ValueError("Instance ids must lie in 0..65535.")
        chunk_lo, chunk_hi = np.min(xyz, axis=0), np.max(xyz, axis=0)
        lo = chunk_lo if lo is None else np.minimum(lo, chunk_lo)
        hi = chunk_hi if hi is None else np.maximum(hi, chunk_hi)
        n += m
    if lo is None:
        raise ValueError("The cloud has no points.")
    return n, lo.astype(np.float32), hi.astype(np.float32)


def _quantised(xyz: np.ndarray, origin: np.ndarray, step: np.ndarray) -> np.ndarray:
    """As pointcloud._checked does it, axis by axis in float32."""
    xyz = np.asarray(xyz, dtype=np.float32)
    out = np.empty((len(xyz), 3), dtype=np.uint16)
    for axis in range(3):
        out[:, axis] = np.clip(np.rint((xyz[:, axis] - origin[axis]) / step[axis]), 0, QUANT_MAX)
    return out


def _root_records(chunks: Chunks, origin, step) -> Callable[[], Iterator[np.ndarray]]:
    def records():
        rng = np.random.default_rng(LEVEL_SEED)  # the in-memory builder's draw, chunk by chunk
        for xyz, rgb, instance in chunks():
            out = np.empty(len(xyz), dtype=RECORD)
            out["q"] = _quantised(xyz, origin, step)
            out["priority"] = rng.random(len(xyz), dtype=np.float32)
            out["rgb"] = rgb
            out["instance"] = instance
            yield out
    return records


def _file_records(path: Path, chunk_points: int) -> Callable[[], Iterator[np.ndarray]]:
    def records():
        with open(path, "rb") as handle:
            while True:
                block = np.fromfile(handle, dtype=RECORD, count=chunk_points)
                if not len(block):
                    return
                yield block
    return records


class _Writer:
    """Encoded sections to a scratch file as nodes finish; the node table beside them."""

    def __init__(self, path: Path):
        self.handle = open(path, "w+b")  # noqa: SIM115 - closed in assemble
        self.rows: list[tuple[int, tuple, int, int, int]] = []  # depth, cell, points, offset, bytes

    def node(self, depth: int, cell: tuple, records: np.ndarray, in_morton_order: bool = False) -> None:
        if not in_morton_order:
            records = _gather(records, np.argsort(morton_codes(records["q"]), kind="stable"))
        section = encode_section(records["q"], records["rgb"], records["instance"])
        self.rows.append((depth, tuple(int(c) for c in cell), len(records), self.handle.tell(), len(section)))
        self.handle.write(section)

    def assemble(self, out_path: Path, n: int, origin, step, top: int) -> list[dict]:
        """The HLPC v3 file: header, top, the table breadth first, the sections in table order."""
        cells = np.array([row[1] for row in self.rows], dtype=np.uint16).reshape(-1, 3)
        depths = np.array([row[0] for row in self.rows])
        order = np.lexsort((morton_codes(cells), depths))
        self.handle.flush()
        nodes = []
        with open(out_path, "wb") as out:
            out.write(HEADER.pack(MAGIC, OCTREE_VERSION, n, len(self.rows), *origin.tolist(), *step.tolist()))
            out.write(OCTREE_TOP.pack(top))
            for i in order:
                depth, cell, points, _, size = self.rows[i]
                out.write(NODE.pack(points, size, *cell, depth))
                nodes.append({"depth": depth, "cell": cell, "points": points, "bytes": size})
            for i in order:
                _, _, _, offset, size = self.rows[i]
                out.write(os.pread(self.handle.fileno(), size, offset))
        self.handle.close()
        return nodes


def _root_priorities(n: int, chunk_points: int) -> Callable[[], Iterator[np.ndarray]]:
    """The root's priorities without reading the cloud: they are the seeded draw alone."""
    def priorities():
        rng = np.random.default_rng(LEVEL_SEED)
        for start in range(0, n, chunk_points):
            yield rng.random(min(chunk_points, n - start), dtype=np.float32)
    return priorities


def _smallest(priorities: Callable[[], Iterator[np.ndarray]], k: int) -> tuple[float, int]:
    """The k-th smallest priority of a node's records and how many records equal to it the node keeps
    (the earliest ones), by one streaming pass holding at most k + one chunk of priorities."""
    best = np.zeros(0, dtype=np.float32)
    for block in priorities():
        both = np.concatenate([best, block])
        best = np.partition(both, k - 1)[:k] if len(both) > k else both
    threshold = float(np.max(best))
    return threshold, k - int(np.count_nonzero(best < np.float32(threshold)))


def _split(records, priorities, depth: int, cell: tuple, top: int, node_points: int, folder: Path,
           writer: _Writer):
    """A node too large for memory: its sample to the writer, the rest to its children's spill files.
    Returns the children as (depth, cell, path, points)."""
    threshold, ties = _smallest(priorities, node_points)
    threshold = np.float32(threshold)
    kept, counts = [], [0] * 8
    paths = [folder / f"d{depth + 1}_{'_'.join(str(2 * c + (child >> a & 1)) for a, c in enumerate(cell))}.rec"
             for child in range(8)]
    handles = [open(path, "wb") for path in paths]  # noqa: SIM115 - closed below
    shift = top - depth - 1
    try:
        for block in records():
            keep = block["priority"] < threshold
            if ties:
                equal = np.flatnonzero(block["priority"] == threshold)[:ties]
                keep[equal] = True
                ties -= len(equal)
            kept.append(block[keep])
            rest = block[~keep]
            q = rest["q"]
            octant = ((q[:, 0] >> shift) & 1) | (((q[:, 1] >> shift) & 1) << 1) | (((q[:, 2] >> shift) & 1) << 2)
            order = np.argsort(octant, kind="stable")
            bounds = np.searchsorted(octant[order], np.arange(9))
            for child in range(8):
                if bounds[child] < bounds[child + 1]:
                    handles[child].write(_gather(rest, order[bounds[child]:bounds[child + 1]]).tobytes())
                    counts[child] += int(bounds[child + 1] - bounds[child])
    finally:
        for handle in handles:
            handle.close()
    writer.node(depth, cell, np.concatenate(kept))
    children = []
    for child in range(8):
        corner = tuple(2 * c + (child >> axis & 1) for axis, c in enumerate(cell))
        if counts[child]:
            children.append((depth + 1, corner, paths[child], counts[child]))
        else:
            paths[child].unlink()
    return children


def _gather(records: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """records[indices], as raw 15-byte items (numpy gathers a structured dtype field by field: 2x slower)."""
    return records.view(RAW)[indices].view(RECORD)


def _codes(q: np.ndarray, chunk_points: int = CHUNK_POINTS) -> np.ndarray:
    """morton_codes a chunk at a time: its temporaries cost a chunk, not five copies of the node."""
    codes = np.empty(len(q), dtype=np.uint64)
    for start in range(0, len(q), chunk_points):
        codes[start:start + chunk_points] = morton_codes(q[start:start + chunk_points])
    return codes


def _finish_in_memory(load: Callable[[], np.ndarray], depth: int, cell: tuple, top: int, node_points: int,
                      writer: _Writer) -> None:
    """A node that fits: its records read whole, put in Morton order, its subtree built and written."""
    records = load()
    codes = _codes(records["q"])
    order = np.argsort(codes, kind="stable")  # Morton order first: each node's gather below reads forwards
    records = _gather(records, order)
    codes = codes[order]
    del order
    nodes = subtree_nodes(codes, records["priority"], top, node_points, depth, cell, presorted=True)
    del codes
    for node_depth, node_cell, indices in nodes:
        writer.node(node_depth, node_cell, _gather(records, indices), in_morton_order=True)


def build_octree_file(chunks: Chunks, out_path, *, node_points: int = NODE_POINTS,
                      memory_points: int = MEMORY_POINTS, chunk_points: int = CHUNK_POINTS,
                      scratch: str | None = None) -> dict:
    """Write the HLPC v3 octree of the cloud `chunks()` yields to `out_path`; returns its meta as
    processing.viewer_points gives it (points, bbox, step, nodes, depth, ...). `scratch` is where the
    spill files go (a temporary folder beside the output when not given)."""
    if memory_points < 2 * node_points:
        raise ValueError("memory_points must hold at least two nodes.")
    out_path = Path(out_path)
    n, lo, hi = _bounds(chunks)
    step = np.maximum((hi.astype(np.float64) - lo) / QUANT_MAX, MIN_STEP).astype(np.float32)
    top = octree_top(int(_quantised(hi[None, :], lo, step).max()))
    folder = Path(tempfile.mkdtemp(prefix="octree-", dir=scratch or out_path.parent))
    try:
        writer = _Writer(folder / "sections.bin")
        stack = [(0, (0, 0, 0), None, n)]  # depth first: at most 8 spill files a level wait on disk
        while stack:
            depth, cell, path, count = stack.pop()
            records = _root_records(chunks, lo, step) if path is None else _file_records(path, chunk_points)
            if count <= memory_points or depth == top:
                load = (lambda records=records: np.concatenate(list(records()))) if path is None else (  # noqa: E731
                    lambda path=path: np.fromfile(path, dtype=RECORD))
                _finish_in_memory(load, depth, cell, top, node_points, writer)
            else:
                if path is None:
                    priorities = _root_priorities(n, chunk_points)
                else:
                    priorities = lambda records=records: (block["priority"] for block in records())  # noqa: E731
                stack.extend(reversed(_split(records, priorities, depth, cell, top, node_points, folder, writer)))
            if path is not None:
                path.unlink()
        nodes = writer.assemble(out_path, n, lo, step, top)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    size = out_path.stat().st_size
    return {"format": "HLPC", "version": OCTREE_VERSION, "points": n, "bbox": [lo.tolist(), hi.tolist()],
            "step": step.tolist(), "bytes_per_point": round(size / n, 3), "nodes": len(nodes),
            "depth": max(node["depth"] for node in nodes), "node_points": node_points}


def array_chunks(xyz: np.ndarray, rgb: np.ndarray, instance: np.ndarray, chunk_points: int = CHUNK_POINTS) -> Chunks:
    """Chunks of arrays already in memory (tests, small clouds)."""
    def chunks():
        for start in range(0, len(xyz), chunk_points):
            yield xyz[start:start + chunk_points], rgb[start:start + chunk_points], instance[start:start + chunk_points]
    return chunks

