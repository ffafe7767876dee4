"""The finished demo's material: for each of the five families, a small benchmark's files in the shape
its authors publish them, made procedurally, so `seed_demo` can feed them to the importers a researcher
uses (docs/IMPORT.md, ../shared/FORMATS.md):

- Hypo3D: the procedural rooms of `benchmarks.demo` as PLY scans with labelled boxes and the world-frame
  sentence, and an item file `{scene_id: [{context_change, change_type, questions_answers}]}`;
- 3DSRBench: a VLMEvalKit TSV with base64 JPEG renders of coloured boxes, spheres and cylinders,
  rotated-choice copies (`-1`..`-3`) and mirrored rows (`-flip`) whose left/right answers swap;
- CausalSpatial: top views of a table with a motion arrow (an image set) and rows `{id, question with
  (A)/(B)/(C) Not sure options, answer, not_sure}`;
- Spatial457: CLEVR-like vehicle scenes (an image set) and question JSON, one file per level;
- M3-Verse: paired before/after egocentric videos (2 s, 160x120) with objects per state and an operation
  log, and an item JSONL.

Each family also has the outputs of a made-up model ("Demo VLM") in a prediction-file shape its tools
write, right about half the time, so the leaderboard has a model row that is neither chance nor human.
Every answer is computed from the generated scene it asks about. Everything is seeded: the same call
gives the same bytes."""

import base64
import csv
import io
import json
import math
import random
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from .demo import ROOMS, generate_room

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


