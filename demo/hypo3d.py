"""The finished Hypo3D demo's files. The rooms of rooms.py (same layouts and world frames as the
hypo3d-demo sandbox) and hypothetical changes on them with questions whose answers follow from the
layouts (metres; front is the y = 0 wall, back the y = depth wall, left x = 0, right x = width, as on
the top-view map)."""


from .files import COLOURS, FamilyFiles, Scan, demo_table, json_bytes, ply_bytes, seeded_rng
from .rooms import ROOMS, generate_room


def _changes(scene: dict) -> list[tuple[str, str, list[tuple[str, str, str, str]]]]:
    """One scene's changes from the JSON (written in the item file's shape) as tuples."""
    return [
        (
            change["context_change"],
            change["change_type"],
            [
                (qa["question_id"], qa["question_type"], qa["question"], qa["answer"])
                for qa in change["questions_answers"]
            ],
        )
        for change in scene["changes"]
    ]


# scene id: [(context change, change type, [(question id, question type, question, answer)])], from
# data/hypo3d_changes.json (each scene's layout, which the answers follow from, is written beside it).
HYPO3D_CHANGES = {scene_id: _changes(scene) for scene_id, scene in demo_table("hypo3d_changes").items()}

# Crowd work on the finished benchmark's movement campaign, in the order workers arrive (the campaign
# leases the least-filled room first, so they get rooms 1, 2, 3, 1, 2). What the reviewer then does:
# ("approve", refined text or None, [(question, answer, question types)]), ("reject", criteria, note),
# "queue" (left for review) or "draft" (still being written: autosaved, not submitted).
HYPO3D_CROWD = [
    ("demo-worker-a", "demo_room_01", "The lamp has been moved from beside the bed to the corner next to the plant.",
     ("approve", "The lamp has been moved from beside the bed to the front left corner, next to the plant.", [
         ("Which object is now closest to the lamp?", "plant", ["Semantic"]),
         ("Is the lamp now nearer the front wall or the back wall?", "front", ["Direction"]),
     ])),
    ("demo-worker-b", "demo_room_02", "The cabinet has been moved from the right wall to the spot beside the bookshelf.",
     ("approve", None, [("On which side of the office is the cabinet now?", "left", ["Direction"])])),
    ("demo-worker-c", "demo_room_03",
     "The plant has been moved from its corner to the other corner of the room near the lamp.",
     ("reject", ["unambiguous"],
      "Which corner? Say where the plant ends up by naming the object it stands next to.")),
    ("demo-worker-d", "demo_room_01", "The desk has been moved from the right wall to the space in front of the window.",
     "queue"),
    ("demo-worker-e", "demo_room_02", "The table has been moved from the middle of the office to", "draft"),
]


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
                ply=ply_bytes(room.xyz, room.rgb, alpha=False, comment="HypoLab demo room"),
                boxes=json_bytes(boxes),
                caption=room.caption,
                world_frame=f"The {room.anchor['label']} was located at the {room.side} of the scene.",
            )
        )
    return scans


def _change_entry(scene_id: str, text: str, change_type: str, qas, predict=None) -> dict:
    """One change of the item file with its questions; `predict` adds the model's `predicted_answer`."""
    return {
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


def _hypo3d_document(predict=None) -> dict:
    return {
        scene_id: [_change_entry(scene_id, text, change_type, qas, predict) for text, change_type, qas in changes]
        for scene_id, changes in HYPO3D_CHANGES.items()
    }


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
    rng = seeded_rng("hypo3d", qid)
    if rng.random() < 0.45:
        return rng.choice([answer, answer, f"The {answer}."])
    return rng.choice(hypo3d_distractors(scene_id, answer))


def hypo3d_prediction_file(extra=()) -> tuple[str, bytes]:
    """Demo VLM's Hypo3D prediction file: the item file with `predicted_answer` in each QA. `extra` adds
    questions written on the platform, keyed by their release id: (scene id, context change, change type,
    question id, question type, question, answer)."""
    document = _hypo3d_document(_hypo3d_predict)
    for scene_id, text, change_type, *qa in extra:
        document.setdefault(scene_id, []).append(_change_entry(scene_id, text, change_type, [qa], _hypo3d_predict))
    return "demo_vlm_hypo3d_predictions.json", json_bytes(document)


def hypo3d_files(points_per_room: int = 220_000) -> FamilyFiles:
    return FamilyFiles(
        family="hypo3d",
        scans=hypo3d_scans(points_per_room=points_per_room),
        item_files=[("hypo3d_demo_items.json", json_bytes(_hypo3d_document()))],
        outputs=[hypo3d_prediction_file()],
    )
