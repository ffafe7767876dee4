"""Issue 7: study design (stratified sample with a seed, familiarisation, attention checks,
participants per item, going back), eligibility, timed answers, shuffled choices, results."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from core import roles
from core.errors import DomainError, Forbidden
from crowd import services as crowd_services
from humaneval.models import EvalSession, Response, SessionItem, Study, StudyInvitation, StudyItem
from humaneval.services.design import StudyDesign, create_study, stratified_sample, study_design
from humaneval.services.results import CSV_HEADER, scorer_rows, study_results
from humaneval.services.sessions import plan_entry, start_session
from modeleval.models import ModelSpec, Prediction, Run
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

CHANGE_TYPES = ("movement", "removal", "attribute")


def hypo3d_pool(per_type=4):
    """Approved open items: `per_type` of each change type, answers 'answer-<pk>'."""
    bench = BenchmarkFactory()
    items = [
        ItemFactory(change__scene__benchmark=bench, tags={"change_type": change_type})
        for change_type in CHANGE_TYPES
        for _ in range(per_type)
    ]
    for item in items:
        item.answers = [f"answer{item.pk}"]
        item.save(update_fields=["answers"])
    return bench, items


def single_choice_items(family, specs):
    """One scene's single-choice items, one per (external id, choices, gold letter, tags)."""
    bench = BenchmarkFactory(family=family)
    scene = SceneFactory(benchmark=bench)
    return bench, [
        ItemFactory(
            change=None,
            scene=scene,
            benchmark=bench,
            answer_format="single",
            external_id=external_id,
            question=f"Question {external_id}",
            choices=choices,
            answers=[gold],
            tags=tags,
        )
        for external_id, choices, gold, tags in specs
    ]


def m3verse_items(n=2):
    choices = ["the lamp", "the sofa", "the plant", "No correct option is listed."]
    tags = {"state_type": "inter-states", "capabilities": ["attribute recognition"]}
    return single_choice_items("m3verse", [(f"scene_800-{i}", choices, "C", tags) for i in range(n)])


def enter(client, study, pid):
    client.logout()
    return client.post(
        f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "S", "SESSION_ID": "X"}
    )


def current(client, session):
    return client.get(f"/api/v1/sessions/{session.pk}/current/")


def first_item(client, study, pid):
    """Participant `pid` enters the study: their session and the item it shows first."""
    enter(client, study, pid)
    session = EvalSession.objects.get(study=study, participant__username=f"prolific-{pid}")
    return session, current(client, session).json()["item"]


def answer(client, session, item_id, text, **extra):
    return client.post(
        f"/api/v1/sessions/{session.pk}/answer/",
        {"item": item_id, "answer": text, **extra},
        content_type="application/json",
    )


def shown_letter(state_item, text):
    return "ABCDEFGH"[state_item["choices"].index(text)]


# --- study design --------------------------------------------------------------------------------


def test_stratified_sample_has_the_asked_counts_and_is_reproducible_from_its_seed():
    bench, items = hypo3d_pool(per_type=5)
    ids = [i.pk for i in items]
    first = create_study(bench, StudyDesign("A", ids, stratify_by="change_type", per_stratum=2, seed=7), None)
    again = create_study(bench, StudyDesign("B", ids, stratify_by="change_type", per_stratum=2, seed=7), None)
    other = create_study(bench, StudyDesign("C", ids, stratify_by="change_type", per_stratum=2, seed=8), None)

    def sample(study):
        return list(StudyItem.objects.filter(study=study).values_list("item_id", "stratum"))

    assert study_design(first)["strata"] == {t: 2 for t in CHANGE_TYPES}
    assert first.sample_seed == 7 and sample(first) == sample(again)
    assert sorted(stratified_sample([(i.pk, i.tags["change_type"]) for i in items], 2, 8)) == sorted(
        sample(other)
    )


