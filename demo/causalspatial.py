"""The CausalSpatial demo's files. Top views of a table (pixels, y down) with a motion arrow drawn in:
a ball rolls, a box slides. The answer of each question comes from rolling the object along the arrow
(`_roll`)."""

import math
from dataclasses import dataclass

from PIL import Image, ImageDraw

from .files import COLOURS, MODEL_NAME, FamilyFiles, jsonl_bytes, png_bytes, seeded_rng, shaded

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
                outline=shaded(colour, 0.6),
            )
            draw.ellipse([thing.x - 5, thing.y - 6, thing.x - 1, thing.y - 2], fill=shaded(colour, 1.5))
        elif thing.kind in ("box", "wall"):
            draw.rectangle(thing.rect, fill=colour, outline=shaded(colour, 0.6))
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


def _item(item_id, things, arrows, question, options, answer, pockets=False) -> dict:
    """id, the things on the table, arrows, question, options (the last is Not sure) and answer text."""
    options = [*options, "Not sure"]
    lettered = " ".join(f"({'ABCDE'[i]}) {text}" for i, text in enumerate(options))
    return dict(id=item_id, things=things, arrows=arrows, pockets=pockets, options=options, answer=answer,
                question=f"{question} {lettered}")


def _collision_items() -> list[dict]:
    items = []
    for n, (ball_y, dy, box_y) in enumerate([(96, 0.0, 100), (60, 0.08, 140)]):
        ball, box = Thing("ball", "red", 50, ball_y), Thing("box", "blue", 190, box_y, 36, 36)
        what, thing = _roll(ball.x, ball.y, 1, dy, [box], bounce=False)
        items.append(_item(
            f"Collision_Level_1_{n}",
            [ball, box],
            [((ball.x, ball.y), _tip(ball, 1, dy))],
            "The red ball rolls in the direction of the arrow. Will it hit the blue box?",
            YES_NO,
            "Yes" if what == "hit" else "No",
        ))
    for n, (start, direction, blue, green) in enumerate(
        [
            ((40, 150), (1, -0.55), (112, 50), (205, 60)),
            ((40, 40), (1, 0.45), (130, 82), (210, 150)),
        ]
    ):
        ball = Thing("ball", "red", *start)
        boxes = [Thing("box", "blue", *blue, 34, 34), Thing("box", "green", *green, 36, 36)]
        what, thing = _roll(ball.x, ball.y, *direction, boxes, bounce=False)
        items.append(_item(
            f"Collision_Level_2_{n}",
            [ball, *boxes],
            [((ball.x, ball.y), _tip(ball, *direction))],
            "The red ball rolls in the direction of the arrow. Which box does it hit first?",
            ["the blue box", "the green box", "neither"],
            f"the {thing.colour} box" if what == "hit" else "neither",
        ))
    return items


def _walls(*gaps) -> list[Thing]:
    """A gray wall across the table at y = 90 with the given (left, right) gaps."""
    edges, pieces = [CUSHION, *[x for gap in gaps for x in gap], CS_SIZE[0] - CUSHION], []
    for left, right in zip(edges[::2], edges[1::2], strict=True):
        pieces.append(Thing("wall", "gray", (left + right) / 2, 90, right - left, 10))
    return pieces


def _compatibility_items() -> list[dict]:
    items = []
    for n, (box_w, gap) in enumerate([(30, (106, 150)), (52, (108, 148))]):
        box = Thing("box", "green", 128, 150, box_w, 26)
        fits = box_w < gap[1] - gap[0] and gap[0] <= box.x - box_w / 2 and box.x + box_w / 2 <= gap[1]
        items.append(_item(
            f"Compatibility_Level_1_{n}",
            [*_walls(gap), box],
            [((box.x, box.y - 16), (box.x, box.y - 56))],
            "The green box slides in the direction of the arrow. Can it pass through the gap between the "
            "gray "
            "walls?",
            YES_NO,
            "Yes" if fits else "No",
        ))
    for n, right_gap in enumerate([(170, 206), (158, 218)]):
        yellow, purple = Thing("box", "yellow", 65, 150, 26, 24), Thing("box", "purple", 188, 150, 48, 24)
        fits = [b.colour for b, gap in ((yellow, (40, 90)), (purple, right_gap)) if b.w < gap[1] - gap[0]]
        items.append(_item(
            f"Compatibility_Level_2_{n}",
            [*_walls((40, 90), right_gap), yellow, purple],
            [((b.x, b.y - 14), (b.x, b.y - 54)) for b in (yellow, purple)],
            "Each box is pushed straight along its arrow. Which of them can pass through the gap in front of "
            "it?",
            ["the yellow box", "the purple box", "both"],
            "both" if len(fits) == 2 else f"the {fits[0]} box" if fits else "neither",
        ))
    return items


