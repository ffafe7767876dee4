"""Small RGB-D captures written by the tests as ScanNet and 3RScan store them: a `.sens` file (ScanNet's
SensorData layout, version 4), and a 3RScan `sequence/` folder."""

import io
import struct
import zlib
from pathlib import Path

import numpy as np
from PIL import Image

COLOUR = (32, 24)
DEPTH = (16, 12)
INTRINSIC = [[30.0, 0.0, 16.0, 0.0], [0.0, 31.0, 12.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]


def jpeg(shade: int, size=COLOUR) -> bytes:
    """A colour frame told apart by its shade."""
    out = io.BytesIO()
    Image.new("RGB", size, (shade, 255 - shade, 90)).save(out, format="JPEG")
    return out.getvalue()


def pose(k: int) -> list[list[float]]:
    """Frame k's camera-to-world pose: turned by k/4 rad about z, 0.5 m along x per frame."""
    c, s = float(np.cos(k / 4)), float(np.sin(k / 4))
    return [[c, -s, 0.0, 0.5 * k], [s, c, 0.0, 1.0], [0.0, 0.0, 1.0, 1.5], [0.0, 0.0, 0.0, 1.0]]


def frames(count: int) -> list[dict]:
    return [{"pose": pose(k), "timestamp": 1_000_000 + 33_333 * k, "image": jpeg(40 * k + 10)} for k in range(count)]


def _floats(matrix) -> bytes:
    return struct.pack("<16f", *np.asarray(matrix, dtype=np.float32).ravel())


def sens_bytes(captured: list[dict], *, frame_count: int | None = None, version: int = 4) -> bytes:
    """A .sens file of these frames ({pose, timestamp, image}); `frame_count` makes the header lie."""
    header = struct.pack("<I", version) + struct.pack("<Q", 14) + b"StructureTest\x00"
    header += _floats(INTRINSIC) + _floats(np.eye(4)) + _floats(INTRINSIC) + _floats(np.eye(4))
    header += struct.pack("<ii", 2, 1) + struct.pack("<4I", *COLOUR, *DEPTH) + struct.pack("<f", 1000.0)
    header += struct.pack("<Q", len(captured) if frame_count is None else frame_count)
    body = b""
    for frame in captured:
        depth = zlib.compress(np.full(DEPTH[::-1], 1500, dtype=np.uint16).tobytes())
        body += _floats(frame["pose"]) + struct.pack("<QQQQ", frame["timestamp"], frame["timestamp"],
                                                     len(frame["image"]), len(depth))
        body += frame["image"] + depth
    return header + body


def write_sens(path: Path, captured: list[dict], **lie) -> Path:
    path.write_bytes(sens_bytes(captured, **lie))
    return path


def write_rscan_sequence(folder: Path, captured: list[dict]) -> Path:
    """A 3RScan `sequence/` folder: `_info.txt` and per frame its colour JPEG, depth PGM and pose."""
    folder.mkdir(parents=True, exist_ok=True)
    intrinsic = " ".join(str(v) for row in INTRINSIC for v in row)
    (folder / "_info.txt").write_text(
        f"m_versionNumber = 4\nm_sensorName = StructureSDK\nm_colorWidth = {COLOUR[0]}\nm_colorHeight = {COLOUR[1]}\n"
        f"m_depthWidth = {DEPTH[0]}\nm_depthHeight = {DEPTH[1]}\nm_depthShift = 1000\n"
        f"m_calibrationColorIntrinsic = {intrinsic}\nm_calibrationDepthIntrinsic = {intrinsic}\n"
        f"m_frames.size = {len(captured)}\n")
    for k, frame in enumerate(captured):
        (folder / f"frame-{k:06d}.color.jpg").write_bytes(frame["image"])
        (folder / f"frame-{k:06d}.depth.pgm").write_bytes(b"P5\n16 12\n65535\n" + bytes(16 * 12 * 2))
        (folder / f"frame-{k:06d}.pose.txt").write_text("\n".join(" ".join(str(v) for v in row)
                                                                  for row in frame["pose"]) + "\n")
    return folder