def test_a_study_without_a_seed_records_the_one_it_drew():
    bench, items = hypo3d_pool(per_type=2)
    study = create_study(
        bench, StudyDesign("A", [i.pk for i in items], stratify_by="change_type", per_stratum=1), None)
    again = create_study(
        bench, StudyDesign("B", [i.pk for i in items], stratify_by="change_type", per_stratum=1,
                           seed=study.sample_seed), None)
    assert list(again.items.order_by("pk")) == list(study.items.order_by("pk"))


def test_asking_more_than_a_stratum_holds_is_refused_naming_the_field(client):
    bench, items = hypo3d_pool(per_type=2)
    client.force_login(UserFactory(role=roles.ADMIN))
    response = client.post(
        "/api/v1/studies/",
        {
            "benchmark": bench.slug,
            "name": "S",
            "items": [i.pk for i in items],
            "stratify_by": "change_type",
            "per_stratum": 5,
        },
        content_type="application/json",
    )
    assert response.status_code == 400 and "has only 2 items" in response.json()["per_stratum"][0]
    assert not Study.objects.exists()


def test_familiarisation_items_come_from_outside_the_sample_and_attention_checks_are_named():
    bench, items = hypo3d_pool(per_type=3)
    attention = items[-1]
    study = create_study(
        bench, StudyDesign("S", [i.pk for i in items[:4]] + [attention.pk], familiarisation_count=3,
                           attention_ids=[attention.pk], seed=1), None)
    roles_of = dict(StudyItem.objects.filter(study=study).values_list("item_id", "role"))
    familiar = {pk for pk, role in roles_of.items() if role == "familiarisation"}
    assert len(familiar) == 3 and not familiar & {i.pk for i in items[:4]}
    assert roles_of[attention.pk] == "attention"
    with pytest.raises(DomainError) as error:
        create_study(bench, StudyDesign("T", [i.pk for i in items], familiarisation_count=1), None)
    assert error.value.field == "familiarisation_count"


# --- eligibility ---------------------------------------------------------------------------------


def test_an_annotator_of_a_sampled_item_is_refused_and_of_an_unsampled_one_is_not():
    bench, items = hypo3d_pool(per_type=3)
    study = create_study(
        bench, StudyDesign("S", [i.pk for i in items], stratify_by="change_type", per_stratum=1, seed=3), None)
    sampled = set(study.items.values_list("pk", flat=True))
    inside = next(i for i in items if i.pk in sampled).change.author
    outside = next(i for i in items if i.pk not in sampled).change.author
    with pytest.raises(Forbidden, match="helped write or review"):
        start_session(study, inside)
    assert start_session(study, outside).participant == outside


def test_a_crowd_annotator_entering_through_the_study_link_is_refused_a_newcomer_is_not(client):
    # Only an account the link itself creates skips the contamination check.
    bench, items = hypo3d_pool(per_type=1)
    study = create_study(bench, StudyDesign("S", [i.pk for i in items]), None)
    link = {"PROLIFIC_PID": "AUTHOR", "STUDY_ID": "S", "SESSION_ID": "X"}
    author, created = crowd_services.enter_from_crowd_link(link, roles.ANNOTATOR)
    assert created and not crowd_services.enter_from_crowd_link(link, roles.ANNOTATOR)[1]
    change = study.items.first().change
    change.author = author
    change.save()
    refused = enter(client, study, "AUTHOR")
    assert refused.status_code == 403 and b"helped write or review" in refused.content
    assert not EvalSession.objects.exists()
    assert enter(client, study, "NEWCOMER").status_code == 302
    assert EvalSession.objects.get().participant.username == "prolific-NEWCOMER"


def test_a_study_with_enough_participants_per_item_refuses_the_next_one(client):
    bench, items = hypo3d_pool(per_type=1)
    study = create_study(bench, StudyDesign("S", [i.pk for i in items], participants_per_item=1), None)
    assert enter(client, study, "P1").status_code == 302
    response = enter(client, study, "P2")
    assert response.status_code == 403 and b"all the participants it needs" in response.content
    assert EvalSession.objects.count() == 1


