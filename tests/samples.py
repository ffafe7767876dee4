"""Items in the shapes their benchmarks publish, shared by the importer tests and the tests that score
outputs made elsewhere."""

import json

# M3-Verse question JSONL: a multiple-choice, a single-choice and a hallucination question over two scenes.
M3VERSE = [
    {"scene_id": "scene_800", "category": "object_changes", "question_id": "scene_800-17",
     "state_type": "inter-states", "question": "Which objects newly appear?",
     "options": ["A. Apple", "B. Mug", "C. No correct option is listed.", "D. Laptop"], "answer": ["A", "D"],
     "question_type": "multiple_choice", "subcategory": "new_visible_objects", "hallucination": False,
     "capabilities": ["temporal understanding"]},
    {"scene_id": "scene_800", "category": "attribute_changes", "question_id": "scene_800-18",
     "state_type": "intra-state", "question": "What color is the mug?",
     "options": ["A. Red", "B. Blue", "C. Green", "D. No correct option is listed."], "answer": ["B"],
     "question_type": "single_choice", "subcategory": "color", "hallucination": False,
     "capabilities": ["attribute recognition"]},
    {"scene_id": "scene_801", "category": "object_changes", "question_id": "scene_801-2",
     "state_type": "inter-states", "question": "Which object was removed from the sofa?",
     "options": ["A. Pillow", "B. Remote", "C. No correct option is listed.", "D. Book"], "answer": ["C"],
     "question_type": "single_choice", "subcategory": "removed_objects", "hallucination": True,
     "capabilities": ["spatial understanding", "reasoning"]},
]


def jsonl(rows) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)
