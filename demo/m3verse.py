"""The M3-Verse demo's files. A row of household objects along a wall, filmed by a camera panning left
to right: once before and once after some operations (objects added, removed, moved, recoloured).
Questions ask what changed, with hallucination items whose asked-for change never happened ("No correct
option is listed.")."""

import random
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from .files import COLOURS, FamilyFiles, json_bytes, jsonl_bytes, seeded_rng, shaded

M3_SIZE = (160, 120)
M3_FRAMES, M3_FPS = 20, 10
NO_OPTION = "No correct option is listed."
M3_CAPABILITIES = ("spatial understanding", "temporal understanding", "attribute recognition", "reasoning")


def _glyph(draw: ImageDraw.ImageDraw, kind: str, colour: str, u: float, base: float) -> None:
    c, dark = COLOURS[colour], shaded(COLOURS[colour], 0.55)
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
    elif kind == "book":  # lying flat, its white pages showing: standing, a narrow block read as a bottle
        draw.rectangle([u - 12, base - 10, u + 12, base], fill=c, outline=dark)
        draw.rectangle([u - 9, base - 6, u + 12, base - 4], fill=(246, 244, 236))
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
    elif kind == "vase":  # with flowers in it: a plain body and neck read as a bottle
        for dx in (-6, 0, 6):
            draw.line([(u, base - 22), (u + dx, base - 32)], fill=(60, 120, 60))
            draw.ellipse([u + dx - 3, base - 36, u + dx + 3, base - 30], fill=(236, 120, 160))
        draw.ellipse([u - 8, base - 18, u + 8, base], fill=c, outline=dark)
        draw.polygon([(u - 3, base - 16), (u + 3, base - 16), (u + 6, base - 24), (u - 6, base - 24)],
                     fill=c, outline=dark)
    else:
        raise ValueError(f"no glyph for {kind!r}: the video would show something its object list does not name")


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
# Questions on what one kind of operation did: (the operation in the log, the side of it that names the
# object, the question, its subcategory, the capabilities it asks for). The options of "new" are drawn
# from every object type, the others' from the objects of the first video.
OBJECT_CHANGES = {
    "new": ("add", "after", "Which objects newly appear in the second video?", "new_visible_objects",
            ["temporal understanding", "attribute recognition"]),
    "removed": ("remove", "before", "Which object is no longer there in the second video?", "disappeared_objects",
                ["temporal understanding", "reasoning"]),
    "moved": ("move", "before", "Which object changed its position between the two videos?", "position_changes",
              ["spatial understanding", "temporal understanding", "reasoning"]),
}


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
    rng = seeded_rng("m3verse", scene_id)
    items = []
    for number, (template, argument) in enumerate(M3_QUESTIONS[scene_id]):
        if template in OBJECT_CHANGES:
            operation, side, question, sub, capabilities = OBJECT_CHANGES[template]
            right = [entry[side]["type"] for entry in log if entry["operation"] == operation]
            category, state = "object_changes", "inter-states"
            pool = M3_TYPES if template == "new" else [o["type"] for o in before]
        elif template == "colour":
            change = next(
                (e for e in log if e["operation"] == "change_color" and e["before"]["type"] == argument), None
            )
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
            (f"{scene_id}/objects_before.json", json_bytes(_m3_objects(before))),
            (f"{scene_id}/objects_after.json", json_bytes(_m3_objects(after))),
            (f"{scene_id}/operations.json", json_bytes(log)),
        ]
        items += _m3_items(scene_id)
    samples = []
    for doc_id, item in enumerate(items):
        rng = seeded_rng("m3verse-model", item["question_id"])
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
        item_files=[("m3verse_demo.jsonl", jsonl_bytes(items))],
        outputs=[("demo_vlm_m3verse_samples.jsonl", jsonl_bytes(samples))],
    )