def test_sessions_of_a_few_items_go_to_the_least_filled_items_first():
    bench, items = hypo3d_pool(per_type=2)  # 6 items
    study = create_study(
        bench, StudyDesign("S", [i.pk for i in items], participants_per_item=1, items_per_session=3, seed=5), None)
    planned = [
        set(start_session(study, UserFactory()).plan.values_list("item_id", flat=True))
        for _ in range(2)
    ]
    assert len(planned[0]) == 3 and not planned[0] & planned[1]
    with pytest.raises(Forbidden):
        start_session(study, UserFactory())


# --- timed sessions ------------------------------------------------------------------------------


def test_an_answer_after_the_deadline_is_kept_as_late_and_marked_timed_out_whatever_the_client_claims(client):
    bench, items = hypo3d_pool(per_type=1)
    study = create_study(bench, StudyDesign("S", [i.pk for i in items], 30, 600), None)
    session, item = first_item(client, study, "LATE")
    Response.objects.filter(session=session).update(deadline=timezone.now() - timedelta(seconds=2))
    late = answer(
        client,
        session,
        item["id"],
        f"answer{item['id']}",
        client_latency_ms=900,
        answered_at=timezone.now().isoformat(),
        timed_out=False,
    )
    assert late.status_code == 400
    assert "kept, marked late, and is not scored" in late.json()["answer"][0]
    stored = Response.objects.get(session=session, item_id=item["id"])
    # what was typed is kept beside the timeout; no answered_at, so the scorer reads no answer
    assert stored.timed_out and stored.answered_at is None and stored.answer_text == f"answer{item['id']}"
    _, prediction = scorer_rows(bench.family, plan_entry(session, item["id"]), stored, "late")
    assert prediction["output"] == ""


def test_latency_comes_from_the_server_clock_and_the_client_measure_is_kept_apart(client):
    bench, items = hypo3d_pool(per_type=1)
    study = create_study(bench, StudyDesign("S", [i.pk for i in items]), None)
    session, item = first_item(client, study, "FAST")
    Response.objects.filter(session=session).update(shown_at=timezone.now() - timedelta(seconds=4))
    answer(client, session, item["id"], "x", client_latency_ms=10, focus_losses=2)
    stored = Response.objects.get(session=session, item_id=item["id"])
    assert stored.latency_ms >= 4000 and stored.client_latency_ms == 10 and stored.focus_losses == 2


def test_familiarisation_gives_feedback_only_after_the_answer_and_is_not_scored(client):
    bench, items = hypo3d_pool(per_type=2)
    study = create_study(
        bench, StudyDesign("S", [i.pk for i in items[:3]], familiarisation_count=2, seed=2), None)
    enter(client, study, "NEW")
    session = EvalSession.objects.get()
    state = current(client, session).json()
    practice = state["item"]
    assert practice["practice"] and state["feedback"] is None
    assert f"answer{practice['id']}" not in json.dumps(state)
    after = answer(client, session, practice["id"], "wrong guess").json()
    assert after["feedback"] == {
        "item": practice["id"],
        "correct": False,
        "answer": f"answer{practice['id']}",
    }
    assert (
        after["item"] is None and Response.objects.filter(session=session).count() == 1
    )  # next clock not started
    second = current(client, session).json()["item"]
    answer(client, session, second["id"], f"answer{second['id']}")
    scored = current(client, session).json()["item"]
    assert not scored["practice"]
    for _ in range(3):
        state = answer(client, session, scored["id"], f"answer{scored['id']}").json()
        scored = state["item"]
        if scored is None:
            break
    result = study_results(study)
    assert result["n_items"] == 3 and result["overall"]["EM"] == 100.0


