"""Issue 7, per family and protocol: 3DSRBench's circular groups, CausalSpatial's own 'not sure'
option, Spatial457's open answers read like a model's, abandoned sessions, the protocols' variants
(circular orders, flipped images) and consensus answerers."""

import io
from datetime import timedelta

import pytest
from django.utils import timezone

from core import roles
from core.errors import Forbidden
from humaneval.models import EvalSession, Study
from humaneval.services.design import StudyDesign, create_study, study_design
from humaneval.services.results import scorer_row_id, scorer_rows, study_results
from humaneval.services.sessions import answer_item, current_item, plan_entry, start_session
from scoring.tables import paper_table
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory
from tests.humaneval.test_humaneval_design import (
    answer,
    current,
    enter,
    hypo3d_pool,
    m3verse_items,
    shown_letter,
    single_choice_items,
)

pytestmark = pytest.mark.django_db


def answer_all_by_text(client, session, texts):
    state = current(client, session).json()
    while state["item"]:
        item = state["item"]
        state = answer(client, session, item["id"], shown_letter(item, texts[item["question"]])).json()


def test_3dsrbench_rotations_of_a_question_are_one_circular_group_per_participant(client):
    tags = {"category": "height_higher"}
    bench, items = single_choice_items(
        "3dsrbench",
        [
            ("VIN6MS3J", ["higher", "lower"], "A", tags),
            ("VIN6MS3J-1", ["lower", "higher"], "B", tags),
        ],
    )
    study = create_study(bench, StudyDesign("S", [i.pk for i in items]), None)
    enter(client, study, "CIRC")
    session = EvalSession.objects.get()
    # Right on the first rotation, wrong on the second: vanilla 50, circular 0.
    answer_all_by_text(client, session, {"Question VIN6MS3J": "higher", "Question VIN6MS3J-1": "lower"})
    result = study_results(study)
    assert result["overall"]["vanilla"] == 50.0 and result["overall"]["circular"] == 0.0
    assert "category=height" in result["by"]


def test_causalspatial_native_not_sure_option_counts_in_the_not_sure_rate(client):
    tags = {"level": "L1", "task": "collision"}
    bench, items = single_choice_items(
        "causalspatial",
        [
            ("Collision_Level_1_0", ["Yes", "No", "Not sure"], "A", tags),
            ("Collision_Level_1_1", ["Yes", "No", "Not sure"], "B", tags),
        ],
    )
    study = create_study(bench, StudyDesign("S", [i.pk for i in items], offer_not_sure=True), None)
    enter(client, study, "NS")
    session = EvalSession.objects.get()
    assert not current(client, session).json()["item"]["not_sure_option"]  # the item has its own
    answer_all_by_text(
        client, session, {"Question Collision_Level_1_0": "Yes", "Question Collision_Level_1_1": "Not sure"}
    )
    result = study_results(study)
    # one participant: no interval over participants can be measured (the cells say so)
    assert result["overall"].pop("ci") == {"accuracy": None, "not_sure_rate": None}
    assert result["overall"] == {"accuracy": 50.0, "not_sure_rate": 50.0}, result
    table = paper_table("causalspatial", [("Human", "human", result)])
    assert table["columns"] == ["Overall", "L1+collision"]
    assert [[v["value"] for v in cell] for cell in table["rows"][0]["cells"]] == [[50.0, 50.0], [50.0, 50.0]]


def test_spatial457_open_answers_are_read_like_a_models_without_format_errors(client):
    bench = BenchmarkFactory(family="spatial457")
    scene = SceneFactory(benchmark=bench)
    items = [
        ItemFactory(
            change=None,
            scene=scene,
            benchmark=bench,
            question=f"How many cars? ({n})",
            answers=[gold],
            tags={"level": level},
        )
        for n, (gold, level) in enumerate((("3", "L1_single"), ("yes", "L5_collision")))
    ]
    study = create_study(bench, StudyDesign("S", [i.pk for i in items]), None)
    enter(client, study, "S457")
    session = EvalSession.objects.get()
    state = current(client, session).json()
    while state["item"]:
        state = answer(
            client, session, state["item"]["id"], "three" if "(0)" in state["item"]["question"] else "Yes"
        ).json()
    result = study_results(study)
    assert {k: v for k, v in result["overall"].items() if k != "ci"} == {"accuracy": 100.0, "format_errors": 0}
    assert set(result["by"]) == {"level=L1_single", "level=L5_collision"}


