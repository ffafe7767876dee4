"""The compact point-cloud binary the browser viewer loads ("HLPC", version 1).

Layout, all little-endian, every section starting at an even byte offset:

    offset      size      field
    0           4         magic b"HLPC"
    4           4         uint32 version (1)
    8           4         uint32 N, number of points
    12          12        float32[3] bbox min (x, y, z)
    24          12        float32[3] bbox max (x, y, z)
    36          6N        uint16[N, 3] positions, quantised per axis: q = round((v - min) / (max - min) * 65535)
    36+6N       3N        uint8[N, 3] colours (r, g, b)
    36+9N       N % 2     zero padding, so the next uint16 section is 2-byte aligned for a JS Uint16Array
    36+9N+pad   2N        uint16[N] instance id per point (0 = floor / wall structure)

Dequantise with v = min + q / 65535 * (max - min); the error is at most half a step per axis.
An axis with zero extent stores q = 0.
"""

import struct

import numpy as np

MAGIC = b"HLPC"
VERSION = 1
HEADER = struct.Struct("<4sII3f3f")
QUANT_MAX = 65535


def _extent(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    extent = (hi - lo).astype(np.float64)
    # A flat axis has nothing to quantise; dividing by 1 keeps every q at 0.
    return np.where(extent > 0, extent, 1.0)


def encode_viewer_points(xyz: np.ndarray, rgb: np.ndarray, instance: np.ndarray) -> bytes:
    """Pack points, colours and instance ids into the HLPC v1 layout described above."""
    xyz = np.asarray(xyz, dtype=np.float32)
    rgb = np.asarray(rgb, dtype=np.uint8)
    instance = np.asarray(instance, dtype=np.uint16)
    n = len(xyz)
    if xyz.shape != (n, 3) or rgb.shape != (n, 3) or instance.shape != (n,):
        raise ValueError("xyz and rgb must be (N, 3) and instance (N,) for the same N.")
    if n == 0:
        lo = hi = np.zeros(3, dtype=np.float32)
    else:
        lo, hi = xyz.min(axis=0), xyz.max(axis=0)
    scaled = (xyz.astype(np.float64) - lo) / _extent(lo, hi) * QUANT_MAX
    quantised = np.clip(np.rint(scaled), 0, QUANT_MAX).astype("<u2")
    padding = b"\x00" * (n % 2)
    return b"".join(
        [
            HEADER.pack(MAGIC, VERSION, n, *lo.tolist(), *hi.tolist()),
            quantised.tobytes(),
            rgb.tobytes(),
            padding,
            instance.astype("<u2").tobytes(),
        ]
    )


def decode_viewer_points(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inverse of `encode_viewer_points`: float32 (N, 3) xyz, uint8 (N, 3) rgb, uint16 (N,) instance."""
    magic, version, n, *bounds = HEADER.unpack_from(data, 0)
    if magic != MAGIC or version != VERSION:
        raise ValueError(f"Not an HLPC v{VERSION} file (magic {magic!r}, version {version}).")
    lo = np.array(bounds[:3], dtype=np.float32)
    hi = np.array(bounds[3:], dtype=np.float32)
    offset = HEADER.size
    quantised = np.frombuffer(data, dtype="<u2", count=n * 3, offset=offset).reshape(n, 3)
    offset += 6 * n
    rgb = np.frombuffer(data, dtype=np.uint8, count=n * 3, offset=offset).reshape(n, 3).copy()
    offset += 3 * n + n % 2
    instance = np.frombuffer(data, dtype="<u2", count=n, offset=offset).astype(np.uint16)
    xyz = lo + quantised.astype(np.float64) / QUANT_MAX * _extent(lo, hi) * (hi > lo)
    return xyz.astype(np.float32), rgb, instance