def test_failing_attention_checks_excludes_the_participant_and_says_why(client):
    bench, items = hypo3d_pool(per_type=1)
    attention = items[0]
    study = create_study(
        bench, StudyDesign("S", [i.pk for i in items], attention_ids=[attention.pk], seed=4), None)
    for pid, attentive in (("GOOD", True), ("BAD", False)):
        enter(client, study, pid)
        session = EvalSession.objects.get(participant__username=f"prolific-{pid}")
        item = current(client, session).json()["item"]
        while item:
            right = f"answer{item['id']}"
            text = right if attentive or item["id"] != attention.pk else "no idea"
            item = answer(client, session, item["id"], text).json()["item"]
    result = study_results(study)
    bad = EvalSession.objects.get(participant__username="prolific-BAD")
    assert result["exclusions"] == [
        {"session": bad.pk, "reason": "failed 1 of 1 attention checks (0 allowed)"}
    ]
    assert result["n_participants"] == 1 and result["n_items"] == 2 and result["overall"]["EM"] == 100.0
    assert result["agreement"] == {"pairwise_percent": None, "n_items": 0}


# --- choices, 'Not sure', going back -------------------------------------------------------------


def test_choices_are_shuffled_per_participant_and_graded_in_canonical_letters(client):
    bench, items = m3verse_items(n=2)
    study = create_study(bench, StudyDesign("S", [i.pk for i in items], seed=11), None)
    orders = set()
    for n in range(6):
        enter(client, study, f"P{n}")
        session = EvalSession.objects.get(participant__username=f"prolific-P{n}")
        state = current(client, session).json()
        orders.add(tuple(state["item"]["choices"]))
        while state["item"]:
            state = answer(
                client, session, state["item"]["id"], shown_letter(state["item"], "the plant")
            ).json()
        if n == 2:
            break
    assert len(orders) > 1
    result = study_results(study)
    assert result["overall"]["score"] == 100.0
    assert result["agreement"] == {"pairwise_percent": 100.0, "n_items": 2}
    assert result["median_seconds_per_item"] is not None


def test_not_sure_is_offered_stored_and_scored_wrong(client):
    bench, items = m3verse_items(n=1)
    study = create_study(bench, StudyDesign("S", [items[0].pk], offer_not_sure=True), None)
    session, item = first_item(client, study, "UNSURE")
    assert item["not_sure_option"] and "Not sure" not in item["choices"]
    assert answer(client, session, item["id"], "Not sure").status_code == 201
    result = study_results(study)
    assert result["n_not_sure"] == 1 and result["overall"]["score"] == 0.0


def test_a_letter_outside_the_shown_options_is_refused_naming_the_answer(client):
    bench, items = m3verse_items(n=1)
    study = create_study(bench, StudyDesign("S", [items[0].pk]), None)
    session, item = first_item(client, study, "TYPO")
    for bad in ("F", "A, B", "Not sure"):
        response = answer(client, session, item["id"], bad)
        assert response.status_code == 400 and "answer" in response.json()
    assert Response.objects.get().answered_at is None


def test_going_back_changes_an_answer_only_when_the_study_allows_it(client):
    bench, items = hypo3d_pool(per_type=1)
    strict = create_study(bench, StudyDesign("Strict", [i.pk for i in items]), None)
    lenient = create_study(bench, StudyDesign("Lenient", [i.pk for i in items], allow_going_back=True), None)
    for study, expected in ((strict, 409), (lenient, 201)):
        enter(client, study, f"BACK-{study.pk}")
        session = EvalSession.objects.get(study=study)
        first = current(client, session).json()["item"]["id"]
        state = answer(client, session, first, "first thought").json()
        assert state["answered"] == ([{"id": first, "number": 1}] if study.allow_going_back else [])
        assert answer(client, session, first, "second thought").status_code == expected
    assert (
        client.get(f"/api/v1/sessions/{session.pk}/items/{first}/").json()["your_answer"] == "second thought"
    )
    assert Response.objects.get(session__study=lenient, item_id=first).revised_at is not None