def _occlusion_items() -> list[dict]:
    items = []
    camera = Thing("camera", "black", 128, 176)
    for n, (start, end) in enumerate([((60, 50), (130, 50)), ((130, 50), (226, 50))]):
        ball, wall = Thing("ball", "yellow", *start), Thing("wall", "gray", 128, 110, 80, 8)
        hidden = _crosses((camera.x, camera.y - 8), end, wall)
        items.append(_item(
            f"Occlusion_Level_1_{n}",
            [wall, camera, ball],
            [((ball.x, ball.y), end)],
            "The yellow ball rolls to the tip of the arrow. Seen from the camera at the bottom, will the "
            "gray "
            "wall hide it there?",
            YES_NO,
            "Yes" if hidden else "No",
        ))
    for n, (start, end) in enumerate([((128, 40), (200, 40)), ((70, 40), (128, 40))]):
        ball = Thing("ball", "yellow", *start)
        left_wall, right_wall = Thing("wall", "gray", 70, 110, 60, 8), Thing("wall", "gray", 186, 110, 60, 8)
        hiding = [
            name
            for name, wall in (("left", left_wall), ("right", right_wall))
            if _crosses((camera.x, camera.y - 8), end, wall)
        ]
        items.append(_item(
            f"Occlusion_Level_2_{n}",
            [left_wall, right_wall, camera, ball],
            [((ball.x, ball.y), end)],
            "The yellow ball rolls to the tip of the arrow. Which wall hides it from the camera there?",
            ["the left wall", "the right wall", "neither"],
            f"the {hiding[0]} wall" if hiding else "neither",
        ))
    return items


def _trajectory_items() -> list[dict]:
    items = []
    for n, (start, direction) in enumerate([((60, 150), (0.9, -1)), ((200, 150), (-0.3, -1))]):
        ball = Thing("ball", "purple", *start)
        _, side = _roll(ball.x, ball.y, *direction, [], bounce=True)
        items.append(_item(f"Trajectory_Level_1_{n}", [ball], [((ball.x, ball.y), _tip(ball, *direction))],
            "The purple ball rolls along the arrow and bounces off the top cushion. Which cushion does it reach next?",
            ["the left cushion", "the right cushion", "the bottom cushion"], f"the {side} cushion"))
    for n, (start, direction) in enumerate([((60, 170), (1, -1.1)), ((200, 170), (1, -0.7))]):
        ball = Thing("ball", "purple", *start)
        _, landing = _roll(ball.x, ball.y, *direction, [], bounce="pockets")
        pocket = min(((50, "left"), (128, "middle"), (206, "right")), key=lambda p: abs(p[0] - landing))[1]
        items.append(_item(f"Trajectory_Level_2_{n}", [ball], [((ball.x, ball.y), _tip(ball, *direction))],
            "The purple ball rolls along the arrow, bouncing off the side cushions. Which pocket does it fall into?",
            ["the left pocket", "the middle pocket", "the right pocket"], f"the {pocket} pocket", pockets=True))
    return items


def _causal_items() -> list[dict]:
    """The demo's items, two levels of each of the paper's four categories, in the file's order."""
    return [*_collision_items(), *_compatibility_items(), *_occlusion_items(), *_trajectory_items()]


def causalspatial_files() -> FamilyFiles:
    items = _causal_items()
    image_set, rows = [], []
    for item in items:
        task = item["id"].split("_Level_")[0].lower()
        path = f"{task}/{item['id']}.png"
        image_set.append((path, png_bytes(_table(item["things"], item["arrows"], item["pockets"]))))
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
    image_set.append(("items.jsonl", jsonl_bytes(rows)))
    outputs = []
    for repeat in range(5):  # CausalSpatial reports five runs, mean and std
        lines = []
        for item, row in zip(items, rows, strict=True):
            rng = seeded_rng("causalspatial", item["id"], repeat)
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
        outputs.append((f"demo_vlm_causalspatial_run{repeat}.jsonl", jsonl_bytes(lines)))
    return FamilyFiles(
        family="causalspatial",
        image_set=image_set,
        outputs=outputs,
    )
