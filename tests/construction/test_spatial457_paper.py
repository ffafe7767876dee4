"""Spatial457 questions as the paper's generator writes them: Super-CLEVR's official vocabulary
(fixtures/spatial457: `addi` is a "regular car", buses are "buses"), templates drawn per image with
each template's answers balanced, and the L4 occlusion level from the scene's occlusion data."""

import collections
import re

from construction.generators import spatial457
from tests.construction.test_generators import _scene

VEHICLES = ["addi", "articulated", "road", "suv", "school", "chopper", "jet", "tandem", "double"]


def _superclevr(seed=7, count=9):
    scene = _scene(seed=seed, count=count)
    for number, obj in enumerate(scene["objects"]):
        obj["shape"] = VEHICLES[number % len(VEHICLES)]
    return scene


def test_superclevr_shapes_read_in_the_official_vocabulary_with_correct_plurals():
    scenes = [_superclevr(seed) for seed in range(3)]
    texts, answers = [], []
    for level in ("L1_single", "L2_objects", "L3_2d_spatial"):
        data = spatial457.generate(scenes, level, per_template=2, seed=1, templates_per_image=None)
        texts += [q["question"] for q in data["questions"]]
        answers += [q["answer"] for q in data["questions"] if q["program"][-1]["type"] == "query_shape"]
    words = " ".join(texts)
    assert re.search(r"\b(regular cars?|articulated bus(es)?|road bikes?|school bus(es)?)\b", words)
    wrong = re.findall(r"\b(?:addis?|buss|roads|articulated(?! bus)|schools|tandems|a [aeio]\w+)\b", words)
    assert not wrong, wrong
    assert re.search(r"\b(buses|bikes|cars|things|objects|suvs|jets|choppers)\b", words)  # plurals asked too
    assert answers and not set(answers) & {"addi", "road", "articulated"}


def test_templates_are_drawn_per_image_and_answers_balanced_per_template():
    scenes = [{**_scene(seed), "image_filename": f"img_{seed}.png"} for seed in range(24)]
    data = spatial457.generate(scenes, "L3_2d_spatial", seed=3, templates_per_image=3)
    per_image = collections.defaultdict(set)
    for q in data["questions"]:
        per_image[q["image_filename"]].add(q["question_family_index"])
    assert per_image and all(len(templates) <= 3 for templates in per_image.values())
    assert len({t for templates in per_image.values() for t in templates}) > 3  # different ones per image
    yes_no = collections.defaultdict(collections.Counter)
    for q in data["questions"]:
        if q["answer"] in ("yes", "no"):
            yes_no[q["question_family_index"]][q["answer"]] += 1
    assert yes_no
    for counts in yes_no.values():
        assert abs(counts["yes"] - counts["no"]) <= spatial457.BALANCE_SLACK + 1, counts


def test_l4_occlusion_questions_follow_the_scenes_occlusion_data():
    scene = _superclevr(seed=11, count=6)
    # object 0 hides part of object 1, and nothing else is hidden
    scene["occlusion"] = {"1": {"obj": [0.4, 10, 20, 30]}}
    scene["_occlusion_relation"] = {"occluding": {"0": [1]}, "occluded": {"1": [0]}}
    data = spatial457.generate(scene, "L4_occ", per_template=4, seed=2, templates_per_image=None)
    names = {"suv": "suv", "addi": "regular car", "articulated": "articulated bus", "road": "road bike",
             "school": "school bus", "chopper": "chopper"}
    assert data["questions"]
    for q in data["questions"]:
        assert {"filter_occludee", "relate_occluding", "relate_occluded"} & {n["type"] for n in q["program"]}
        target = scene["objects"][0 if " occludes " in q["question"] else 1]
        asked = q["program"][-1]["type"][len("query_"):]
        expected = names.get(target[asked], target[asked]) if asked == "shape" else target[asked]
        assert q["answer"] == expected, q["question"]
    assert not spatial457.generate(_scene(), "L4_occ", seed=2)["questions"]  # no occlusion data, no questions
