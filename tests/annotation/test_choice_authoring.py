"""Every family authorable: the choice kinds take 2-7 options, one or several answers, an optional
"Not sure" option and the family's tags, so an item written here lands in its paper table's cells;
options parse from the papers' own wordings. CausalSpatial items with Not sure are written, reviewed
and scored (accuracy and Not-Sure rate)."""

import pytest

import scoring
from annotation import services
from benchmarks.importers.causalspatial import parse_options
from benchmarks.models import Item
from benchmarks.services import gold_row
from core import roles
from review import services as review_services
from tests.annotation.test_annotation_kinds import enter, submit
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

YES_NO = "From the car's perspective, could it bump into something if it proceeds forward?\n\n" \
         "Answer by (A) Yes, (B) No or (C) Not sure."
COLLISION_L2 = ("If it starts to move forward, what else should be done to avoid collisions?\n"
                "- (A) Remove the soft, pale grayish-white vase with moon pattern;\n- (B) There is no collision;\n"
                "- (C) Remove UFO-shaped yellow vase;\n- (D) Removing the vase with green plants is sufficient;\n"
                "- (E) Not sure;\n- (F) Remove the white vase with a twisted loop.\n\n"
                "If you determine there is no collision, please select the option indicating no collision.")


def test_the_papers_option_wordings_parse():
    assert parse_options(YES_NO) == ["Yes", "No", "Not sure"]
    assert parse_options("Answer by (A) Not sure; (B) Yes; (C) No.") == ["Not sure", "Yes", "No"]
    assert parse_options("Answer by (A) Revealed, (B) Occluded or (C) Not sure.") == ["Revealed", "Occluded",
                                                                                       "Not sure"]
    six = parse_options(COLLISION_L2)
    assert len(six) == 6 and six[0] == "Remove the soft, pale grayish-white vase with moon pattern"
    assert six[4:] == ["Not sure", "Remove the white vase with a twisted loop"]


def _campaign(family, kind="choice_image"):
    benchmark = BenchmarkFactory(family=family)
    scene = SceneFactory(benchmark=benchmark)
    return services.create_campaign(benchmark, kind, "movement", [scene], kind=kind,
                                    question_types={"causal": ["Causal"]}, assignments_per_scene=3)


def test_causalspatial_items_with_not_sure_are_written_reviewed_and_scored(client):
    campaign = _campaign("causalspatial")
    first = enter(client, campaign)
    form = client.get(f"/annotate/{first.pk}/").content.decode()
    assert 'id="not-sure"' in form and "<option>7</option>" in form and "causalspatial tags" in form
    tags = {"level": "L1", "task": "collision"}
    body = {"question": YES_NO, "correct": ["A"], "question_type": "causal", "tags": tags}
    assert "Not sure" in submit(client, first, {**body, "correct": ["C"]}).json()["correct"][0]
    assert "level" in submit(client, first, {**body, "tags": {"task": "collision"}}).json()["tags"][0]
    assert submit(client, first, body).status_code == 201
    three = Item.objects.get()
    assert three.choices == ["Yes", "No", "Not sure"] and three.answers == ["A"]
    assert three.tags["not_sure"] == "C" and (three.tags["level"], three.tags["task"]) == ("L1", "collision")

    second = enter(client, campaign, "PID2")
    five = ["Remove the moon vase", "There is no collision", "Remove the yellow vase", "It is sufficient",
            "Remove the white vase"]
    written = submit(client, second, {"question": "What else should be removed to avoid collisions?",
                                      "choices": five, "not_sure": True, "correct": ["C"],
                                      "question_type": "causal", "tags": {"level": "L2", "task": "collision"}})
    assert written.status_code == 201, written.json()
    six = Item.objects.latest("pk")
    assert six.choices == [*five, "Not sure"] and six.tags["not_sure"] == "F"
    too_many = {"question": "Which one?", "choices": [f"option {n}" for n in range(8)], "correct": ["A"],
                "question_type": "causal", "tags": tags}
    assert "7 choices" in submit(client, enter(client, campaign, "PID3"), too_many).json()["choices"][0]

    reviewer = UserFactory(role=roles.REVIEWER)
    for item in (three, six):
        review_services.approve_item(item.pk, reviewer, item.version)
    items = Item.objects.filter(status=Item.Status.APPROVED).order_by("pk")
    gold = [gold_row(item) for item in items]
    # the paper's output shape: {'Reasoning': ..., 'Answer': ...}
    result = scoring.score("causalspatial", gold, [{"id": gold[0]["id"], "output": "{'Answer': '(A) Yes'}"},
                                                   {"id": gold[1]["id"], "output": "{'Answer': '(F)'}"}])
    assert result["overall"]["accuracy"] == 50.0 and result["overall"]["not_sure_rate"] == 50.0


def test_a_3dsrbench_item_written_here_lands_in_its_category_and_subtype(client):
    campaign = _campaign("3dsrbench")
    assignment = enter(client, campaign)
    body = {"question": "Which object is higher?", "choices": ["the lamp", "the chair"], "correct": ["A"],
            "flip_swaps": False, "question_type": "causal", "tags": {"subtype": "height_higher"}}
    assert submit(client, assignment, body).status_code == 201
    item = Item.objects.get()
    assert (item.tags["category"], item.tags["subtype"]) == ("height", "height_higher")
    result = scoring.score("3dsrbench", [gold_row(item)], [{"id": gold_row(item)["id"], "output": "A"}],
                           by=["category"])
    assert "category=height" in result["by"]


def test_m3verse_and_spatial457_tags_and_several_answers(client):
    video = _campaign("m3verse", kind="choice_video")
    body = {"question": "Which objects moved?", "choices": ["Mug", "Apple", "Book"], "correct": ["A", "C"],
            "question_type": "causal", "tags": {"state_type": "inter-states", "capabilities": ["reasoning"]}}
    assert submit(client, enter(client, video), body).status_code == 201
    item = Item.objects.get()
    assert item.answer_format == "multi" and item.tags["state_type"] == "inter-states"
    image = _campaign("spatial457")
    body = {"question": "How many cars are left of the bus?", "choices": ["1", "2", "3"], "correct": ["B"],
            "question_type": "causal", "tags": {"level": "L3_2d_spatial"}}
    assert submit(client, enter(client, image), body).status_code == 201  # no mirrored image asked about
    assert Item.objects.latest("pk").tags["level"] == "L3_2d_spatial"
