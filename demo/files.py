"""What every family's demo files share: the bundle one family hands to the importers, the demo
model's name, the finished benchmarks' slugs and names, seeded encoders (PNG, JPEG, JSON, TSV, PLY) and
the reader of the hand-written tables in data/."""

import csv
import io
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

MODEL_NAME = "Demo VLM"
FAMILY_SLUGS = {
    "hypo3d": "hypo3d-finished",
    "3dsrbench": "3dsrbench-demo",
    "causalspatial": "causalspatial-demo",
    "spatial457": "spatial457-demo",
    "m3verse": "m3verse-demo",
}
FAMILY_NAMES = {  # name, description
    "hypo3d": (
        "Hypo3D demo (finished)",
        "The three procedural rooms imported as scans, questions on hypothetical changes of each type, and a "
        "movement campaign whose crowd changes were reviewed and asked about.",
    ),
    "3dsrbench": (
        "3DSRBench demo",
        "Rendered scenes of boxes, spheres and cylinders from common and uncommon viewpoints, imported from "
        "a VLMEvalKit TSV with rotated-choice copies and mirrored rows (CircularEval, FlipEval).",
    ),
    "causalspatial": (
        "CausalSpatial demo",
        "Top views of a table with a motion arrow (collision, compatibility, occlusion, trajectory; "
        "levels 1 and 2), each question with a Not sure option; five repeats per model run.",
    ),
    "spatial457": (
        "Spatial457 demo",
        "Super-CLEVR-like vehicle scenes with questions from every level, L1 single object to L5 "
        "collision, imported as question JSON per level.",
    ),
    "m3verse": (
        "M3-Verse demo",
        "Paired before/after egocentric videos of a row of objects with an operation log; single and "
        "multiple choice questions, hallucination items among them.",
    ),
}


@dataclass
class Scan:
    """One Hypo3D room as a researcher brings a scan: a PLY point cloud, its labelled boxes, a caption
    and the world-frame sentence."""

    scene_id: str
    ply: bytes
    boxes: bytes
    caption: str
    world_frame: str


@dataclass
class FamilyFiles:
    family: str
    item_files: list[tuple[str, bytes]] = field(default_factory=list)  # import_items, in order
    image_set: list[tuple[str, bytes]] = field(
        default_factory=list
    )  # import_images: (path in the set, bytes)
    videos: list[tuple[str, bytes]] = field(default_factory=list)  # import_videos: (scene/file, bytes)
    scans: list[Scan] = field(default_factory=list)  # import_scan, one per room
    outputs: list[tuple[str, bytes]] = field(default_factory=list)  # Demo VLM's outputs: one file per repeat


DATA_DIR = Path(__file__).parent / "data"


def demo_table(name: str):
    """The hand-written table data/<name>.json (rooms, scenes, questions): data, kept out of the code."""
    return json.loads((DATA_DIR / f"{name}.json").read_text(encoding="utf-8"))


def seeded_rng(*key) -> random.Random:
    return random.Random(":".join(map(str, key)))


def png_bytes(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def jpeg_bytes(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.convert("RGB").save(out, format="JPEG", quality=88)
    return out.getvalue()


def json_bytes(data) -> bytes:
    return json.dumps(data, indent=1, ensure_ascii=False).encode()


def jsonl_bytes(rows) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()


def tsv_bytes(header: list[str], rows: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=header, delimiter="\t", lineterminator="\n", extrasaction="ignore"
    )
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def ply_bytes(xyz: np.ndarray, rgb: np.ndarray, faces: np.ndarray | None = None, *, alpha: bool = True,
              comment: str = "", endian: str = "<") -> bytes:
    """A scan as scanners export one (ScanNet's `*_vh_clean_2.ply`): binary PLY vertices of x y z float
    and red green blue (alpha) uchar, then the triangle faces when given."""
    channels = ["red", "green", "blue", *(["alpha"] if alpha else [])]
    vertices = np.empty(len(xyz), dtype=[*((axis, endian + "f4") for axis in "xyz"), *((c, "u1") for c in channels)])
    for axis, name in enumerate("xyz"):
        vertices[name] = xyz[:, axis]
    for channel, name in enumerate(channels[:3]):
        vertices[name] = rgb[:, channel]
    if alpha:
        vertices["alpha"] = 255
    fmt = "binary_little_endian" if endian == "<" else "binary_big_endian"
    header = [f"ply\nformat {fmt} 1.0\n", f"comment {comment}\n" if comment else "", f"element vertex {len(xyz)}\n",
              *(f"property float {axis}\n" for axis in "xyz"), *(f"property uchar {c}\n" for c in channels)]
    body = vertices.tobytes()
    if faces is not None:
        table = np.empty(len(faces), dtype=[("n", "u1"), ("v", endian + "i4", 3)])
        table["n"], table["v"] = 3, faces
        header.append(f"element face {len(faces)}\nproperty list uchar int vertex_indices\n")
        body += table.tobytes()
    return ("".join(header) + "end_header\n").encode() + body


COLOURS = {
    "red": (196, 44, 40),
    "blue": (40, 84, 196),
    "green": (44, 156, 64),
    "yellow": (228, 196, 40),
    "purple": (128, 60, 168),
    "orange": (236, 136, 32),
    "cyan": (40, 180, 196),
    "gray": (128, 128, 132),
    "brown": (128, 84, 48),
    "white": (236, 236, 232),
    "black": (40, 40, 44),
}


def shaded(colour, factor: float) -> tuple[int, int, int]:
    return tuple(max(0, min(255, int(c * factor))) for c in colour)