def test_an_abandoned_session_gives_its_unanswered_places_back():
    bench, items = hypo3d_pool(per_type=1)
    study = create_study(bench, StudyDesign("S", [i.pk for i in items], participants_per_item=1), None)
    quitter = start_session(study, UserFactory())
    shown = current_item(quitter.pk, quitter.participant).on_screen.response
    answer_item(quitter.pk, quitter.participant, shown.item_id, "a guess")
    EvalSession.objects.filter(pk=quitter.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    newcomer = start_session(study, UserFactory())
    planned = set(newcomer.plan.values_list("item_id", flat=True))
    assert planned == {i.pk for i in items} - {shown.item_id}


# --- protocol variants (circular orders, flipped images) and consensus answerers -----------------


def _photo() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (6, 3), (0, 0, 255)).save(out, format="PNG")
    return out.getvalue()


def test_circular_and_flip_variants_are_spread_over_participants_and_scored_with_suffix_ids():
    from benchmarks.models import Asset
    from benchmarks.services import store_asset
    from humaneval.api import item_view

    tags = {"category": "orientation_on_the_left", "flip": "swap"}
    bench, (item,) = single_choice_items("3dsrbench", [("Q1", ["left", "right"], "A", tags)])
    photo = store_asset(item.scene, "image", "photo.png", _photo(), {"overlays": [
        {"type": "box", "x": 0, "y": 0, "width": 2, "height": 1}]})
    study = create_study(
        bench, StudyDesign("S", [item.pk], participants_per_item=4, seed=5, circular_variants=True,
                           flip_images=True), None)
    assert study_design(study)["circular_variants"] and study.flip_images
    twin = Asset.objects.get(role="image_flipped")
    assert twin.meta["flipped_from"] == photo.pk and twin.meta["overlays"][0]["x"] == 4

    shown = {}
    for _ in range(4):
        participant = UserFactory()
        session = start_session(study, participant)
        response = current_item(session.pk, participant).on_screen.response
        entry = plan_entry(session, item.pk)
        view = item_view(session, entry, response)
        mirrored = entry.variant.startswith("flip")
        assert view["images"][0]["url"] == (twin if mirrored else photo).file.url
        shown[entry.variant] = view["choices"]
        # right on every variant but the mirrored rotated one, answered as if the image were not mirrored
        text = "right" if mirrored and entry.variant != "flip-1" else "left"
        answer_item(session.pk, participant, item.pk, "AB"[view["choices"].index(text)])
        current_item(session.pk, participant)  # nothing left: the session finishes (only finished ones count)
        gold, prediction = scorer_rows(item.benchmark.family, entry, response, scorer_row_id(response))
        assert gold["id"] == prediction["id"] == f"s{session.pk}/Q1" + (f"-{entry.variant}" if entry.variant else "")
    assert set(shown) == {"", "1", "flip", "flip-1"}
    assert shown["1"] == ["right", "left"] and shown["flip"] == ["left", "right"]
    result = study_results(study)
    assert result["overall"]["vanilla"] == 75.0 and "flip" in result["overall"]


def test_the_design_form_and_api_accept_circular_variants_and_flipped_images(client):
    bench, items = m3verse_items()
    client.force_login(UserFactory(role=roles.ADMIN))
    posted = client.post(f"/manage/{bench.slug}/studies/design/",
                         {"name": "Form", "items": [i.pk for i in items], "circular_variants": "on"})
    assert posted.status_code == 302
    assert Study.objects.get(name="Form").circular_variants and not Study.objects.get(name="Form").flip_images
    body = {"benchmark": bench.slug, "name": "Api", "items": [items[0].pk], "flip_images": True}
    refused = client.post("/api/v1/studies/", body, content_type="application/json")  # no flip decision
    assert refused.status_code == 400 and "1 of the 1 scored items have none" in refused.json()["flip_images"][0]
    items[0].tags = {**items[0].tags, "flip": "none"}
    items[0].save(update_fields=["tags"])
    created = client.post("/api/v1/studies/", body, content_type="application/json")
    assert created.status_code == 201 and created.json()["design"]["flip_images"] is True


def test_consensus_answerers_and_item_reviewers_of_a_sampled_item_are_refused():
    from review.consensus import record_independent_answer
    from review.models import ItemDecision

    bench, items = m3verse_items(n=3)
    study = create_study(bench, StudyDesign("S", [items[0].pk, items[1].pk]), None)
    answerer, reviewer, outsider = UserFactory(), UserFactory(), UserFactory()
    record_independent_answer(items[0].pk, answerer, "C")
    ItemDecision.objects.create(item=items[1], reviewer=reviewer, action="approve")
    record_independent_answer(items[2].pk, outsider, "C")  # not in the study
    for person in (answerer, reviewer):
        with pytest.raises(Forbidden, match="consensus answerer"):
            start_session(study, person)
    assert start_session(study, outsider).participant == outsider