# --- gold never reaches the page -----------------------------------------------------------------


def test_no_page_or_session_response_contains_a_gold_answer_before_it_is_stored(client):
    bench, items = hypo3d_pool(per_type=1)
    gold = {i.pk: f"answer{i.pk}" for i in items}
    study = create_study(bench, StudyDesign("S", list(gold), allow_going_back=True), None)
    page = enter(client, study, "SPY")
    session = EvalSession.objects.get()
    bodies = [client.get(page["Location"]).content.decode()]
    state = current(client, session).json()
    answered = []
    while state["item"]:
        item_id = state["item"]["id"]
        bodies.append(json.dumps(state))
        assert "answers" not in state["item"]
        for earlier in answered:
            bodies.append(json.dumps(client.get(f"/api/v1/sessions/{session.pk}/items/{earlier}/").json()))
        unanswered = set(gold) - set(answered)
        assert not any(gold[pk] in body for body in bodies for pk in unanswered)
        state = answer(client, session, item_id, "a guess").json()
        answered.append(item_id)
        bodies = [json.dumps(state)]


# --- results -------------------------------------------------------------------------------------


def test_results_page_shows_the_human_row_beside_the_model_in_the_paper_layout_and_exports_csv(client):
    bench, items = hypo3d_pool(per_type=1)
    study = create_study(bench, StudyDesign("Baseline", [i.pk for i in items]), None)
    session, item = first_item(client, study, "H1")
    while item:
        item = answer(client, session, item["id"], f"answer{item['id']}").json()["item"]
    run = Run.objects.create(
        model=ModelSpec.objects.create(name="Guess", adapter="random"),
        benchmark=bench,
        status="finished",
        total=len(items),
    )
    Prediction.objects.bulk_create(Prediction(run=run, item=i, output="window") for i in items)
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/studies/{study.pk}/results/").content.decode()
    assert 'class="human-row"' in page and 'class="model-row"' in page
    for change_type in CHANGE_TYPES:
        assert f'<th colspan="2">{change_type}</th>' in page
    assert "100.0" in page
    lines = list(csv.reader(io.StringIO(client.get(f"/studies/{study.pk}/results.csv").content.decode())))
    assert lines[0] == CSV_HEADER and len(lines) == 1 + len(items)
    correct = lines[0].index("correct")
    assert {line[correct] for line in lines[1:]} == {"True"}


def test_the_design_form_creates_a_study_and_shows_errors_by_field(client):
    bench, items = hypo3d_pool(per_type=2)
    client.force_login(UserFactory(role=roles.ADMIN))
    url = f"/manage/{bench.slug}/studies/design/"
    assert client.get(url).status_code == 200
    bad = client.post(
        url,
        {"name": "Strat", "items": [i.pk for i in items], "stratify_by": "change_type", "per_stratum": "9"},
    )
    assert bad.status_code == 400 and b"per_stratum" in bad.content and not Study.objects.exists()
    good = client.post(
        url,
        {
            "name": "Strat",
            "items": [i.pk for i in items],
            "stratify_by": "change_type",
            "per_stratum": "1",
            "seed": "42",
            "participants_per_item": "2",
            "shuffle_choices": "on",
        },
    )
    study = Study.objects.get()
    assert good.status_code == 302 and study.sample_seed == 42 and study.items.count() == 3
    assert study.participants_per_item == 2 and study.shuffle_choices and not study.allow_going_back


def test_an_invited_evaluator_starts_from_the_study_page(client):
    bench, items = hypo3d_pool(per_type=1)
    study = create_study(bench, StudyDesign("S", [i.pk for i in items]), None)
    evaluator = UserFactory(role=roles.EVALUATOR)
    StudyInvitation.objects.create(study=study, user=evaluator)
    client.force_login(evaluator)
    response = client.post(f"/eval/studies/{study.pk}/start/")
    assert response.status_code == 302 and SessionItem.objects.filter(session__study=study).count() == 3
