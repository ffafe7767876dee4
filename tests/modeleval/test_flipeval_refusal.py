"""FlipEval never runs an item silently as vanilla: every 3DSRBench item built here carries its flip
decision (swap / same / none, the `flip` tag), and a FlipEval run, a recipe with a FlipEval entry or a
study on mirrored images over items without one is refused before anything starts, naming how many."""

import pytest

from benchmarks.models import Item
from core import roles
from core.errors import DomainError
from humaneval.services.design import StudyDesign, create_study
from modeleval import recipes, services
from modeleval.models import Run
from tests.annotation.test_annotation_kinds import enter, submit
from tests.factories import UserFactory
from tests.modeleval.test_built_items_reach_models import LEFT_BOX, on_an_image, written
from tests.modeleval.test_recipes import endpoint_model

pytestmark = pytest.mark.django_db

LEFT_RIGHT = {"question": "Is the cup on the left or the right of the plate?", "choices": ["left", "right"],
              "correct": ["A"], "question_type": "causal", "tags": {"subtype": "orientation_on_the_left"},
              "overlays": [LEFT_BOX]}
SIGN = {"question": "Does the sign read STOP?", "choices": ["yes", "no"], "correct": ["A"],
        "question_type": "causal", "tags": {"subtype": "location_next_to"}}


def test_a_3dsrbench_item_is_written_with_its_flip_decision(client):
    campaign = on_an_image("3dsrbench")
    first = enter(client, campaign, "PID1")
    undecided = submit(client, first, LEFT_RIGHT)
    assert undecided.status_code == 400 and "mirrored image" in undecided.json()["flip_swaps"][0]
    wrong = submit(client, first, {**LEFT_RIGHT, "flip": "maybe"})
    assert wrong.status_code == 400 and "swap" in wrong.json()["flip"][0]
    for pid, body in (("PID1", {**LEFT_RIGHT, "flip": "swap"}), ("PID2", {**SIGN, "flip": "none"}),
                      ("PID3", {**SIGN, "question": "Is the sign taller than the car?", "flip_swaps": False})):
        assignment = first if pid == "PID1" else enter(client, campaign, pid)
        assert submit(client, assignment, body).status_code == 201
    assert [item.tags["flip"] for item in Item.objects.order_by("pk")] == ["swap", "none", "same"]


def test_flipeval_over_items_without_a_flip_decision_is_refused_naming_how_many(
        client, chat_servers, django_capture_on_commit_callbacks):
    campaign = on_an_image("3dsrbench")
    swap, none = written(client, campaign, [{**LEFT_RIGHT, "flip": "swap"}, {**SIGN, "flip": "none"}])
    benchmark = campaign.benchmark
    # two items of the benchmark carry no decision (imported from a TSV without -flip rows, say)
    for question in ("Is the lamp above the desk?", "Is the mug next to the plate?"):
        Item.objects.create(benchmark=benchmark, scene=swap.scene, question=question, choices=["yes", "no"],
                            answers=["A"], answer_format="single", status=Item.Status.APPROVED,
                            tags={"category": "location", "subtype": "location_above"})
    model = endpoint_model(chat_servers(reply="A"), "gpt-4o", "image")
    with pytest.raises(DomainError, match=r"flip decision \(swap, same or none\): 2 of the 4 items have none") as error:
        services.launch_run(model.pk, benchmark, None, protocol={"flip": True})
    assert error.value.field == "protocol"
    # the paper's recipe runs vanilla, circular and flip: all or none, so nothing is launched
    with pytest.raises(DomainError, match="2 of the 4 items have none"):
        recipes.launch_recipe("3dsrbench-table2", benchmark, [model.pk])
    client.force_login(UserFactory(role=roles.ADMIN))
    response = client.post("/api/v1/recipes/launch/", {"recipe": "3dsrbench-table2", "benchmark": benchmark.slug,
                                                       "models": [model.pk]}, content_type="application/json")
    assert response.status_code == 400 and "2 of the 4 items have none" in response.json()["protocol"][0]
    assert not Run.objects.exists()
    # an evaluators' study on mirrored images says the same before it starts
    with pytest.raises(DomainError, match="2 of the 4 scored items have none") as error:
        create_study(benchmark, StudyDesign("Flip", [i.pk for i in Item.objects.filter(benchmark=benchmark)],
                                            60, 600, flip_images=True), UserFactory())
    assert error.value.field == "flip_images"

    # decided items run: the swap item gets its mirrored variant, the 'none' item only its plain one
    Item.objects.filter(benchmark=benchmark).exclude(pk__in=[swap.pk, none.pk]).delete()
    with django_capture_on_commit_callbacks(execute=True):
        run = services.launch_run(model.pk, benchmark, None, protocol={"flip": True})
    run.refresh_from_db()
    assert run.status == "finished" and run.total == 3
    assert sorted(run.predictions.values_list("item_id", "variant")) == sorted(
        [(swap.pk, ""), (swap.pk, "flip"), (none.pk, "")])
