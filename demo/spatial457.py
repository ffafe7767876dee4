"""The Spatial457 demo's files. Super-CLEVR-like scenes: vehicles seen from the side on a floor, each
with a colour, a size and the direction it faces. Questions follow the benchmark's levels; every answer
is read off the scene."""

from dataclasses import dataclass

from PIL import Image, ImageDraw

from .files import COLOURS, FamilyFiles, demo_table, json_bytes, jsonl_bytes, png_bytes, seeded_rng, shaded

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
    colour, dark = COLOURS[v.colour], shaded(COLOURS[v.colour], 0.6)
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
        draw.line([(0, row), (SP_SIZE[0], row)], fill=shaded((170, 170, 176), shade))
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


def _vehicle(row: dict) -> Vehicle:
    return Vehicle(
        shape=row["shape"], colour=row["colour"], size=row["size"],
        x=float(row["x"]), z=float(row["z"]), facing=row["facing"],
    )


# One scene per image, from data/spatial457_scenes.json; the questions pick vehicles by their place in it.
SP_SCENES = [[_vehicle(row) for row in scene] for scene in demo_table("spatial457_scenes")]


def _program(*steps) -> list[dict]:
    """A Super-CLEVR program: the scene, then each step (its type, or the step with its inputs)."""
    return [{"type": "scene", "inputs": []}, *({"type": step} if isinstance(step, str) else step for step in steps)]


def _spatial457_questions() -> dict[str, list[tuple[int, str, object, list]]]:
    """Level -> [(image index, question, answer, program)]."""
    s = SP_SCENES
    return {
        "L1_single": [
            (0, "What is the color of the large sedan?", s[0][0].colour, _program("query_color")),
            (1, "Is there a small purple sedan?", True, _program("exist")),
            (4, "What size is the gray minivan?", s[4][1].size, _program("query_size")),
        ],
        "L2_objects": [
            (2, "How many red objects are there?", sum(v.colour == "red" for v in s[2]), _program("count")),
            (3, "Is there a bus that has the same color as the small school bus?", False,
             _program("same_color", "exist")),
            (5, "How many vehicles are there?", len(s[5]), _program("count")),
        ],
        "L3_2d_spatial": [
            (0, "Is the yellow school bus to the right of the red sedan?", s[0][1].x > s[0][0].x,
             _program({"type": "relate", "side_inputs": ["right"]}, "exist")),
            (3, "What is the color of the vehicle that is left of the blue truck?", "purple",
             _program({"type": "relate", "side_inputs": ["left"]}, "query_color")),
        ],
        "L4_occ": [
            (1, "Is the gray truck occluded by another object?", _occluded(s[1], s[1][1]),
             _program("query_occlusion")),
            (5, "Is the cyan school bus occluded?", _occluded(s[5], s[5][0]), _program("query_occlusion")),
        ],
        "L4_pose": [
            (2, "Which direction is the cyan minivan facing?", s[2][0].facing, _program("query_pose")),
            (4, "Which direction is the large brown suv facing?", s[4][0].facing, _program("query_pose")),
        ],
        "L5_6d_spatial": [
            (0, "Is the red sedan facing towards the yellow school bus?", _faces(s[0][0], s[0][1]),
             _program("query_facing")),
            (2, "Is the brown sedan facing towards the cyan minivan?", _faces(s[2][1], s[2][0]),
             _program("query_facing")),
        ],
        "L5_collision": [
            (1, "If the purple sedan moves forward, will it collide with the green suv?", _collides(s[1][2], s[1][0]),
             _program("query_collision")),
            (4, "If the large brown suv moves forward, will it collide with the gray minivan?",
             _collides(s[4][0], s[4][1]), _program("query_collision")),
        ],
    }


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
    image_set = [(_sp_image_name(k), png_bytes(_sp_render(scene))) for k, scene in enumerate(SP_SCENES)]
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
            rng = seeded_rng("spatial457", level, number)
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
            (f"{level}.json", json_bytes({"info": {"split": level, "version": "demo"}, "questions": rows}))
        )
    # The image set carries the first level's questions as its items file; every level file is imported
    # after it (the first one again, unchanged).
    image_set.append(("items.json", level_files[0][1]))
    return FamilyFiles(
        family="spatial457",
        image_set=image_set,
        item_files=level_files,
        outputs=[("demo_vlm_spatial457.jsonl", jsonl_bytes(lines))],
    )
