"""The per-family tag picker (#29): the authoring page offers the family's tags as lists (3DSRBench
category and subtype, CausalSpatial level and task, M3-Verse state type and capabilities, Spatial457
level); an item written with values picked from those lists carries them and lands in its paper
table's cells."""

import re

import pytest

import scoring
from annotation import services
from benchmarks.models import Item
from benchmarks.services import gold_row
from tests.annotation.test_annotation_kinds import enter, submit
from tests.factories import BenchmarkFactory, SceneFactory

pytestmark = pytest.mark.django_db

SELECT = re.compile(r'<select id="tag-(?P<key>\w+)" data-tag="\w+"(?P<multiple> multiple)?[^>]*>(?P<body>.*?)</select>',
                    re.DOTALL)
OPTION = re.compile(r'<option value="([^"]+)"(?: data-group="([^"]+)")?>')


def picker(page: str) -> dict[str, dict]:
    """The page's lists: {key: {"multiple": bool, "options": [(value, group)]}}."""
    return {m["key"]: {"multiple": bool(m["multiple"]), "options": OPTION.findall(m["body"])}
            for m in SELECT.finditer(page)}


def written_with_the_picker(client, family, kind, pick):
    benchmark = BenchmarkFactory(family=family)
    campaign = services.create_campaign(benchmark, kind, "movement", [SceneFactory(benchmark=benchmark)], kind=kind,
                                        question_types={"spatial": ["Spatial"]})
    assignment = enter(client, campaign)
    lists = picker(client.get(f"/annotate/{assignment.pk}/").content.decode())
    tags = pick(lists)
    for key, value in tags.items():  # every value sent is one the page listed
        assert set(value if isinstance(value, list) else [value]) <= {v for v, _ in lists[key]["options"]}
    body = {"question": "Which one is it?", "choices": ["the lamp", "the chair"], "correct": ["A"],
            "question_type": "spatial", "tags": tags}
    if kind == "choice_image" and family == "3dsrbench":
        body["flip_swaps"] = False
    response = submit(client, assignment, body)
    assert response.status_code == 201, response.json()
    return lists, Item.objects.get(benchmark=benchmark)


def in_cell(family, item, key):
    row = gold_row(item)
    result = scoring.score(family, [row], [{"id": row["id"], "output": "A"}], by=[key])
    value = item.tags[key]
    return f"{key}={'+'.join(value) if isinstance(value, list) else value}" in result["by"]


def test_3dsrbench_category_and_subtype_are_picked_from_lists(client):
    def pick(lists):
        assert [v for v, _ in lists["category"]["options"]] == ["height", "location", "orientation", "multi_object"]
        assert len(lists["subtype"]["options"]) == 12
        assert ("orientation_viewpoint", "orientation") in lists["subtype"]["options"]  # grouped by category
        return {"category": "orientation", "subtype": "orientation_viewpoint"}

    _, item = written_with_the_picker(client, "3dsrbench", "choice_image", pick)
    assert (item.tags["category"], item.tags["subtype"]) == ("orientation", "orientation_viewpoint")
    assert in_cell("3dsrbench", item, "category") and in_cell("3dsrbench", item, "subtype")


def test_a_category_that_does_not_hold_the_subtype_is_refused(client):
    benchmark = BenchmarkFactory(family="3dsrbench")
    campaign = services.create_campaign(benchmark, "choice_image", "movement", [SceneFactory(benchmark=benchmark)],
                                        kind="choice_image", question_types={"spatial": ["Spatial"]})
    response = submit(client, enter(client, campaign), {
        "question": "Which one?", "choices": ["a", "b"], "correct": ["A"], "question_type": "spatial",
        "flip_swaps": False, "tags": {"category": "height", "subtype": "orientation_viewpoint"}})
    assert response.status_code == 400 and "category orientation" in response.json()["tags"][0]


def test_causalspatial_level_and_task(client):
    _, item = written_with_the_picker(client, "causalspatial", "choice_image",
                                      lambda lists: {"level": lists["level"]["options"][1][0],
                                                     "task": lists["task"]["options"][3][0]})
    assert (item.tags["level"], item.tags["task"]) == ("L2", "trajectory")
    assert in_cell("causalspatial", item, "task") and in_cell("causalspatial", item, "level")


def test_m3verse_state_type_and_several_capabilities(client):
    def pick(lists):
        assert lists["capabilities"]["multiple"] and not lists["state_type"]["multiple"]
        return {"state_type": "intra-state", "capabilities": ["reasoning", "spatial understanding"]}

    _, item = written_with_the_picker(client, "m3verse", "choice_video", pick)
    assert item.tags["state_type"] == "intra-state"
    assert item.tags["capabilities"] == ["reasoning", "spatial understanding"]
    assert in_cell("m3verse", item, "state_type")


def test_spatial457_level(client):
    _, item = written_with_the_picker(client, "spatial457", "choice_image",
                                      lambda lists: {"level": lists["level"]["options"][3][0]})
    assert item.tags["level"] == "L4_occ"
    # Spatial457 is scored on the open answer: the ticked choice's words are the item's answer
    assert (item.answer_format, item.answers, item.choices) == ("open", ["the lamp"], [])
    assert in_cell("spatial457", item, "level")
