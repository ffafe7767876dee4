"""RGB-D captures as posed colour frames: ScanNet's `.sens` (read in a stream), the folders ScanNet's
SensReader exports from it (`color/`, `pose/`, `intrinsic/`) and 3RScan's `sequence/` folders.

A `.sens` file (ScanNet's SensorData format, version 4; little-endian) is a header (version, sensor
name, colour and depth intrinsics and extrinsics as 4x4 float32, compression types, colour and depth
sizes, depth shift, frame count), then per frame its camera-to-world pose (4x4 float32), colour and
depth timestamps, the two payload sizes and the payloads (colour JPEG, depth zlib-compressed uint16);
IMU records may follow the frames. A scene's file is gigabytes: the reader walks the frame headers,
seeking past every payload, then reads the colour bytes of the frames it keeps only. Every count and
size is checked against the file's size before anything is allocated, so a truncated file or a
header that lies is refused (RGBDError naming what is wrong), never half read.

Poses are kept as the source gives them (OpenCV axes: x right, y down, z forward; the scan's own
frame). ScanNet marks a frame whose tracking was lost with a pose of -inf: such frames are skipped."""

import io
import math
import os
import re
import struct
from dataclasses import dataclass
from pathlib import PurePosixPath

from PIL import Image, UnidentifiedImageError

SENS_VERSION = 4
MAX_SENSOR_NAME = 1024  # bytes; ScanNet writes "StructureSensor" and the like
MAX_SIDE = 16384  # pixels: a colour or depth size beyond is a lying header
# The header after the sensor name: 4 matrices, 2 compression types, 4 sizes, depth shift, frame count.
HEADER = struct.Struct("<64f2i4IfQ")
# Before each frame's payloads: pose, colour and depth timestamps, colour and depth byte counts.
FRAME = struct.Struct("<16f4Q")
JPEG = 2  # SensorData's colour compression types: -1 unknown, 0 raw, 1 png, 2 jpeg
RSCAN_FRAME = re.compile(r"^frame-(\d{6})\.color\.jpg$")
SCANNET_EXPORT_FRAME = re.compile(r"^color/(\d+)\.jpg$")


class RGBDError(ValueError):
    pass


@dataclass(frozen=True)
class PosedColour:
    """One colour frame with its camera: `pose` camera-to-world (4x4 rows, as the source gives it),
    `intrinsics` {width, height, fx, fy, cx, cy}, `timestamp` the colour timestamp (.sens: microseconds;
    None where the source has none), `image` the JPEG's bytes as stored in the source."""

    index: int
    timestamp: int | None
    pose: list[list[float]]
    intrinsics: dict
    image: bytes


def evenly_spaced(count: int, n: int) -> list[int]:
    """The positions of n of `count` things at the centres of n equal slices (as video frames are
    sampled, video.sample_frames); all of them when n >= count."""
    if n >= count:
        return list(range(count))
    return [int((i + 0.5) * count / n) for i in range(n)]


def _finite_pose(values) -> list[list[float]] | None:
    if not all(math.isfinite(v) for v in values):
        return None
    return [[float(v) for v in values[row * 4:row * 4 + 4]] for row in range(4)]


def _intrinsics(matrix, width: int, height: int) -> dict:
    """The colour camera of a 4x4 (or 3x3) intrinsic matrix given row by row."""
    side = 4 if len(matrix) == 16 else 3
    fx, fy, cx, cy = matrix[0], matrix[side + 1], matrix[2], matrix[side + 2]
    if not all(math.isfinite(v) for v in (fx, fy, cx, cy)) or fx <= 0 or fy <= 0:
        raise RGBDError("the colour intrinsics are not a camera's (fx and fy positive, all finite)")
    return {"width": width, "height": height, "fx": float(fx), "fy": float(fy), "cx": float(cx), "cy": float(cy)}


def _read(handle, n: int, what: str) -> bytes:
    data = handle.read(n)
    if len(data) != n:
        raise RGBDError(f"truncated: {what} runs past the end of the file")
    return data


def _checked_image(data: bytes, what: str, size: tuple[int, int] | None = None) -> tuple[int, int]:
    try:
        with Image.open(io.BytesIO(data)) as image:
            found = image.size
            if image.format != "JPEG":
                raise RGBDError(f"{what}: not a JPEG image")
            image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError):
        raise RGBDError(f"{what}: not a readable JPEG image") from None
    if size is not None and found != size:
        raise RGBDError(f"{what}: the colour image is {found[0]}x{found[1]}, the header says {size[0]}x{size[1]}")
    return found


