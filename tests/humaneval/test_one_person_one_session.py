"""One person, one session (issue #34, M1-M3): practice feedback is no answer oracle for any study of the
benchmark; a crowd account starts only the studies it entered by their own link; the blocklist holds for
studies; a worker id is one identity whichever URL parameter carries it."""

import pytest
from django.test import Client

from crowd.models import BlockedWorker, CrowdWorker
from humaneval.models import EvalSession, ItemRole, StudyInvitation, StudyItem
from humaneval.services.design import StudyDesign, create_study
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def items():
    benchmark = BenchmarkFactory()
    return [ItemFactory(change__scene__benchmark=benchmark, answers=[f"answer-{i}"]) for i in range(6)]


def study_of(items, scored, practice=0, **options):
    return create_study(items[0].benchmark, StudyDesign("Pilot", [i.pk for i in scored], 30, 600,
                                                        familiarisation_count=practice, **options), UserFactory())


def enter(client, study, pid, session="X", param="PROLIFIC_PID"):
    params = ({"PROLIFIC_PID": pid, "STUDY_ID": "S", "SESSION_ID": session} if param == "PROLIFIC_PID"
              else {param: pid, "assignmentId": session})
    return client.post(f"/crowd/studies/{study.pk}/", params)


def test_practice_never_draws_an_item_another_study_grades(items):
    first = study_of(items, items[:3])
    for seed in range(5):
        later = study_of(items, items[3:4], practice=2, seed=seed)
        practice = set(StudyItem.objects.filter(study=later, role=ItemRole.FAMILIARISATION)
                       .values_list("item_id", flat=True))
        assert practice and not practice & {i.pk for i in items[:3]}, seed
    assert first.pk


def test_practice_feedback_withholds_the_answer_of_an_item_graded_elsewhere(items):
    practising = study_of(items, items[:1], practice=5, seed=1)
    (practice_id,) = StudyItem.objects.filter(study=practising, role=ItemRole.FAMILIARISATION).values_list(
        "item_id", flat=True).order_by("position")[:1]
    study_of(items, [i for i in items if i.pk == practice_id])  # a later study scores that item
    client = Client()
    assert enter(client, practising, "PRACTICE1").status_code == 302
    session = EvalSession.objects.get(study=practising)
    state = client.get(f"/api/v1/sessions/{session.pk}/current/").json()
    assert state["item"]["id"] == practice_id and state["item"]["practice"]
    answered = client.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": practice_id, "answer": "a guess"},
                           content_type="application/json").json()
    gold = next(i for i in items if i.pk == practice_id).answers[0]
    assert answered["feedback"] == {"item": practice_id, "correct": None, "answer": ""}
    assert gold not in str(answered)


def test_a_crowd_account_starts_only_the_study_it_entered_by_its_link(items):
    own, other = study_of(items, items[:2]), study_of(items, items[2:4])
    client = Client()
    assert enter(client, own, "ORACLE1").status_code == 302
    for url in (f"/eval/studies/{other.pk}/start/", f"/crowd/studies/{other.pk}/"):
        for refused in (client.get(url), client.post(url)):
            assert refused.status_code == 403 and b"link on your crowd platform" in refused.content, url
    assert not EvalSession.objects.filter(study=other).exists()
    assert client.get(f"/eval/studies/{own.pk}/start/").status_code == 302  # resuming its own is fine
    assert EvalSession.objects.filter(study=own).count() == 1
    # The start page lists no study to a crowd account; an invited evaluator still starts.
    assert b"/eval/studies/" not in client.get("/").content
    invited = Client()
    evaluator = UserFactory(role="evaluator")
    StudyInvitation.objects.create(study=other, user=evaluator)
    invited.force_login(evaluator)
    assert invited.post(f"/eval/studies/{other.pk}/start/").status_code == 302


@pytest.mark.parametrize("scope", ["", "study"])
def test_the_blocklist_holds_for_studies(items, scope):
    study = study_of(items, items[:2])
    BlockedWorker.objects.create(platform="prolific", worker_id="BLOCKED1",
                                 scope=f"study:{study.pk}" if scope else "")
    for param in ("PROLIFIC_PID", "workerId"):
        refused = enter(Client(), study, "BLOCKED1", param=param)
        assert refused.status_code == 403 and b"not eligible" in refused.content
    assert not EvalSession.objects.exists() and not CrowdWorker.objects.filter(worker_id="BLOCKED1").exists()
    assert enter(Client(), study, "FREE1").status_code == 302


def test_a_pid_is_one_identity_whichever_parameter_carries_it(items):
    study = study_of(items, items[:4], participants_per_item=1, items_per_session=1)
    assert enter(Client(), study, "ALIAS1", session="SESSION-A").status_code == 302
    for param in ("workerId", "worker_id", "participant_id"):
        second = enter(Client(), study, "ALIAS1", session=f"ASSIGN-{param}", param=param)
        assert second.status_code == 403, param
    assert CrowdWorker.objects.filter(worker_id="ALIAS1").count() == 1
    assert EvalSession.objects.filter(study=study).count() == 1
