"""LAS and LAZ point clouds (ASPRS LAS 1.0–1.4; LAZ through lazrs), the formats survey scanners and
mobile mapping write. Read into the same (xyz, rgb, instance) arrays as a PLY (scans.read_ply)."""

import io

import laspy
import numpy as np

from .scans import ScanError

LAS_SUFFIXES = (".las", ".laz")


def read_las(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[float]]:
    """float32 (N, 3) xyz relative to the cloud's minimum corner, uint8 (N, 3) rgb, zero instance ids, and
    that corner (the survey coordinates of the local origin). Survey coordinates (UTM eastings of 500 km,
    northings of 5,000 km) lose centimetres in float32, so the points are moved to a local origin in
    float64 first and the origin is kept with the scene. Points without colour are grey."""
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