def _rng(*key) -> random.Random:
    return random.Random(":".join(map(str, key)))


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _jpeg(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.convert("RGB").save(out, format="JPEG", quality=88)
    return out.getvalue()


def _json(data) -> bytes:
    return json.dumps(data, indent=1, ensure_ascii=False).encode()


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()


def _tsv(header: list[str], rows: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=header, delimiter="\t", lineterminator="\n", extrasaction="ignore"
    )
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


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


def _shade(colour, factor: float) -> tuple[int, int, int]:
    return tuple(max(0, min(255, int(c * factor))) for c in colour)


# === Hypo3D ====================================================================================
# The rooms of benchmarks.demo (same layouts and world frames as the hypo3d-demo sandbox) and
# hypothetical changes on them with questions whose answers follow from the layouts (metres; front is
# the y = 0 wall, back the y = depth wall, left x = 0, right x = width, as on the top-view map).

HYPO3D_CHANGES = {
    # bedroom: bed against the back wall, wardrobe and window on the left, desk on the right
    "demo_room_01": [
        (
            "The chair has been moved from the desk to the spot in front of the wardrobe.",
            "Movement Change",
            [
                (
                    "00001",
                    "Direction",
                    "After the change, is the chair on the left or the right side of the room?",
                    "left",
                ),
                (
                    "00002",
                    "Semantic Direction",
                    "Which piece of furniture is now directly to the left of the chair?",
                    "wardrobe",
                ),
            ],
        ),
        (
            "The nightstand has been removed from the bedroom.",
            "Removal Change",
            [
                (
                    "00003",
                    "Semantic Direction",
                    "Which object is now the closest one on the left side of the bed?",
                    "wardrobe",
                ),
            ],
        ),
        (
            "The wardrobe has been painted white.",
            "Attribute Change",
            [
                ("00004", "Semantic", "What colour is the wardrobe now?", "white"),
            ],
        ),
        (
            "A bookshelf has been added in the front right corner of the room, next to the door.",
            "Addition Change",
            [
                ("00005", "Direction", "In which corner of the room is the bookshelf?", "front right"),
            ],
        ),
        (
            "The plant has been replaced with a second floor lamp.",
            "Replacement Change",
            [
                ("00006", "Scale", "How many lamps are in the bedroom now?", "2"),
            ],
        ),
    ],
    "demo_room_02": [  # office: bookshelf on the left wall, desk at the back, cabinet and window on the right
        (
            "The office chair has been moved from the desk to the window on the right wall.",
            "Movement Change",
            [
                ("00007", "Direction", "Which wall is the office chair next to now?", "right"),
                ("00008", "Semantic", "Which object is now closest to the office chair?", "window"),
            ],
        ),
        (
            "The table has been removed from the middle of the office.",
            "Removal Change",
            [
                ("00009", "Semantic", "What is now between the two chairs?", "nothing"),
            ],
        ),
        (
            "The cabinet has been painted red.",
            "Attribute Change",
            [
                ("00010", "Semantic", "What colour is the cabinet after the change?", "red"),
            ],
        ),
        (
            "A printer has been added on top of the cabinet.",
            "Addition Change",
            [
                ("00011", "Direction", "On which side of the office is the printer?", "right"),
            ],
        ),
        (
            "The lamp has been replaced with a coat rack.",
            "Replacement Change",
            [
                (
                    "00012",
                    "Semantic Direction",
                    "What stands in the back left corner of the office now?",
                    "coat rack",
                ),
            ],
        ),
    ],
    # living room: sofa at the front under the window, tv at the back, bookshelf on the right
    "demo_room_03": [
        (
            "The armchair has been moved from the left wall to the right side of the coffee table.",
            "Movement Change",
            [
                (
                    "00013",
                    "Direction",
                    "Is the armchair now to the left or to the right of the coffee table?",
                    "right",
                ),
                (
                    "00014",
                    "Semantic",
                    "Which piece of furniture is now closest to the armchair?",
                    "coffee table",
                ),
            ],
        ),
        (
            "The tv has been removed from the tv stand.",
            "Removal Change",
            [
                ("00015", "Semantic", "What is on the tv stand now?", "nothing"),
            ],
        ),
        (
            "The sofa has been reupholstered in blue fabric.",
            "Attribute Change",
            [
                ("00016", "Semantic", "What colour is the sofa now?", "blue"),
            ],
        ),
        (
            "A rug has been added under the coffee table, in front of the sofa.",
            "Addition Change",
            [
                ("00017", "Scale", "How many objects are now between the sofa and the tv stand?", "2"),
            ],
        ),
        (
            "The bookshelf has been replaced with a fireplace.",
            "Replacement Change",
            [
                ("00018", "Direction", "Which wall is the fireplace against?", "right"),
            ],
        ),
    ],
}

# Crowd work on the finished benchmark's movement campaign, in the order workers arrive (the campaign
# leases the least-filled room first, so they get rooms 1, 2, 3, 1, 2). What the reviewer then does:
# ("approve", refined text or None, [(question, answer, question types)]), ("reject", criteria, note),
# "queue" (left for review) or "draft" (still being written: autosaved, not submitted).
HYPO3D_CROWD = [
    (
        "demo-worker-a",
        "demo_room_01",
        "The lamp has been moved from beside the bed to the corner next to the plant.",
        (
            "approve",
            "The lamp has been moved from beside the bed to the front left corner, next to the plant.",
            [
                ("Which object is now closest to the lamp?", "plant", ["Semantic"]),
                ("Is the lamp now nearer the front wall or the back wall?", "front", ["Direction"]),
            ],
        ),
    ),
    (
        "demo-worker-b",
        "demo_room_02",
        "The cabinet has been moved from the right wall to the spot beside the bookshelf.",
        (
            "approve",
            None,
            [
                ("On which side of the office is the cabinet now?", "left", ["Direction"]),
            ],
        ),
    ),
    (
        "demo-worker-c",
        "demo_room_03",
        "The plant has been moved from its corner to the other corner of the room near the lamp.",
        (
            "reject",
            ["unambiguous"],
            "Which corner? Say where the plant ends up by naming the object it stands next to.",
        ),
    ),
    (
        "demo-worker-d",
        "demo_room_01",
        "The desk has been moved from the right wall to the space in front of the window.",
        "queue",
    ),
    ("demo-worker-e", "demo_room_02", "The table has been moved from the middle of the office to", "draft"),
]


def _ply(xyz: np.ndarray, rgb: np.ndarray) -> bytes:
    """A binary little-endian PLY point cloud with vertex colours, as a scanner exports one."""
    header = (
        "ply\nformat binary_little_endian 1.0\ncomment HypoLab demo room\n"
        f"element vertex {len(xyz)}\nproperty float x\nproperty float y\nproperty float z\n"
        "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n"
    ).encode()
    vertex = np.dtype(
        [("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("red", "u1"), ("green", "u1"), ("blue", "u1")]
    )
    body = np.empty(len(xyz), dtype=vertex)
    body["x"], body["y"], body["z"] = xyz[:, 0], xyz[:, 1], xyz[:, 2]
    body["red"], body["green"], body["blue"] = rgb[:, 0], rgb[:, 1], rgb[:, 2]
    return header + body.tobytes()


def hypo3d_scans(n_rooms: int = 3, points_per_room: int = 220_000) -> list[Scan]:
    scans = []
    for index in range(n_rooms):
        room = generate_room(index, points_per_room)
        boxes = [
            {"label": o["label"], "center": o["center"], "size": o["size"], "instance_id": o["instance_id"]}
            for o in room.objects
        ]
        scans.append(
            Scan(
                scene_id=room.external_id,
                ply=_ply(room.xyz, room.rgb),
                boxes=_json(boxes),
                caption=room.caption,
                world_frame=f"The {room.anchor['label']} was located at the {room.side} of the scene.",
            )
        )
    return scans


def _hypo3d_document(predict=None) -> dict:
    document = {}
    for scene_id, changes in HYPO3D_CHANGES.items():
        document[scene_id] = [
            {
                "context_change": text,
                "change_type": change_type,
                "questions_answers": [
                    {
                        "question_id": qid,
                        "question_type": qtype,
                        "question": question,
                        "answer": answer,
                        **({"predicted_answer": predict(scene_id, qid, answer)} if predict else {}),
                    }
                    for qid, qtype, question, answer in qas
                ],
            }
            for text, change_type, qas in changes
        ]
    return document


SIDES = {"left": "right", "right": "left", "front": "back", "back": "front"}


def hypo3d_distractors(scene_id: str, answer: str) -> list[str]:
    """Plausible wrong answers: the opposite side, a neighbouring count, another object of the room."""
    words = answer.split()
    if all(w in SIDES for w in words):
        return [" ".join(SIDES[w] for w in words), "front" if "front" not in words else "back"]
    if answer.isdigit():
        return [str(int(answer) + 1), str(max(int(answer) - 1, 0))]
    if answer in COLOURS:
        return [c for c in ("grey", "brown", "black", "green") if c != answer]
    index = int(scene_id[-2:]) - 1
    labels = sorted({f.label for f in ROOMS[index].furniture} - {answer, "door"})
    return labels


def _hypo3d_predict(scene_id: str, qid: str, answer: str) -> str:
    rng = _rng("hypo3d", qid)
    if rng.random() < 0.45:
        return rng.choice([answer, answer, f"The {answer}."])
    return rng.choice(hypo3d_distractors(scene_id, answer))


def hypo3d_prediction_file(extra=()) -> tuple[str, bytes]:
    """Demo VLM's Hypo3D prediction file: the item file with `predicted_answer` in each QA. `extra` adds
    questions written on the platform, keyed by their release id: (scene id, context change, change type,
    question id, question type, question, answer)."""
    document = _hypo3d_document(_hypo3d_predict)
    for scene_id, text, change_type, qid, qtype, question, answer in extra:
        document.setdefault(scene_id, []).append(
            {
                "context_change": text,
                "change_type": change_type,
                "questions_answers": [
                    {
                        "question_id": qid,
                        "question_type": qtype,
                        "question": question,
                        "answer": answer,
                        "predicted_answer": _hypo3d_predict(scene_id, qid, answer),
                    }
                ],
            }
        )
    return "demo_vlm_hypo3d_predictions.json", _json(document)


def hypo3d_files(points_per_room: int = 220_000) -> FamilyFiles:
    return FamilyFiles(
        family="hypo3d",
        scans=hypo3d_scans(points_per_room=points_per_room),
        item_files=[("hypo3d_demo_items.json", _json(_hypo3d_document()))],
        outputs=[hypo3d_prediction_file()],
    )


# === 3DSRBench =================================================================================
# Rendered scenes of coloured boxes, spheres and cylinders on a floor, seen by a pinhole camera at
# (0, height, 0) looking along +z (x to the right, y up, metres). "common" views are at eye level,
# "uncommon" ones from high above, as the benchmark's synthetic splits pair them.

SR_SIZE = (320, 240)
# camera height, horizon (fraction of the image height; above the top edge when looking down from high up)
SR_VIEWS = {"common": (1.0, 0.36), "uncommon": (3.2, -0.25)}


@dataclass(frozen=True)
class Solid:
    shape: str  # box, sphere, cylinder
    colour: str
    x: float
    z: float
    size: float  # edge / diameter
    height: float = 0.0  # cylinders: their height (default: size)
    base: float = 0.0  # how high its bottom is (standing on another object)

    @property
    def name(self) -> str:
        return f"the {self.colour} {self.shape}"

    @property
    def top(self) -> float:
        return self.base + (self.height or self.size)


def _render_solids(solids: list[Solid], view: str) -> Image.Image:
    width, height = SR_SIZE
    cam_h, horizon_frac = SR_VIEWS[view]
    focal, horizon = 300.0, height * horizon_frac
    image = Image.new("RGB", SR_SIZE)
    draw = ImageDraw.Draw(image)
    for row in range(height):  # sky above the horizon, a floor that darkens towards the camera
        t = (row - horizon) / max(height - horizon, 1)
        colour = (206, 222, 236) if row < horizon else _shade((214, 196, 168), 1.05 - 0.25 * t)
        draw.line([(0, row), (width, row)], fill=colour)

    def project(x, y, z):
        return width / 2 + focal * x / z, horizon + focal * (cam_h - y) / z

    for solid in sorted(solids, key=lambda s: -s.z):  # far to near
        colour = COLOURS[solid.colour]
        half = solid.size / 2
        (sx, sy), r = project(solid.x, 0, solid.z), focal * half / solid.z
        if not solid.base:
            draw.ellipse(
                [sx - r * 1.1, sy - r * 0.3, sx + r * 1.1, sy + r * 0.3], fill=(150, 136, 116)
            )  # shadow
        if solid.shape == "sphere":
            cx, cy = project(solid.x, solid.base + half, solid.z)
            for k in range(12, 0, -1):  # lit from the upper left
                radius = r * k / 12
                shift = (1 - k / 12) * r * 0.35
                draw.ellipse(
                    [cx - shift - radius, cy - shift - radius, cx - shift + radius, cy - shift + radius],
                    fill=_shade(colour, 0.7 + 0.5 * (1 - k / 12)),
                )
        elif solid.shape == "cylinder":
            top = solid.top
            (lx, ty), (rx, by) = (
                project(solid.x - half, top, solid.z),
                project(solid.x + half, solid.base, solid.z),
            )
            squash = r * (0.15 + 0.25 * min(cam_h / 3, 1))
            draw.ellipse([lx, by - squash, rx, by + squash], fill=_shade(colour, 0.7))
            draw.rectangle([lx, ty, rx, by], fill=_shade(colour, 0.85))
            draw.rectangle([lx, ty, lx + (rx - lx) * 0.3, by], fill=_shade(colour, 0.95))
            draw.ellipse([lx, ty - squash, rx, ty + squash], fill=_shade(colour, 1.2))
        else:
            x0, x1, y0, y1 = solid.x - half, solid.x + half, solid.base, solid.base + solid.size
            zf, zb = solid.z - half, solid.z + half
            front = [project(x0, y0, zf), project(x1, y0, zf), project(x1, y1, zf), project(x0, y1, zf)]
            top = [project(x0, y1, zf), project(x1, y1, zf), project(x1, y1, zb), project(x0, y1, zb)]
            xs = x0 if solid.x > 0 else x1  # the side facing the camera's axis
            side = [project(xs, y0, zf), project(xs, y1, zf), project(xs, y1, zb), project(xs, y0, zb)]
            draw.polygon(side, fill=_shade(colour, 0.7))
            if y1 < cam_h:
                draw.polygon(top, fill=_shade(colour, 1.2))
            draw.polygon(front, fill=colour)
    return image


def _mirror(image: Image.Image) -> Image.Image:
    return image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


SR_SCENES = {
    "s1": (
        "common",
        [
            Solid("box", "blue", -0.6, 4.0, 0.8),
            Solid("sphere", "red", -0.6, 4.0, 0.5, base=0.8),
            Solid("cylinder", "green", 0.9, 4.5, 0.6, height=0.6),
        ],
    ),
    "s2": ("common", [Solid("box", "yellow", -1.0, 3.5, 0.7), Solid("sphere", "purple", 0.8, 5.5, 0.7)]),
    "s3": (
        "common",
        [
            Solid("box", "red", -1.2, 4.5, 0.6),
            Solid("sphere", "green", -0.4, 4.6, 0.5),
            Solid("cylinder", "blue", 0.6, 5.0, 0.5, height=0.8),
            Solid("box", "orange", 1.4, 3.8, 0.5),
            Solid("sphere", "gray", 0.2, 6.5, 0.6),
        ],
    ),
    "s4": (
        "uncommon",
        [
            Solid("box", "cyan", 0.0, 4.5, 0.6),
            Solid("sphere", "orange", -0.9, 4.0, 0.5),
            Solid("cylinder", "purple", 0.9, 5.2, 0.5, height=0.9),
        ],
    ),
    "s5": (
        "common",
        [
            Solid("sphere", "red", 0.0, 4.0, 0.5),
            Solid("box", "blue", -1.1, 4.3, 0.6),
            Solid("box", "green", 1.5, 4.2, 0.6),
        ],
    ),
}


def _sr_solid(scene: str, colour: str) -> Solid:
    return next(s for s in SR_SCENES[scene][1] if s.colour == colour)


def _closest(scene: str, to: str, candidates: list[str]) -> str:
    anchor = _sr_solid(scene, to)
    return min(
        candidates,
        key=lambda c: math.dist((anchor.x, anchor.z), (_sr_solid(scene, c).x, _sr_solid(scene, c).z)),
    )


def _sr_questions() -> list[dict]:
    """Base questions: qid, scene, subtype, question, options (canonical order), answer text, whether the
    answer swaps on the mirrored image ('swap'), stays ('same') or the question has no mirrored row."""
    s1, s2, s3, s4, s5 = (SR_SCENES[k][1] for k in ("s1", "s2", "s3", "s4", "s5"))
    red_top, cylinder = s1[1].top, s1[2].top
    yellow, purple = s2
    cyan, cyl4 = s4[0], s4[2]
    side = "right" if cyl4.x > cyan.x else "left"
    depth = "behind" if cyl4.z > cyan.z else "in front"
    viewpoint_options = [
        "to the right and behind",
        "to the left and behind",
        "to the right and in front",
        "to the left and in front",
    ]
    return [
        dict(
            qid="DMSR0001",
            scene="s1",
            subtype="height_higher",
            flip="same",
            question="Which object is higher in 3D space, the red sphere or the green cylinder?",
            options=["the red sphere", "the green cylinder"],
            answer="the red sphere" if red_top > cylinder else "the green cylinder",
        ),
        dict(
            qid="DMSR0002",
            scene="s1",
            subtype="location_above",
            flip=None,
            question="Is the red sphere above the blue box?",
            options=["yes", "no"],
            answer="yes",
        ),
        dict(
            qid="DMSR0003",
            scene="s2",
            subtype="location_closer_to_camera",
            flip=None,
            question="Which object is closer to the camera taking this photo, the yellow box or the purple "
            "sphere?",
            options=["the yellow box", "the purple sphere"],
            answer="the yellow box" if yellow.z < purple.z else "the purple sphere",
        ),
        dict(
            qid="DMSR0004",
            scene="s2",
            subtype="orientation_on_the_left",
            flip="swap",
            question="From the camera's point of view, is the yellow box on the left or on the right of the "
            "purple "
            "sphere?",
            options=["left", "right"],
            answer="left" if yellow.x < purple.x else "right",
        ),
        dict(
            qid="DMSR0005",
            scene="s3",
            subtype="location_next_to",
            flip=None,
            question="Which object is right next to the red box?",
            options=["the green sphere", "the blue cylinder", "the orange box", "the gray sphere"],
            answer=_sr_solid("s3", _closest("s3", "red", ["green", "blue", "orange", "gray"])).name,
        ),
        dict(
            qid="DMSR0006",
            scene="s3",
            subtype="multi_object_closer_to",
            flip=None,
            question="Which object is closest to the orange box?",
            options=["the red box", "the green sphere", "the blue cylinder", "the gray sphere"],
            answer=_sr_solid("s3", _closest("s3", "orange", ["red", "green", "blue", "gray"])).name,
        ),
        dict(
            qid="DMSR0007",
            scene="s4",
            subtype="orientation_viewpoint",
            flip="swap",
            flip_rotations=False,
            question="From the camera's viewpoint, where is the purple cylinder relative to the cyan box?",
            options=viewpoint_options,
            answer=f"to the {side} and {depth}",
        ),
        dict(
            qid="DMSR0008",
            scene="s4",
            subtype="height_higher",
            flip=None,
            question="Which object is taller, the purple cylinder or the orange sphere?",
            options=["the purple cylinder", "the orange sphere"],
            answer="the purple cylinder" if cyl4.top > s4[1].top else "the orange sphere",
        ),
        dict(
            qid="DMSR0009",
            scene="s5",
            subtype="multi_object_closer_to",
            flip=None,
            question="Is the red sphere closer to the blue box or to the green box?",
            options=["the blue box", "the green box"],
            answer=_sr_solid("s5", _closest("s5", "red", ["blue", "green"])).name,
        ),
        # Written without saying what "next to" means here: the reviewer rejects it as ambiguous.
        dict(
            qid="DMSR0010",
            scene="s5",
            subtype="location_next_to",
            flip=None,
            rotations=False,
            question="Is the red sphere next to the blue box?",
            options=["yes", "no"],
            answer="yes",
        ),
    ]


def _swap_sides(text: str) -> str:
    return " ".join({"left": "right", "right": "left"}.get(word, word) for word in text.split())


SR_HEADER = [
    "index",
    "qid",
    "question",
    "A",
    "B",
    "C",
    "D",
    "answer",
    "category",
    "image",
    "image_source",
    "image_url",
    "viewpoint",
]
SR_PRED_HEADER = [h for h in SR_HEADER if h not in ("image", "image_url")] + ["prediction"]


def _sr_rows() -> list[dict]:
    """The TSV rows: each base question, its rotated copies (options shifted by k, `-k`) and, where it
    has one, its mirrored row (`-flip`, answer swapped for left/right questions) with its rotations. The
    first row of an image carries it as base64 JPEG; the others name that row's index, as VLMEvalKit does."""
    rows, images = [], {}
    for q in _sr_questions():
        view, solids = SR_SCENES[q["scene"]]
        if q["scene"] not in images:
            picture = _render_solids(solids, view)
            images[q["scene"]] = (_jpeg(picture), _jpeg(_mirror(picture)))
        n = len(q["options"])
        variants = [("", q["answer"], 0)]
        variants += [(f"-{k}", q["answer"], 1) for k in range(1, n)] if q.get("rotations", True) else []
        if q["flip"]:
            flipped_answer = _swap_sides(q["answer"]) if q["flip"] == "swap" else q["answer"]
            variants += [("-flip", flipped_answer, 2)]
            if q.get("flip_rotations", True):
                variants += [(f"-flip-{k}", flipped_answer, 3) for k in range(1, n)]
        holders = {}
        for suffix, answer, kind in variants:
            k = int(suffix.rsplit("-", 1)[1]) if suffix[-1:].isdigit() else 0
            options = q["options"][k:] + q["options"][:k]
            index = str(len(rows))
            mirrored = kind >= 2
            if mirrored not in holders:
                holders[mirrored] = index
                image = base64.b64encode(images[q["scene"]][1 if mirrored else 0]).decode()
            else:
                image = holders[mirrored]
            rows.append(
                {
                    "index": index,
                    "qid": q["qid"] + suffix,
                    "question": q["question"],
                    **{letter: options[i] if i < n else "" for i, letter in enumerate("ABCD")},
                    "answer": "ABCD"[options.index(answer)],
                    "category": q["subtype"],
                    "image": image,
                    "image_source": "HypoLab demo render",
                    "image_url": "",
                    "viewpoint": view,
                }
            )
    return rows


def srbench_files() -> FamilyFiles:
    rows = _sr_rows()
    predictions = []
    for row in rows:
        letters = [letter for letter in "ABCD" if row[letter]]
        rng = _rng("3dsrbench", row["qid"])
        letter = (
            row["answer"] if rng.random() < 0.62 else rng.choice([x for x in letters if x != row["answer"]])
        )
        said = rng.choice([letter, letter, f"The answer is {letter}.", f"{letter}. {row[letter]}"])
        predictions.append({**row, "prediction": said})
    return FamilyFiles(
        family="3dsrbench",
        item_files=[("3DSRBench_demo.tsv", _tsv(SR_HEADER, rows))],
        outputs=[("DemoVLM_3DSRBench_demo.tsv", _tsv(SR_PRED_HEADER, predictions))],
    )


# === CausalSpatial =============================================================================
# Top views of a table (pixels, y down) with a motion arrow drawn in: a ball rolls, a box slides. The
# answer of each question comes from rolling the object along the arrow (`_roll`).

CS_SIZE = (256, 192)
CUSHION = 10
BALL_R = 9


@dataclass(frozen=True)
class Thing:
    kind: str  # ball, box, wall, pocket, camera
    colour: str
    x: float
    y: float
    w: float = 0.0
    h: float = 0.0

    @property
    def rect(self) -> tuple[float, float, float, float]:
        return self.x - self.w / 2, self.y - self.h / 2, self.x + self.w / 2, self.y + self.h / 2


def _overlaps_ball(rect, x: float, y: float, r: float) -> bool:
    left, top, right, bottom = rect
    nx, ny = min(max(x, left), right), min(max(y, top), bottom)
    return (x - nx) ** 2 + (y - ny) ** 2 < r * r


def _roll(x, y, dx, dy, obstacles: list[Thing], bounce: bool, steps: int = 2000) -> tuple[str, object]:
    """Roll a ball from (x, y) along (dx, dy): ("hit", thing) at the first obstacle it touches, else
    ("cushion", side) at the first cushion it reaches (without `bounce`), or with `bounce` the cushion it
    reaches after bouncing off the top one, or ("top", x) where it reaches the top when it bounces off the
    sides only (pockets)."""
    norm = math.hypot(dx, dy)
    dx, dy = dx / norm, dy / norm
    left, top, right, bottom = (
        CUSHION + BALL_R,
        CUSHION + BALL_R,
        CS_SIZE[0] - CUSHION - BALL_R,
        CS_SIZE[1] - CUSHION - BALL_R,
    )
    bounced = False
    for _ in range(steps):
        x, y = x + dx, y + dy
        for thing in obstacles:
            if _overlaps_ball(thing.rect, x, y, BALL_R):
                return "hit", thing
        side = (
            "left"
            if x <= left
            else "right"
            if x >= right
            else "top"
            if y <= top
            else "bottom"
            if y >= bottom
            else None
        )
        if side is None:
            continue
        if bounce == "pockets":
            if side == "top":
                return "top", x
            dx = -dx
        elif bounce and side == "top" and not bounced:
            bounced, dy = True, -dy
        else:
            return "cushion", side
    return "cushion", None


def _arrow(draw: ImageDraw.ImageDraw, start, end, colour=(214, 30, 30)) -> None:
    draw.line([start, end], fill=colour, width=4)
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    head = [
        end,
        (end[0] - 13 * math.cos(angle - 0.45), end[1] - 13 * math.sin(angle - 0.45)),
        (end[0] - 13 * math.cos(angle + 0.45), end[1] - 13 * math.sin(angle + 0.45)),
    ]
    draw.polygon(head, fill=colour)


def _table(things: list[Thing], arrows: list[tuple], pockets: bool = False) -> Image.Image:
    image = Image.new("RGB", CS_SIZE, (112, 78, 50))
    draw = ImageDraw.Draw(image)
    draw.rectangle(
        [CUSHION, CUSHION, CS_SIZE[0] - CUSHION - 1, CS_SIZE[1] - CUSHION - 1], fill=(226, 206, 170)
    )
    for k in range(CUSHION, CS_SIZE[1] - CUSHION, 14):  # wood grain
        draw.line([(CUSHION, k), (CS_SIZE[0] - CUSHION, k + 3)], fill=(214, 192, 156))
    if pockets:
        for px in (50, 128, 206):
            draw.ellipse([px - 18, -8, px + 18, 20], fill=(30, 24, 20))
    for thing in things:
        colour = COLOURS[thing.colour]
        if thing.kind == "ball":
            draw.ellipse(
                [thing.x - BALL_R, thing.y - BALL_R, thing.x + BALL_R, thing.y + BALL_R],
                fill=colour,
                outline=_shade(colour, 0.6),
            )
            draw.ellipse([thing.x - 5, thing.y - 6, thing.x - 1, thing.y - 2], fill=_shade(colour, 1.5))
        elif thing.kind in ("box", "wall"):
            draw.rectangle(thing.rect, fill=colour, outline=_shade(colour, 0.6))
        elif thing.kind == "camera":
            draw.rectangle([thing.x - 10, thing.y - 6, thing.x + 10, thing.y + 6], fill=(30, 30, 34))
            draw.polygon(
                [(thing.x - 5, thing.y - 6), (thing.x + 5, thing.y - 6), (thing.x, thing.y - 13)],
                fill=(30, 30, 34),
            )
    for start, end in arrows:
        _arrow(draw, start, end)
    return image


def _tip(thing: Thing, dx: float, dy: float, length: float = 46.0) -> tuple[float, float]:
    norm = math.hypot(dx, dy)
    return thing.x + dx / norm * length, thing.y + dy / norm * length


def _crosses(p, q, wall: Thing) -> bool:
    """Whether the segment p-q passes through the wall's rectangle (sampled finely)."""
    return any(
        _overlaps_ball(wall.rect, p[0] + (q[0] - p[0]) * t / 200, p[1] + (q[1] - p[1]) * t / 200, 0.5)
        for t in range(201)
    )


YES_NO = ["Yes", "No"]


def _causal_items() -> list[dict]:
    """id, the things on the table, arrows, question, options (the last is Not sure) and answer text."""
    items = []

    def add(item_id, things, arrows, question, options, answer, pockets=False):
        options = [*options, "Not sure"]
        items.append(
            dict(
                id=item_id,
                things=things,
                arrows=arrows,
                pockets=pockets,
                options=options,
                answer=answer,
                question=question
                + " "
                + " ".join(f"({'ABCDE'[i]}) {text}" for i, text in enumerate(options)),
            )
        )

    for n, (ball_y, dy, box_y) in enumerate([(96, 0.0, 100), (60, 0.08, 140)]):
        ball, box = Thing("ball", "red", 50, ball_y), Thing("box", "blue", 190, box_y, 36, 36)
        what, thing = _roll(ball.x, ball.y, 1, dy, [box], bounce=False)
        add(
            f"Collision_Level_1_{n}",
            [ball, box],
            [((ball.x, ball.y), _tip(ball, 1, dy))],
            "The red ball rolls in the direction of the arrow. Will it hit the blue box?",
            YES_NO,
            "Yes" if what == "hit" else "No",
        )
    for n, (start, direction, blue, green) in enumerate(
        [
            ((40, 150), (1, -0.55), (112, 50), (205, 60)),
            ((40, 40), (1, 0.45), (130, 82), (210, 150)),
        ]
    ):
        ball = Thing("ball", "red", *start)
        boxes = [Thing("box", "blue", *blue, 34, 34), Thing("box", "green", *green, 36, 36)]
        what, thing = _roll(ball.x, ball.y, *direction, boxes, bounce=False)
        add(
            f"Collision_Level_2_{n}",
            [ball, *boxes],
            [((ball.x, ball.y), _tip(ball, *direction))],
            "The red ball rolls in the direction of the arrow. Which box does it hit first?",
            ["the blue box", "the green box", "neither"],
            f"the {thing.colour} box" if what == "hit" else "neither",
        )

    def walls(*gaps):
        """A gray wall across the table at y = 90 with the given (left, right) gaps."""
        edges, pieces = [CUSHION, *[x for gap in gaps for x in gap], CS_SIZE[0] - CUSHION], []
        for left, right in zip(edges[::2], edges[1::2], strict=True):
            pieces.append(Thing("wall", "gray", (left + right) / 2, 90, right - left, 10))
        return pieces

    for n, (box_w, gap) in enumerate([(30, (106, 150)), (52, (108, 148))]):
        box = Thing("box", "green", 128, 150, box_w, 26)
        fits = box_w < gap[1] - gap[0] and gap[0] <= box.x - box_w / 2 and box.x + box_w / 2 <= gap[1]
        add(
            f"Compatibility_Level_1_{n}",
            [*walls(gap), box],
            [((box.x, box.y - 16), (box.x, box.y - 56))],
            "The green box slides in the direction of the arrow. Can it pass through the gap between the "
            "gray "
            "walls?",
            YES_NO,
            "Yes" if fits else "No",
        )
    for n, right_gap in enumerate([(170, 206), (158, 218)]):
        yellow, purple = Thing("box", "yellow", 65, 150, 26, 24), Thing("box", "purple", 188, 150, 48, 24)
        fits = [b.colour for b, gap in ((yellow, (40, 90)), (purple, right_gap)) if b.w < gap[1] - gap[0]]
        add(
            f"Compatibility_Level_2_{n}",
            [*walls((40, 90), right_gap), yellow, purple],
            [((b.x, b.y - 14), (b.x, b.y - 54)) for b in (yellow, purple)],
            "Each box is pushed straight along its arrow. Which of them can pass through the gap in front of "
            "it?",
            ["the yellow box", "the purple box", "both"],
            "both" if len(fits) == 2 else f"the {fits[0]} box" if fits else "neither",
        )

    camera = Thing("camera", "black", 128, 176)
    for n, (start, end) in enumerate([((60, 50), (130, 50)), ((130, 50), (226, 50))]):
        ball, wall = Thing("ball", "yellow", *start), Thing("wall", "gray", 128, 110, 80, 8)
        hidden = _crosses((camera.x, camera.y - 8), end, wall)
        add(
            f"Occlusion_Level_1_{n}",
            [wall, camera, ball],
            [((ball.x, ball.y), end)],
            "The yellow ball rolls to the tip of the arrow. Seen from the camera at the bottom, will the "
            "gray "
            "wall hide it there?",
            YES_NO,
            "Yes" if hidden else "No",
        )
    for n, (start, end) in enumerate([((128, 40), (200, 40)), ((70, 40), (128, 40))]):
        ball = Thing("ball", "yellow", *start)
        left_wall, right_wall = Thing("wall", "gray", 70, 110, 60, 8), Thing("wall", "gray", 186, 110, 60, 8)
        hiding = [
            name
            for name, wall in (("left", left_wall), ("right", right_wall))
            if _crosses((camera.x, camera.y - 8), end, wall)
        ]
        add(
            f"Occlusion_Level_2_{n}",
            [left_wall, right_wall, camera, ball],
            [((ball.x, ball.y), end)],
            "The yellow ball rolls to the tip of the arrow. Which wall hides it from the camera there?",
            ["the left wall", "the right wall", "neither"],
            f"the {hiding[0]} wall" if hiding else "neither",
        )

    for n, (start, direction) in enumerate([((60, 150), (0.9, -1)), ((200, 150), (-0.3, -1))]):
        ball = Thing("ball", "purple", *start)
        what, side = _roll(ball.x, ball.y, *direction, [], bounce=True)
        add(
            f"Trajectory_Level_1_{n}",
            [ball],
            [((ball.x, ball.y), _tip(ball, *direction))],
            "The purple ball rolls along the arrow and bounces off the top cushion. Which cushion does it "
            "reach "
            "next?",
            ["the left cushion", "the right cushion", "the bottom cushion"],
            f"the {side} cushion",
        )
    for n, (start, direction) in enumerate([((60, 170), (1, -1.1)), ((200, 170), (1, -0.7))]):
        ball = Thing("ball", "purple", *start)
        what, landing = _roll(ball.x, ball.y, *direction, [], bounce="pockets")
        pocket = min(((50, "left"), (128, "middle"), (206, "right")), key=lambda p: abs(p[0] - landing))[1]
        add(
            f"Trajectory_Level_2_{n}",
            [ball],
            [((ball.x, ball.y), _tip(ball, *direction))],
            "The purple ball rolls along the arrow, bouncing off the side cushions. Which pocket does it "
            "fall "
            "into?",
            ["the left pocket", "the middle pocket", "the right pocket"],
            f"the {pocket} pocket",
            pockets=True,
        )
    return items


def causalspatial_files() -> FamilyFiles:
    items = _causal_items()
    image_set, rows = [], []
    for item in items:
        task = item["id"].split("_Level_")[0].lower()
        path = f"{task}/{item['id']}.png"
        image_set.append((path, _png(_table(item["things"], item["arrows"], item["pockets"]))))
        letters = "ABCDE"[: len(item["options"])]
        rows.append(
            {
                "id": item["id"],
                "question": item["question"],
                "answer": f"({letters[item['options'].index(item['answer'])]})",
                "not_sure": f"({letters[-1]})",
                "image": path,
            }
        )
    image_set.append(("items.jsonl", _jsonl(rows)))
    outputs = []
    for repeat in range(5):  # CausalSpatial reports five runs, mean and std
        lines = []
        for item, row in zip(items, rows, strict=True):
            rng = _rng("causalspatial", item["id"], repeat)
            letters = "ABCDE"[: len(item["options"])]
            draw = rng.random()
            letter = (
                row["answer"][1]
                if draw < 0.5
                else letters[-1]
                if draw < 0.62
                else rng.choice([x for x in letters[:-1] if x != row["answer"][1]] or letters[:1])
            )
            task, level = item["id"].split("_Level_")
            lines.append(
                {
                    "question_id": item["id"],
                    "question": item["question"],
                    "gt_answer": row["answer"],
                    "model_answer": f"{{'Reasoning': 'Following the arrow, the {task.lower()} outcome is "
                    "option "
                    f"{letter}.', 'Answer': '({letter})'}}",
                    "model": MODEL_NAME,
                    "not_sure": row["not_sure"],
                    "type": task.lower(),
                    "difficulty": int(level.split("_")[0]),
                }
            )
        outputs.append((f"demo_vlm_causalspatial_run{repeat}.jsonl", _jsonl(lines)))
    return FamilyFiles(
        family="causalspatial",
        image_set=image_set,
        outputs=outputs,
    )


# === Spatial457 ================================================================================
# Super-CLEVR-like scenes: vehicles seen from the side on a floor, each with a colour, a size and the
# direction it faces. Questions follow the benchmark's levels; every answer is read off the scene.

SP_SIZE = (320, 240)
SP_SHAPES = {  # length, height (metres at size "large"; "small" is 0.6 of it)
    "sedan": (1.6, 0.55),
    "suv": (1.6, 0.75),
    "truck": (2.0, 0.85),
    "school bus": (2.4, 0.95),
    "minivan": (1.7, 0.8),
    "mountain bike": (1.0, 0.6),
}


@dataclass(frozen=True)
class Vehicle:
    shape: str
    colour: str
    size: str  # small / large
    x: float  # centre, metres to the right
    z: float  # depth
    facing: str  # left / right

    @property
    def name(self) -> str:
        return f"{self.colour} {self.shape}"

    @property
    def scale(self) -> float:
        return 1.0 if self.size == "large" else 0.6


def _sp_project(x: float, y: float, z: float) -> tuple[float, float]:
    return SP_SIZE[0] / 2 + 260 * x / z, SP_SIZE[1] * 0.3 + 260 * (1.6 - y) / z


def _sp_box(v: Vehicle) -> tuple[float, float, float, float]:
    length, height = (d * v.scale for d in SP_SHAPES[v.shape])
    (left, bottom), (right, top) = (
        _sp_project(v.x - length / 2, 0, v.z),
        _sp_project(v.x + length / 2, height, v.z),
    )
    return left, top, right, bottom


def _draw_vehicle(draw: ImageDraw.ImageDraw, v: Vehicle) -> None:
    left, top, right, bottom = _sp_box(v)
    w, h = right - left, bottom - top
    colour, dark = COLOURS[v.colour], _shade(COLOURS[v.colour], 0.6)
    front = 1 if v.facing == "right" else -1

    def fx(t):  # t from 0 (back) to 1 (front) along the body
        return left + w * (t if front == 1 else 1 - t)

    wheel = h * 0.22
    if v.shape == "mountain bike":
        for t in (0.18, 0.82):
            draw.ellipse(
                [fx(t) - wheel * 1.3, bottom - wheel * 2.6, fx(t) + wheel * 1.3, bottom],
                outline=dark,
                width=2,
            )
        draw.line(
            [(fx(0.18), bottom - wheel * 1.3), (fx(0.5), top + h * 0.35), (fx(0.82), bottom - wheel * 1.3)],
            fill=colour,
            width=3,
        )
        draw.line([(fx(0.5), top + h * 0.35), (fx(0.78), top + h * 0.1)], fill=colour, width=3)
        return
    body_top = top + h * (0.45 if v.shape == "sedan" else 0.25)
    draw.rectangle([left, body_top, right, bottom - wheel], fill=colour, outline=dark)
    if v.shape == "sedan":
        draw.polygon(
            [(fx(0.2), body_top), (fx(0.32), top), (fx(0.68), top), (fx(0.8), body_top)],
            fill=colour,
            outline=dark,
        )
        draw.polygon(
            [(fx(0.36), top + 3), (fx(0.64), top + 3), (fx(0.74), body_top), (fx(0.3), body_top)],
            fill=(190, 214, 230),
        )
    elif v.shape == "truck":
        draw.rectangle([min(fx(0.7), fx(1)), top, max(fx(0.7), fx(1)), body_top], fill=colour, outline=dark)
        draw.rectangle(
            [min(fx(0.75), fx(0.95)), top + 3, max(fx(0.75), fx(0.95)), body_top - 2], fill=(190, 214, 230)
        )
    else:  # suv, minivan, school bus: a tall body with a row of windows
        draw.rectangle([left, top, right, body_top], fill=colour, outline=dark)
        n = 5 if v.shape == "school bus" else 3
        for k in range(n):
            a, b = fx(0.08 + k * 0.86 / n), fx(0.08 + (k + 0.8) * 0.86 / n)
            draw.rectangle([min(a, b), top + 3, max(a, b), body_top + 4], fill=(190, 214, 230))
    draw.rectangle(
        [min(fx(0.97), fx(1.0)), body_top + 4, max(fx(0.97), fx(1.0)), body_top + 9], fill=(250, 236, 150)
    )
    for t in (0.2, 0.8):
        draw.ellipse([fx(t) - wheel, bottom - 2 * wheel, fx(t) + wheel, bottom], fill=(30, 30, 30))


def _sp_render(vehicles: list[Vehicle]) -> Image.Image:
    image = Image.new("RGB", SP_SIZE)
    draw = ImageDraw.Draw(image)
    horizon = SP_SIZE[1] * 0.3 - 40
    for row in range(SP_SIZE[1]):
        shade = 0.8 + 0.2 * min(max((row - horizon) / SP_SIZE[1], 0), 1)
        draw.line([(0, row), (SP_SIZE[0], row)], fill=_shade((170, 170, 176), shade))
    for v in sorted(vehicles, key=lambda v: -v.z):
        left, top, right, bottom = _sp_box(v)
        draw.ellipse([left, bottom - 4, right, bottom + 4], fill=(130, 130, 136))
        _draw_vehicle(draw, v)
    return image


def _occluded(scene: list[Vehicle], v: Vehicle) -> bool:
    """Covered for more than a fifth of its box by a nearer vehicle."""
    left, top, right, bottom = _sp_box(v)
    for other in scene:
        if other.z >= v.z:
            continue
        ol, ot, orr, ob = _sp_box(other)
        overlap = max(0, min(right, orr) - max(left, ol)) * max(0, min(bottom, ob) - max(top, ot))
        if overlap > 0.2 * (right - left) * (bottom - top):
            return True
    return False


def _faces(a: Vehicle, b: Vehicle) -> bool:
    return (b.x > a.x) == (a.facing == "right")


def _collides(a: Vehicle, b: Vehicle) -> bool:
    """Driving forward, a reaches b when b is ahead of it and they overlap in depth."""
    depth = (SP_SHAPES[a.shape][0] * a.scale + SP_SHAPES[b.shape][0] * b.scale) / 6
    return _faces(a, b) and abs(a.z - b.z) < max(depth, 0.5)


SP_SCENES = [
    [
        Vehicle("sedan", "red", "large", -1.4, 6.0, "right"),
        Vehicle("school bus", "yellow", "large", 1.6, 8.5, "left"),
        Vehicle("mountain bike", "blue", "small", 0.9, 5.0, "left"),
    ],
    [
        Vehicle("suv", "green", "large", -0.6, 6.5, "left"),
        Vehicle("truck", "gray", "large", -0.4, 8.5, "right"),
        Vehicle("sedan", "purple", "small", 1.8, 6.4, "left"),
    ],
    [
        Vehicle("minivan", "cyan", "large", 1.2, 7.0, "left"),
        Vehicle("sedan", "brown", "small", -1.2, 7.2, "right"),
        Vehicle("mountain bike", "red", "large", -0.2, 5.2, "right"),
        Vehicle("suv", "red", "small", -3.0, 9.0, "left"),
    ],
    [
        Vehicle("truck", "blue", "large", 0.2, 6.0, "right"),
        Vehicle("sedan", "yellow", "large", 0.5, 8.0, "left"),
        Vehicle("school bus", "purple", "small", -2.0, 7.5, "right"),
    ],
    [
        Vehicle("suv", "brown", "large", -1.6, 6.8, "right"),
        Vehicle("minivan", "gray", "small", 1.0, 6.6, "left"),
        Vehicle("sedan", "green", "large", 0.6, 9.0, "right"),
    ],
    [
        Vehicle("school bus", "cyan", "large", 0.0, 8.0, "right"),
        Vehicle("sedan", "red", "small", -0.8, 5.6, "left"),
        Vehicle("mountain bike", "green", "large", 1.7, 5.8, "left"),
    ],
]


def _spatial457_questions() -> dict[str, list[tuple[int, str, object, list]]]:
    """Level -> [(image index, question, answer, program)]."""
    s = SP_SCENES
    filter_ = [{"type": "scene", "inputs": []}]
    levels = {
        "L1_single": [
            (0, "What is the color of the large sedan?", s[0][0].colour, filter_ + [{"type": "query_color"}]),
            (1, "Is there a small purple sedan?", True, filter_ + [{"type": "exist"}]),
            (4, "What size is the gray minivan?", s[4][1].size, filter_ + [{"type": "query_size"}]),
        ],
        "L2_objects": [
            (
                2,
                "How many red objects are there?",
                sum(v.colour == "red" for v in s[2]),
                filter_ + [{"type": "count"}],
            ),
            (
                3,
                "Is there a bus that has the same color as the small school bus?",
                False,
                filter_ + [{"type": "same_color"}, {"type": "exist"}],
            ),
            (5, "How many vehicles are there?", len(s[5]), filter_ + [{"type": "count"}]),
        ],
        "L3_2d_spatial": [
            (
                0,
                "Is the yellow school bus to the right of the red sedan?",
                s[0][1].x > s[0][0].x,
                filter_ + [{"type": "relate", "side_inputs": ["right"]}, {"type": "exist"}],
            ),
            (
                3,
                "What is the color of the vehicle that is left of the blue truck?",
                "purple",
                filter_ + [{"type": "relate", "side_inputs": ["left"]}, {"type": "query_color"}],
            ),
        ],
        "L4_occ": [
            (
                1,
                "Is the gray truck occluded by another object?",
                _occluded(s[1], s[1][1]),
                filter_ + [{"type": "query_occlusion"}],
            ),
            (
                5,
                "Is the cyan school bus occluded?",
                _occluded(s[5], s[5][0]),
                filter_ + [{"type": "query_occlusion"}],
            ),
        ],
        "L4_pose": [
            (
                2,
                "Which direction is the cyan minivan facing?",
                s[2][0].facing,
                filter_ + [{"type": "query_pose"}],
            ),
            (
                4,
                "Which direction is the large brown suv facing?",
                s[4][0].facing,
                filter_ + [{"type": "query_pose"}],
            ),
        ],
        "L5_6d_spatial": [
            (
                0,
                "Is the red sedan facing towards the yellow school bus?",
                _faces(s[0][0], s[0][1]),
                filter_ + [{"type": "query_facing"}],
            ),
            (
                2,
                "Is the brown sedan facing towards the cyan minivan?",
                _faces(s[2][1], s[2][0]),
                filter_ + [{"type": "query_facing"}],
            ),
        ],
        "L5_collision": [
            (
                1,
                "If the purple sedan moves forward, will it collide with the green suv?",
                _collides(s[1][2], s[1][0]),
                filter_ + [{"type": "query_collision"}],
            ),
            (
                4,
                "If the large brown suv moves forward, will it collide with the gray minivan?",
                _collides(s[4][0], s[4][1]),
                filter_ + [{"type": "query_collision"}],
            ),
        ],
    }
    return levels


def _sp_image_name(index: int) -> str:
    return f"superCLEVR_new_{index:06d}.png"


def spatial457_pool(answer: str) -> list[str]:
    pools = (
        ("yes", "no"),
        tuple("0123456789"),
        ("small", "large"),
        ("left", "right", "front", "back"),
        ("gray", "blue", "purple", "brown", "green", "cyan", "red", "yellow"),
    )
    return next((list(pool) for pool in pools if answer in pool), [answer])


def spatial457_files() -> FamilyFiles:
    image_set = [(_sp_image_name(k), _png(_sp_render(scene))) for k, scene in enumerate(SP_SCENES)]
    level_files, lines = [], []
    for level, questions in _spatial457_questions().items():
        rows = []
        for number, (image, question, answer, program) in enumerate(questions):
            rows.append(
                {
                    "split": level,
                    "image_filename": _sp_image_name(image),
                    "image_index": image,
                    "question": question,
                    "program": program,
                    "answer": answer,
                    "template_filename": f"{level}.json",
                    "question_family_index": 0,
                    "question_index": number,
                }
            )
            text = "yes" if answer is True else "no" if answer is False else str(answer)
            rng = _rng("spatial457", level, number)
            said = (
                text
                if rng.random() < 0.5
                else rng.choice([a for a in spatial457_pool(text) if a != text] or [text])
            )
            output = (
                said.capitalize() + "."
                if rng.random() < 0.1
                else f"{{'Reasoning': 'I look for the objects the question names and compare them.', "
                f"'Answer': '{said}'}}"
            )
            lines.append({"id": f"{level}/{number}", "output": output})
        level_files.append(
            (f"{level}.json", _json({"info": {"split": level, "version": "demo"}, "questions": rows}))
        )
    # The image set carries the first level's questions as its items file; every level file is imported
    # after it (the first one again, unchanged).
    image_set.append(("items.json", level_files[0][1]))
    return FamilyFiles(
        family="spatial457",
        image_set=image_set,
        item_files=level_files,
        outputs=[("demo_vlm_spatial457.jsonl", _jsonl(lines))],
    )


# === M3-Verse ==================================================================================
# A row of household objects along a wall, filmed by a camera panning left to right: once before and
# once after some operations (objects added, removed, moved, recoloured). Questions ask what changed,
# with hallucination items whose asked-for change never happened ("No correct option is listed.").

M3_SIZE = (160, 120)
M3_FRAMES, M3_FPS = 20, 10
NO_OPTION = "No correct option is listed."
M3_CAPABILITIES = ("spatial understanding", "temporal understanding", "attribute recognition", "reasoning")


def _glyph(draw: ImageDraw.ImageDraw, kind: str, colour: str, u: float, base: float) -> None:
    c, dark = COLOURS[colour], _shade(COLOURS[colour], 0.55)
    if kind == "apple":
        draw.ellipse([u - 8, base - 16, u + 8, base], fill=c, outline=dark)
        draw.line([(u, base - 16), (u + 2, base - 21)], fill=(90, 60, 30), width=2)
    elif kind == "mug":
        draw.rectangle([u - 7, base - 16, u + 5, base], fill=c, outline=dark)
        draw.arc([u + 1, base - 13, u + 11, base - 4], -90, 90, fill=dark, width=2)
    elif kind == "laptop":
        draw.polygon(
            [(u - 14, base), (u + 14, base), (u + 11, base - 4), (u - 11, base - 4)], fill=c, outline=dark
        )
        draw.rectangle([u - 11, base - 22, u + 11, base - 5], fill=c, outline=dark)
        draw.rectangle([u - 8, base - 19, u + 8, base - 8], fill=(60, 80, 110))
    elif kind == "book":
        draw.rectangle([u - 5, base - 24, u + 5, base], fill=c, outline=dark)
        draw.line([(u - 2, base - 20), (u - 2, base - 4)], fill=_shade(COLOURS[colour], 1.4))
    elif kind == "plant":
        draw.rectangle([u - 6, base - 10, u + 6, base], fill=(176, 92, 60))
        draw.ellipse([u - 12, base - 32, u + 12, base - 8], fill=c, outline=dark)
    elif kind == "lamp":
        draw.line([(u, base), (u, base - 26)], fill=(50, 50, 54), width=2)
        draw.polygon(
            [(u - 9, base - 24), (u + 9, base - 24), (u + 5, base - 36), (u - 5, base - 36)],
            fill=c,
            outline=dark,
        )
        draw.rectangle([u - 6, base - 2, u + 6, base], fill=(50, 50, 54))
    else:  # vase
        draw.ellipse([u - 8, base - 20, u + 8, base], fill=c, outline=dark)
        draw.rectangle([u - 3, base - 27, u + 3, base - 17], fill=c, outline=dark)


def _m3_frames(objects: list[dict]) -> list[bytes]:
    """Raw RGB frames: the camera pans along the wall from x = 1.5 to 4.7 (a 3 m wide view)."""
    frames = []
    width, height = M3_SIZE
    for k in range(M3_FRAMES):
        centre = 1.5 + 3.2 * k / (M3_FRAMES - 1)
        image = Image.new("RGB", M3_SIZE, (222, 214, 196))
        draw = ImageDraw.Draw(image)
        draw.rectangle([0, 78, width, height], fill=(150, 116, 84))  # floor
        for x in np.arange(0, 7, 0.5):  # skirting marks, so the pan is visible
            u = (x - centre + 1.5) * width / 3
            draw.line([(u, 78), (u, 82)], fill=(120, 100, 80))
        for obj in objects:
            _glyph(draw, obj["type"], obj["colour"], (obj["x"] - centre + 1.5) * width / 3, 90)
        frames.append(image.tobytes())
    return frames


def _encode_video(frames: list[bytes]) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "video.mp4"
        subprocess.run(
            [
                "ffmpeg",
                "-v",
                "error",
                "-y",
                "-f",
                "rawvideo",
                "-pix_fmt",
                "rgb24",
                "-s",
                f"{M3_SIZE[0]}x{M3_SIZE[1]}",
                "-r",
                str(M3_FPS),
                "-i",
                "-",
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-pix_fmt",
                "yuv420p",
                "-movflags",
                "+faststart",
                str(out),
            ],
            input=b"".join(frames),
            check=True,
            capture_output=True,
            timeout=60,
        )
        return out.read_bytes()


# scene -> (objects before: (type, colour, x), operations: (operation, type, parameters))
M3_SCENES = {
    "scene_800": (
        [("apple", "red", 1.0), ("mug", "white", 2.2), ("laptop", "gray", 3.4), ("plant", "green", 4.6)],
        [
            ("add", "book", {"colour": "blue", "x": 2.8}),
            ("add", "lamp", {"colour": "yellow", "x": 5.4}),
            ("change_color", "mug", {"colour": "red"}),
        ],
    ),
    "scene_801": (
        [("vase", "blue", 1.2), ("book", "red", 2.4), ("apple", "green", 3.6), ("lamp", "yellow", 4.8)],
        [("remove", "book", {}), ("move", "apple", {"x": 1.8})],
    ),
    "scene_802": (
        [("plant", "green", 1.4), ("laptop", "black", 2.6), ("mug", "blue", 3.8)],
        [("change_color", "laptop", {"colour": "white"}), ("add", "vase", {"colour": "purple", "x": 5.0})],
    ),
    "scene_803": (
        [
            ("lamp", "orange", 1.0),
            ("book", "green", 2.0),
            ("vase", "red", 3.0),
            ("apple", "red", 4.0),
            ("mug", "yellow", 5.0),
        ],
        [("remove", "vase", {}), ("move", "lamp", {"x": 5.6})],
    ),
    "scene_804": (
        [("laptop", "gray", 1.5), ("plant", "green", 3.0), ("book", "purple", 4.5)],
        [
            ("add", "apple", {"colour": "red", "x": 2.2}),
            ("add", "mug", {"colour": "cyan", "x": 3.8}),
            ("change_color", "book", {"colour": "orange"}),
        ],
    ),
}
# scene -> the questions asked about it: (template, argument)
M3_QUESTIONS = {
    "scene_800": [("new", None), ("colour", "mug"), ("right_of", ("before", "mug")), ("removed", None)],
    "scene_801": [("removed", None), ("moved", None), ("right_of", ("before", "vase")), ("new", None)],
    "scene_802": [("new", None), ("colour", "laptop"), ("left_of", ("after", "vase")), ("moved", None)],
    "scene_803": [("removed", None), ("moved", None), ("colour", "book"), ("right_of", ("before", "book"))],
    "scene_804": [("new", None), ("colour", "book"), ("left_of", ("after", "plant")), ("removed", None)],
}
M3_TYPES = ("apple", "mug", "laptop", "book", "plant", "lamp", "vase")


def _m3_states(scene_id: str) -> tuple[list[dict], list[dict], list[dict]]:
    before_spec, operations = M3_SCENES[scene_id]
    before = [
        {"id": f"{kind.capitalize()}|{n}", "type": kind, "colour": colour, "x": x}
        for n, (kind, colour, x) in enumerate(before_spec, start=1)
    ]
    after = [dict(obj) for obj in before]
    log = []
    for operation, kind, parameters in operations:
        found = next((obj for obj in after if obj["type"] == kind), None)
        if operation == "add":
            found = {"id": f"{kind.capitalize()}|{len(before) + len(log) + 1}", "type": kind, **parameters}
            after.append(found)
            log.append(
                {
                    "objectId": found["id"],
                    "operation": "add",
                    "parameters": parameters,
                    "before": None,
                    "after": dict(found),
                }
            )
        elif operation == "remove":
            after.remove(found)
            log.append(
                {
                    "objectId": found["id"],
                    "operation": "remove",
                    "parameters": {},
                    "before": dict(found),
                    "after": None,
                }
            )
        else:
            previous = dict(found)
            found.update(parameters)
            log.append(
                {
                    "objectId": found["id"],
                    "operation": operation,
                    "parameters": parameters,
                    "before": previous,
                    "after": dict(found),
                }
            )
    return before, after, log


def _options(
    rng: random.Random, right: list[str], pool: list[str], hallucination: bool
) -> tuple[list[str], list]:
    """Four options with "No correct option is listed." among them; the letters of the right ones."""
    wrong = [p for p in pool if p not in right]
    rng.shuffle(wrong)
    texts = ([] if hallucination else right) + wrong[: 3 - (0 if hallucination else len(right))]
    rng.shuffle(texts)
    texts.insert(rng.randrange(len(texts) + 1), NO_OPTION)
    answers = [NO_OPTION] if hallucination else right
    return (
        [f"{'ABCD'[i]}. {t[:1].upper() + t[1:]}" for i, t in enumerate(texts)],
        sorted("ABCD"[texts.index(a)] for a in answers),
    )


def _m3_items(scene_id: str) -> list[dict]:
    before, after, log = _m3_states(scene_id)
    rng = _rng("m3verse", scene_id)
    items = []
    for number, (template, argument) in enumerate(M3_QUESTIONS[scene_id]):
        by_op = {
            op: [entry for entry in log if entry["operation"] == op]
            for op in ("add", "remove", "move", "change_color")
        }
        if template == "new":
            right = [entry["after"]["type"] for entry in by_op["add"]]
            question, category, sub = (
                "Which objects newly appear in the second video?",
                "object_changes",
                "new_visible_objects",
            )
            capabilities, state, pool = (
                ["temporal understanding", "attribute recognition"],
                "inter-states",
                M3_TYPES,
            )
        elif template == "removed":
            right = [entry["before"]["type"] for entry in by_op["remove"]]
            question, category, sub = (
                "Which object is no longer there in the second video?",
                "object_changes",
                "disappeared_objects",
            )
            capabilities, state, pool = (
                ["temporal understanding", "reasoning"],
                "inter-states",
                [o["type"] for o in before],
            )
        elif template == "moved":
            right = [entry["before"]["type"] for entry in by_op["move"]]
            question, category, sub = (
                "Which object changed its position between the two videos?",
                "object_changes",
                "position_changes",
            )
            capabilities, state, pool = (
                ["spatial understanding", "temporal understanding", "reasoning"],
                "inter-states",
                [o["type"] for o in before],
            )
        elif template == "colour":
            change = next((e for e in by_op["change_color"] if e["before"]["type"] == argument), None)
            right = [change["after"]["colour"]] if change else []
            question = (
                f"What color is the {argument} in the second video?"
                if change
                else f"What color did the {argument} change to in the second video?"
            )
            category, sub = "attribute_changes", "color_changes"
            capabilities, state = ["attribute recognition", "temporal understanding"], "inter-states"
            current = next(o["colour"] for o in before if o["type"] == argument)
            pool = [
                c for c in ("red", "blue", "green", "yellow", "white", "orange", "purple") if c != current
            ]
        else:  # right_of / left_of, within one state
            which, anchor = argument
            row = sorted(before if which == "before" else after, key=lambda o: o["x"])
            at = next(k for k, o in enumerate(row) if o["type"] == anchor)
            neighbour = row[at + 1] if template == "right_of" else row[at - 1]
            right = [neighbour["type"]]
            side = "right" if template == "right_of" else "left"
            video = "first" if which == "before" else "second"
            question = f"In the {video} video, which object is immediately to the {side} of the {anchor}?"
            category, sub, state = "spatial_relationships", "relative_position", "intra-state"
            capabilities, pool = ["spatial understanding"], [o["type"] for o in row if o["type"] != anchor]
        hallucination = not right
        options, answer = _options(rng, right, list(pool), hallucination)
        items.append(
            {
                "scene_id": scene_id,
                "category": category,
                "question_id": f"{scene_id}-{number}",
                "state_type": state,
                "question": question,
                "options": options,
                "answer": answer,
                "question_type": "multiple_choice" if len(answer) > 1 else "single_choice",
                "subcategory": sub,
                "generator_name": category,
                "hallucination": hallucination,
                "capabilities": capabilities,
            }
        )
    return items


def _m3_objects(state: list[dict]) -> list[dict]:
    return [
        {
            "objectId": o["id"],
            "objectType": o["type"].capitalize(),
            "color": o["colour"],
            "position": {"x": o["x"], "y": 0.0, "z": 0.4},
            "parentReceptacle": "Floor",
        }
        for o in state
    ]


def m3verse_files() -> FamilyFiles:
    videos, items = [], []
    for scene_id in M3_SCENES:
        before, after, log = _m3_states(scene_id)
        videos += [
            (f"{scene_id}/before.mp4", _encode_video(_m3_frames(before))),
            (f"{scene_id}/after.mp4", _encode_video(_m3_frames(after))),
            (f"{scene_id}/objects_before.json", _json(_m3_objects(before))),
            (f"{scene_id}/objects_after.json", _json(_m3_objects(after))),
            (f"{scene_id}/operations.json", _json(log)),
        ]
        items += _m3_items(scene_id)
    samples = []
    for doc_id, item in enumerate(items):
        rng = _rng("m3verse-model", item["question_id"])
        letters = [o[0] for o in item["options"]]
        draw = rng.random()
        if draw < 0.5:
            said = item["answer"]
        elif draw < 0.7 and len(item["answer"]) > 1:
            said = item["answer"][:1]  # half the truth: partial credit
        else:
            said = [rng.choice([x for x in letters if x not in item["answer"]])]
        text = ", ".join(said)
        samples.append(
            {
                "doc_id": doc_id,
                "doc": item,
                "target": ", ".join(item["answer"]),
                "resps": [[text]],
                "filtered_resps": [text],
            }
        )
    return FamilyFiles(
        family="m3verse",
        videos=videos,
        item_files=[("m3verse_demo.jsonl", _jsonl(items))],
        outputs=[("demo_vlm_m3verse_samples.jsonl", _jsonl(samples))],
    )


FAMILY_FILES = {
    "hypo3d": hypo3d_files,
    "3dsrbench": srbench_files,
    "causalspatial": causalspatial_files,
    "spatial457": spatial457_files,
    "m3verse": m3verse_files,
}
