"""The 3DSRBench demo's files. Rendered scenes of coloured boxes, spheres and cylinders on a floor,
seen by a pinhole camera at (0, height, 0) looking along +z (x to the right, y up, metres). "common"
views are at eye level, "uncommon" ones from high above, as the benchmark's synthetic splits pair them."""

import base64
import math
from dataclasses import dataclass

from PIL import Image, ImageDraw

from .files import COLOURS, FamilyFiles, jpeg_bytes, seeded_rng, shaded, tsv_bytes

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
        colour = (206, 222, 236) if row < horizon else shaded((214, 196, 168), 1.05 - 0.25 * t)
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
                    fill=shaded(colour, 0.7 + 0.5 * (1 - k / 12)),
                )
        elif solid.shape == "cylinder":
            top = solid.top
            (lx, ty), (rx, by) = (
                project(solid.x - half, top, solid.z),
                project(solid.x + half, solid.base, solid.z),
            )
            squash = r * (0.15 + 0.25 * min(cam_h / 3, 1))
            draw.ellipse([lx, by - squash, rx, by + squash], fill=shaded(colour, 0.7))
            draw.rectangle([lx, ty, rx, by], fill=shaded(colour, 0.85))
            draw.rectangle([lx, ty, lx + (rx - lx) * 0.3, by], fill=shaded(colour, 0.95))
            draw.ellipse([lx, ty - squash, rx, ty + squash], fill=shaded(colour, 1.2))
        else:
            x0, x1, y0, y1 = solid.x - half, solid.x + half, solid.base, solid.base + solid.size
            zf, zb = solid.z - half, solid.z + half
            front = [project(x0, y0, zf), project(x1, y0, zf), project(x1, y1, zf), project(x0, y1, zf)]
            top = [project(x0, y1, zf), project(x1, y1, zf), project(x1, y1, zb), project(x0, y1, zb)]
            xs = x0 if solid.x > 0 else x1  # the side facing the camera's axis
            side = [project(xs, y0, zf), project(xs, y1, zf), project(xs, y1, zb), project(xs, y0, zb)]
            draw.polygon(side, fill=shaded(colour, 0.7))
            if y1 < cam_h:
                draw.polygon(top, fill=shaded(colour, 1.2))
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
        dict(qid="DMSR0001", scene="s1", subtype="height_higher", flip="same",
             question="Which object is higher in 3D space, the red sphere or the green cylinder?",
             options=["the red sphere", "the green cylinder"],
             answer="the red sphere" if red_top > cylinder else "the green cylinder"),
        dict(qid="DMSR0002", scene="s1", subtype="location_above", flip=None,
             question="Is the red sphere above the blue box?", options=["yes", "no"], answer="yes"),
        dict(qid="DMSR0003", scene="s2", subtype="location_closer_to_camera", flip=None,
             question="Which object is closer to the camera taking this photo, the yellow box or the purple sphere?",
             options=["the yellow box", "the purple sphere"],
             answer="the yellow box" if yellow.z < purple.z else "the purple sphere"),
        dict(qid="DMSR0004", scene="s2", subtype="orientation_on_the_left", flip="swap",
             question="From the camera's point of view, is the yellow box on the left or on the right of the "
             "purple sphere?",
             options=["left", "right"], answer="left" if yellow.x < purple.x else "right"),
        dict(qid="DMSR0005", scene="s3", subtype="location_next_to", flip=None,
             question="Which object is right next to the red box?",
             options=["the green sphere", "the blue cylinder", "the orange box", "the gray sphere"],
             answer=_sr_solid("s3", _closest("s3", "red", ["green", "blue", "orange", "gray"])).name),
        dict(qid="DMSR0006", scene="s3", subtype="multi_object_closer_to", flip=None,
             question="Which object is closest to the orange box?",
             options=["the red box", "the green sphere", "the blue cylinder", "the gray sphere"],
             answer=_sr_solid("s3", _closest("s3", "orange", ["red", "green", "blue", "gray"])).name),
        dict(qid="DMSR0007", scene="s4", subtype="orientation_viewpoint", flip="swap", flip_rotations=False,
             question="From the camera's viewpoint, where is the purple cylinder relative to the cyan box?",
             options=viewpoint_options, answer=f"to the {side} and {depth}"),
        dict(qid="DMSR0008", scene="s4", subtype="height_higher", flip=None,
             question="Which object is taller, the purple cylinder or the orange sphere?",
             options=["the purple cylinder", "the orange sphere"],
             answer="the purple cylinder" if cyl4.top > s4[1].top else "the orange sphere"),
        dict(qid="DMSR0009", scene="s5", subtype="multi_object_closer_to", flip=None,
             question="Is the red sphere closer to the blue box or to the green box?",
             options=["the blue box", "the green box"],
             answer=_sr_solid("s5", _closest("s5", "red", ["blue", "green"])).name),
        # Written without saying what "next to" means here: the reviewer rejects it as ambiguous.
        dict(qid="DMSR0010", scene="s5", subtype="location_next_to", flip=None, rotations=False,
             question="Is the red sphere next to the blue box?", options=["yes", "no"], answer="yes"),
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
            images[q["scene"]] = (jpeg_bytes(picture), jpeg_bytes(_mirror(picture)))
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
        rng = seeded_rng("3dsrbench", row["qid"])
        letter = (
            row["answer"] if rng.random() < 0.62 else rng.choice([x for x in letters if x != row["answer"]])
        )
        said = rng.choice([letter, letter, f"The answer is {letter}.", f"{letter}. {row[letter]}"])
        predictions.append({**row, "prediction": said})
    return FamilyFiles(
        family="3dsrbench",
        item_files=[("3DSRBench_demo.tsv", tsv_bytes(SR_HEADER, rows))],
        outputs=[("DemoVLM_3DSRBench_demo.tsv", tsv_bytes(SR_PRED_HEADER, predictions))],
    )
