"""The finished Hypo3D demo's files. The rooms of rooms.py (same layouts and world frames as the
hypo3d-demo sandbox) and hypothetical changes on them with questions whose answers follow from the
layouts (metres; front is the y = 0 wall, back the y = depth wall, left x = 0, right x = width, as on
the top-view map)."""


from .files import COLOURS, FamilyFiles, Scan, json_bytes, ply_bytes, seeded_rng
from .rooms import ROOMS, generate_room

# scene id: [(context change, change type, [(question id, question type, question, answer)])]
HYPO3D_CHANGES = {
    # bedroom: bed against the back wall, wardrobe and window on the left, desk on the right
    "demo_room_01": [
        ("The chair has been moved from the desk to the spot in front of the wardrobe.", "Movement Change", [
            ("00001", "Direction", "After the change, is the chair on the left or the right side of the room?", "left"),
            ("00002", "Semantic Direction", "Which piece of furniture is now directly to the left of the chair?",
             "wardrobe"),
        ]),
        ("The nightstand has been removed from the bedroom.", "Removal Change", [
            ("00003", "Semantic Direction", "Which object is now the closest one on the left side of the bed?",
             "wardrobe"),
        ]),
        ("The wardrobe has been painted white.", "Attribute Change", [
            ("00004", "Semantic", "What colour is the wardrobe now?", "white"),
        ]),
        ("A bookshelf has been added in the front right corner of the room, next to the door.", "Addition Change", [
            ("00005", "Direction", "In which corner of the room is the bookshelf?", "front right"),
        ]),
        ("The plant has been replaced with a second floor lamp.", "Replacement Change", [
            ("00006", "Scale", "How many lamps are in the bedroom now?", "2"),
        ]),
    ],
    # office: bookshelf on the left wall, desk at the back, cabinet and window on the right
    "demo_room_02": [
        ("The office chair has been moved from the desk to the window on the right wall.", "Movement Change", [
            ("00007", "Direction", "Which wall is the office chair next to now?", "right"),
            ("00008", "Semantic", "Which object is now closest to the office chair?", "window"),
        ]),
        ("The table has been removed from the middle of the office.", "Removal Change", [
            ("00009", "Semantic", "What is now between the two chairs?", "nothing"),
        ]),
        ("The cabinet has been painted red.", "Attribute Change", [
            ("00010", "Semantic", "What colour is the cabinet after the change?", "red"),
        ]),
        ("A printer has been added on top of the cabinet.", "Addition Change", [
            ("00011", "Direction", "On which side of the office is the printer?", "right"),
        ]),
        ("The lamp has been replaced with a coat rack.", "Replacement Change", [
            ("00012", "Semantic Direction", "What stands in the back left corner of the office now?", "coat rack"),
        ]),
    ],
    # living room: sofa at the front under the window, tv at the back, bookshelf on the right
    "demo_room_03": [
        ("The armchair has been moved from the left wall to the right side of the coffee table.", "Movement Change", [
            ("00013", "Direction", "Is the armchair now to the left or to the right of the coffee table?", "right"),
            ("00014", "Semantic", "Which piece of furniture is now closest to the armchair?", "coffee table"),
        ]),
        ("The tv has been removed from the tv stand.", "Removal Change", [
            ("00015", "Semantic", "What is on the tv stand now?", "nothing"),
        ]),
        ("The sofa has been reupholstered in blue fabric.", "Attribute Change", [
            ("00016", "Semantic", "What colour is the sofa now?", "blue"),
        ]),
        ("A rug has been added under the coffee table, in front of the sofa.", "Addition Change", [
            ("00017", "Scale", "How many objects are now between the sofa and the tv stand?", "2"),
        ]),
        ("The bookshelf has been replaced with a fireplace.", "Replacement Change", [
            ("00018", "Direction", "Which wall is the fireplace against?", "right"),
        ]),
    ],
}

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