def read_sens(path, keep: int) -> list[PosedColour]:
    """Up to `keep` colour frames of the `.sens` file, evenly spaced over its frames with a finite pose."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        (version,) = struct.unpack("<I", _read(handle, 4, "the version"))
        if version != SENS_VERSION:
            raise RGBDError(f"not a ScanNet .sens file of version {SENS_VERSION} (version {version})")
        (name_length,) = struct.unpack("<Q", _read(handle, 8, "the sensor name's length"))
        if name_length > MAX_SENSOR_NAME:
            raise RGBDError(f"the sensor name's length {name_length} is over {MAX_SENSOR_NAME} bytes")
        _read(handle, name_length, "the sensor name")
        fields = HEADER.unpack(_read(handle, HEADER.size, "the header"))
        intrinsic_color = fields[:16]
        color_type, _, color_width, color_height, depth_width, depth_height, _, frame_count = fields[64:]
        if color_type != JPEG:
            raise RGBDError(f"colour compression type {color_type}: only JPEG colour ({JPEG}) is read")
        sides = {"colour width": color_width, "colour height": color_height, "depth width": depth_width,
                 "depth height": depth_height}
        for what, side in sides.items():
            if not 1 <= side <= MAX_SIDE:
                raise RGBDError(f"the {what} {side} is not from 1 to {MAX_SIDE}")
        intrinsics = _intrinsics(intrinsic_color, color_width, color_height)
        if frame_count < 1 or frame_count * FRAME.size > size - handle.tell():
            raise RGBDError(f"the header promises {frame_count} frames, more than the file's {size} bytes hold"
                            if frame_count else "the file has no frames")
        frames = []  # (index, pose, colour timestamp, colour offset, colour size) of each posed frame
        for index in range(frame_count):
            *pose_values, color_stamp, _, color_size, depth_size = FRAME.unpack(
                _read(handle, FRAME.size, f"frame {index}'s header"))
            start = handle.tell()
            if color_size < 1:
                raise RGBDError(f"frame {index} has no colour image")
            if start + color_size + depth_size > size:
                raise RGBDError(f"truncated: frame {index}'s colour and depth ({color_size} + {depth_size} bytes) "
                                "run past the end of the file")
            pose = _finite_pose(pose_values)
            if pose is not None:
                frames.append((index, pose, color_stamp, start, color_size))
            handle.seek(color_size + depth_size, os.SEEK_CUR)
        if not frames:
            raise RGBDError("no frame has a finite pose (every one lost its tracking)")
        kept = []
        for position in evenly_spaced(len(frames), keep):
            index, pose, stamp, start, color_size = frames[position]
            handle.seek(start)
            image = _read(handle, color_size, f"frame {index}'s colour")
            _checked_image(image, f"frame {index}", (color_width, color_height))
            kept.append(PosedColour(index, stamp, pose, intrinsics, image))
    return kept


def _matrix(text: str, what: str) -> list[float]:
    try:
        values = [float(v) for v in text.split()]
    except ValueError:
        raise RGBDError(f"{what}: not numbers") from None
    if len(values) not in (9, 16):
        raise RGBDError(f"{what}: {len(values)} numbers, not a 4x4 (or 3x3) matrix")
    return values


def _pose(text: str, what: str) -> list[list[float]] | None:
    values = _matrix(text, what)
    if len(values) != 16:
        raise RGBDError(f"{what}: a pose is 16 numbers (a 4x4 camera-to-world matrix)")
    return _finite_pose(values)


def _info(text: str) -> dict[str, str]:
    """3RScan's `_info.txt`: `key = value` lines."""
    return {key.strip(): value.strip() for key, sep, value in (line.partition("=") for line in text.splitlines())
            if sep}


def sequence_format(files: dict) -> str | None:
    """"3rscan" for a 3RScan sequence folder (`frame-XXXXXX.color.jpg` and `_info.txt`), "scannet" for
    SensReader's export (`color/N.jpg`, `pose/N.txt`, `intrinsic/intrinsic_color.txt`), else None.
    `files`: {path in the folder: bytes}."""
    names = {PurePosixPath(name).name for name in files}
    if "_info.txt" in names and any(RSCAN_FRAME.match(name) for name in names):
        return "3rscan"
    if any(SCANNET_EXPORT_FRAME.match(_tail(name, 2)) for name in files):
        return "scannet"
    return None


def _tail(name: str, parts: int) -> str:
    return "/".join(PurePosixPath(name).parts[-parts:])


def read_sequence(files: dict, keep: int) -> list[PosedColour]:
    """Up to `keep` colour frames of a sequence folder (`sequence_format`), evenly spaced over its frames
    with a finite pose; every file it needs is checked and each problem named."""
    kind = sequence_format(files)
    if kind is None:
        raise RGBDError("neither a 3RScan sequence (frame-XXXXXX.color.jpg, .pose.txt and _info.txt) nor a "
                        "ScanNet export (color/N.jpg, pose/N.txt, intrinsic/intrinsic_color.txt)")
    by_tail = {_tail(name, 1 if kind == "3rscan" else 2): data for name, data in files.items()}
    if kind == "3rscan":
        pattern, pose_name = RSCAN_FRAME, "frame-{}.pose.txt"
        info = _info(by_tail["_info.txt"].decode("utf-8", errors="replace"))
        calibration = info.get("m_calibrationColorIntrinsic")
        if calibration is None:
            raise RGBDError("_info.txt: no m_calibrationColorIntrinsic")
        matrix = _matrix(calibration, "_info.txt m_calibrationColorIntrinsic")
    else:
        pattern, pose_name = SCANNET_EXPORT_FRAME, "pose/{}.txt"
        calibration = by_tail.get("intrinsic/intrinsic_color.txt")
        if calibration is None:
            raise RGBDError("intrinsic/intrinsic_color.txt is missing")
        matrix = _matrix(calibration.decode("utf-8", errors="replace"), "intrinsic/intrinsic_color.txt")
    numbered = sorted((int(match[1]), match[1], name) for name in by_tail if (match := pattern.match(name)))
    frames, errors = [], []
    for index, number, name in numbered:
        pose_file = pose_name.format(number)
        if pose_file not in by_tail:
            errors.append(f"{name}: no {pose_file}")
            continue
        try:
            pose = _pose(by_tail[pose_file].decode("utf-8", errors="replace"), pose_file)
        except RGBDError as exc:
            errors.append(str(exc))
            continue
        if pose is not None:
            frames.append((index, pose, name))
    if errors:
        raise RGBDError("; ".join(errors[:10]) + (f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""))
    if not frames:
        raise RGBDError("no frame has a finite pose")
    kept = []
    for position in evenly_spaced(len(frames), keep):
        index, pose, name = frames[position]
        width, height = _checked_image(by_tail[name], name)
        kept.append(PosedColour(index, None, pose, _intrinsics(matrix, width, height), by_tail[name]))
    return kept
