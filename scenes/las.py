"""LAS and LAZ point clouds (ASPRS LAS 1.0–1.4; LAZ through lazrs), the formats survey scanners and
mobile mapping write. Read into the same (xyz, rgb, instance) arrays as a PLY (scans.read_ply)."""

import io
from pathlib import Path

import laspy
import numpy as np

from .scans import ScanError

LAS_SUFFIXES = (".las", ".laz")
LAZ_MAX_RATIO = 50  # LAZ stores a point in 1/5 to 1/20 of its record: a header promising more is a lie


def check_point_count(source, size: int) -> None:
    """The header's point count against what the file can hold (`size` bytes), before any point is read:
    a LAS file holds its records uncompressed, a LAZ file at most LAZ_MAX_RATIO times compressed. A
    header claiming 4.29e9 points in a small file is refused (ScanError), never allocated."""
    try:
        with laspy.open(source, closefd=isinstance(source, str | Path)) as reader:
            header = reader.header
            count, record, offset = header.point_count, header.point_format.size, header.offset_to_point_data
            compressed = header.are_points_compressed
    except (laspy.errors.LaspyException, ValueError, OSError) as exc:
        raise ScanError(f"not a readable LAS/LAZ file ({exc})") from None
    room = max(size - offset, 0) * (LAZ_MAX_RATIO if compressed else 1)
    if count * record > room:
        raise ScanError(f"the header promises {count} points, more than the file's {size} bytes hold")


def read_las(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[float]]:
    """float32 (N, 3) xyz relative to the cloud's minimum corner, uint8 (N, 3) rgb, zero instance ids, and
    that corner (the survey coordinates of the local origin). Survey coordinates (UTM eastings of 500 km,
    northings of 5,000 km) lose centimetres in float32, so the points are moved to a local origin in
    float64 first and the origin is kept with the scene. Points without colour are grey."""
    check_point_count(io.BytesIO(data), len(data))
    try:
        cloud = laspy.read(io.BytesIO(data))
    except (laspy.errors.LaspyException, ValueError, OSError) as exc:
        raise ScanError(f"not a readable LAS/LAZ file ({exc})") from None
    n = len(cloud.points)
    if n == 0:
        raise ScanError("the file has no points")
    xyz64 = np.column_stack([np.asarray(cloud.x, dtype=np.float64), np.asarray(cloud.y, dtype=np.float64),
                             np.asarray(cloud.z, dtype=np.float64)])
    origin = xyz64.min(axis=0)
    xyz = (xyz64 - origin).astype(np.float32)
    names = set(cloud.point_format.dimension_names)
    if {"red", "green", "blue"} <= names:
        rgb16 = np.column_stack([np.asarray(cloud.red), np.asarray(cloud.green), np.asarray(cloud.blue)])
        # The spec stores 16-bit colour; some writers put 8-bit values in those fields.
        rgb = (rgb16 >> 8 if rgb16.max() > 255 else rgb16).astype(np.uint8)
    else:
        rgb = np.full((n, 3), 128, dtype=np.uint8)
    return xyz, rgb, np.zeros(n, dtype=np.uint16), [round(float(v), 6) for v in origin]


def _rgb(points, names: set, sixteen_bit: bool, n: int) -> np.ndarray:
    if not {"red", "green", "blue"} <= names:
        return np.full((n, 3), 128, dtype=np.uint8)
    rgb16 = np.column_stack([np.asarray(points.red), np.asarray(points.green), np.asarray(points.blue)])
    return (rgb16 >> 8 if sixteen_bit else rgb16).astype(np.uint8)


def las_chunks(path, chunk_points: int = 1_000_000):
    """(chunks, origin): a function yielding the file's points chunk by chunk as read_las gives them
    (float32 xyz from the local origin, uint8 rgb, zero ids), through laspy's chunk iterator, so a
    LAS or LAZ file of any size costs one chunk of memory; and the origin (the header's minimum
    corner, which writers keep: laspy updates it on write). Whether colours are 16-bit is told from
    the first chunk (a 16-bit file has values over 255 there unless the scene is black)."""
    try:
        with laspy.open(path) as reader:
            origin = np.asarray(reader.header.mins, dtype=np.float64)
            names = set(reader.header.point_format.dimension_names)
            count = reader.header.point_count
            first = next(reader.chunk_iterator(chunk_points), None)
    except (laspy.errors.LaspyException, ValueError, OSError) as exc:
        raise ScanError(f"not a readable LAS/LAZ file ({exc})") from None
    if not count or first is None or not len(first):
        raise ScanError("the file has no points")
    sixteen_bit = bool({"red", "green", "blue"} <= names and max(
        int(np.max(first.red)), int(np.max(first.green)), int(np.max(first.blue))) > 255)

    def chunks():
        with laspy.open(path) as reader:
            for points in reader.chunk_iterator(chunk_points):
                n = len(points)
                xyz = np.empty((n, 3), dtype=np.float32)
                for axis, values in enumerate((points.x, points.y, points.z)):
                    xyz[:, axis] = np.asarray(values, dtype=np.float64) - origin[axis]
                yield xyz, _rgb(points, names, sixteen_bit, n), np.zeros(n, dtype=np.uint16)

    return chunks, [round(float(v), 6) for v in origin]


def read_las_file(path, chunk_points: int = 1_000_000) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[float]]:
    """read_las over a file on disk, chunk by chunk into arrays of the final size (15 bytes a point),
    never the whole file's bytes and laspy's parsed copy of them at once."""
    check_point_count(path, Path(path).stat().st_size)
    chunks, origin = las_chunks(path, chunk_points)
    with laspy.open(path) as reader:
        n = reader.header.point_count
    xyz, rgb, instance = np.empty((n, 3), np.float32), np.empty((n, 3), np.uint8), np.zeros(n, np.uint16)
    start = 0
    for part_xyz, part_rgb, _ in chunks():
        xyz[start:start + len(part_xyz)], rgb[start:start + len(part_xyz)] = part_xyz, part_rgb
        start += len(part_xyz)
    if start != n:
        raise ScanError(f"truncated: the header promises {n} points, the file holds {start}")
    return xyz, rgb, instance, origin
