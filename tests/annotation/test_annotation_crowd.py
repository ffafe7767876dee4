"""Crowd integration: leases (expiry, heartbeat, release, resume), caps, quotas, the blocklist, the
quiz gate, server-side drafts, double submit, other workers' assignments, payments, webhooks and the
staff campaign API."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import progress, services, tasks
from annotation.guidelines import render_guidelines
from annotation.models import Assignment, AssignmentDraft
from benchmarks.models import ContextChange
from core import roles
from core.errors import Conflict
from crowd import services as crowd_services
from crowd.models import BlockedWorker, CrowdWorker, WebhookEvent, scope_key
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory
from tests.prolific_fake import delivery, post_delivery
from tests.together import fire

pytestmark = pytest.mark.django_db

MOVES = [
    "The chair has been moved from the desk to the window next to the bookshelf.",
    "The desk has been moved from the window to the wall beside the bookshelf.",
]


@pytest.fixture
def benchmark():
    return BenchmarkFactory()


def make_campaign(benchmark, scenes=1, **options):
    pool = [SceneFactory(benchmark=benchmark) for _ in range(scenes)]
    return services.create_campaign(benchmark, "Moves", "movement", pool, **options)


def enter(client, campaign, pid="PID1"):
    return client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "ST", "SESSION_ID": "SE"})


def api(client, method, path, body=None):
    return getattr(client, method)(f"/api/v1/{path}", body or {}, content_type="application/json")


def expire(assignment):
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


# --- Leases -------------------------------------------------------------------------------------


def test_an_expired_lease_goes_back_to_the_pool_and_its_submit_gets_409(client, benchmark):
    campaign = make_campaign(benchmark, assignments_per_scene=1)
    enter(client, campaign, "SLOW")
    slow = Assignment.objects.get()
    expire(slow)
    other = services.lease_assignment(campaign, UserFactory())
    assert other.scene_id == slow.scene_id
    slow.refresh_from_db()
    assert slow.status == "expired"
    response = api(client, "post", f"assignments/{slow.pk}/submit/", {"text": MOVES[0]})
    assert response.status_code == 409 and "expired" in response.json()["assignment"][0]
    assert not ContextChange.objects.exists()


def test_heartbeat_and_autosave_renew_the_lease(client, benchmark):
    campaign = make_campaign(benchmark, lease_minutes=10)
    enter(client, campaign)
    assignment = Assignment.objects.get()
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=timezone.now() + timedelta(minutes=1))
    assert api(client, "post", f"assignments/{assignment.pk}/heartbeat/").status_code == 200
    assignment.refresh_from_db()
    assert assignment.lease_expires_at > timezone.now() + timedelta(minutes=9)
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=timezone.now() + timedelta(minutes=1))
    assert api(client, "put", f"assignments/{assignment.pk}/draft/", {"text": "The chair"}).status_code == 200
    assignment.refresh_from_db()
    assert assignment.lease_expires_at > timezone.now() + timedelta(minutes=9)


def test_released_scene_goes_to_the_next_worker(client, benchmark):
    campaign = make_campaign(benchmark, assignments_per_scene=1)
    enter(client, campaign)
    mine = Assignment.objects.get()
    assert api(client, "post", f"assignments/{mine.pk}/release/").json() == {"status": "released"}
    assert services.lease_assignment(campaign, UserFactory()).scene_id == mine.scene_id


def test_returning_after_expiry_resumes_the_draft_on_the_same_scene(client, benchmark):
    campaign = make_campaign(benchmark, scenes=3, descriptions_per_assignment=2)
    enter(client, campaign)
    first = Assignment.objects.get()
    api(client, "post", f"assignments/{first.pk}/descriptions/", {"text": MOVES[0]})
    api(client, "put", f"assignments/{first.pk}/draft/", {"text": "The desk has been moved"})
    expire(first)
    response = enter(client, campaign)
    again = Assignment.objects.exclude(pk=first.pk).get()
    assert response["Location"] == f"/annotate/{again.pk}/"
    assert again.scene_id == first.scene_id
    body = api(client, "get", f"assignments/{again.pk}/").json()
    assert [d["text"] for d in body["draft"]["descriptions"]] == [MOVES[0]]
    assert body["draft"]["text"] == "The desk has been moved"


def test_reopening_an_expired_assignment_page_leases_again(client, benchmark):
    campaign = make_campaign(benchmark)
    enter(client, campaign)
    first = Assignment.objects.get()
    expire(first)
    response = client.get(f"/annotate/{first.pk}/")
    assert response.status_code == 302 and response["Location"] == f"/crowd/campaigns/{campaign.pk}/next/"
    assert client.post(response["Location"])["Location"] != f"/annotate/{first.pk}/"


def test_the_periodic_sweep_expires_lapsed_leases(benchmark):
    campaign = make_campaign(benchmark)
    assignment = services.lease_assignment(campaign, UserFactory())
    expire(assignment)
    assert tasks.expire_stale_leases.delay().get() == 1
    assignment.refresh_from_db()
    assert assignment.status == "expired"


# --- Caps, quotas, blocklist --------------------------------------------------------------------


def test_per_worker_cap_refuses_a_further_assignment(client, benchmark):
    campaign = make_campaign(benchmark, scenes=3, max_assignments_per_worker=1)
    enter(client, campaign)
    assert api(client, "post", f"assignments/{Assignment.objects.get().pk}/submit/",
               {"text": MOVES[0]}).status_code == 201
    response = client.post(f"/crowd/campaigns/{campaign.pk}/next/")
    assert response.status_code == 403
    assert b"most assignments this campaign allows per worker (1)" in response.content
    assert Assignment.objects.count() == 1


def test_per_scene_quota_is_respected_and_a_worker_never_repeats_a_scene(client, benchmark):
    campaign = make_campaign(benchmark, scenes=2, assignments_per_scene=1)
    a = services.lease_assignment(campaign, UserFactory())
    b = services.lease_assignment(campaign, UserFactory())
    assert a.scene_id != b.scene_id
    response = enter(client, campaign, "LATE")
    assert response.status_code == 400 and b"all the assignments it needs" in response.content
    unlimited = make_campaign(benchmark, scenes=1)
    worker = UserFactory()
    done = services.lease_assignment(unlimited, worker)
    services.submit_assignment(done.pk, worker, MOVES[0])
    with pytest.raises(Exception, match="all the assignments it needs"):
        services.lease_assignment(unlimited, worker)


def test_blocked_worker_gets_403_and_no_assignment(client, benchmark):
    campaign = make_campaign(benchmark)
    BlockedWorker.objects.create(platform="prolific", worker_id="SPAMMER", reason="copy-paste answers")
    response = enter(client, campaign, "SPAMMER")
    assert response.status_code == 403 and b"not eligible" in response.content
    assert not Assignment.objects.exists()


def test_a_block_in_one_campaign_leaves_the_others_open(client, benchmark):
    blocked, other = make_campaign(benchmark), make_campaign(benchmark)
    BlockedWorker.objects.create(platform="prolific", worker_id="PID1", scope=scope_key("campaign", blocked.pk))
    assert enter(client, blocked).status_code == 403
    assert enter(client, other).status_code == 302
    assert list(Assignment.objects.values_list("campaign", flat=True)) == [other.pk]


# --- Quiz gate ----------------------------------------------------------------------------------

QUIZ = [{"question": "Which description is good?", "choices": ["Move it there.", "The chair moved from A to B."],
         "answer": 1}]


def test_quiz_gates_entry_and_limits_attempts(client, benchmark):
    campaign = make_campaign(benchmark, quiz=QUIZ, quiz_max_attempts=2, guidelines="Name **both** places.")
    response = enter(client, campaign)
    assert response["Location"] == f"/crowd/campaigns/{campaign.pk}/quiz/"
    page = client.get(response["Location"])
    assert b"<strong>both</strong>" in page.content and not Assignment.objects.exists()
    wrong = client.post(f"/crowd/campaigns/{campaign.pk}/quiz/", {"q0": "0"})
    assert wrong.status_code == 400 and b"1 attempt(s) left" in wrong.content
    right = client.post(f"/crowd/campaigns/{campaign.pk}/quiz/", {"q0": "1"})
    assert right["Location"] == f"/crowd/campaigns/{campaign.pk}/next/"
    assert client.get(right["Location"]).status_code == 200 and not Assignment.objects.exists()  # a GET leases nothing
    assert client.post(right["Location"])["Location"].startswith("/annotate/")


def test_quiz_attempts_run_out(client, benchmark):
    campaign = make_campaign(benchmark, quiz=QUIZ, quiz_max_attempts=1)
    enter(client, campaign)
    client.post(f"/crowd/campaigns/{campaign.pk}/quiz/", {"q0": "0"})
    response = client.post(f"/crowd/campaigns/{campaign.pk}/quiz/", {"q0": "1"})
    assert response.status_code == 403 and b"none are left" in response.content
    assert client.get(f"/crowd/campaigns/{campaign.pk}/next/")["Location"].endswith("/quiz/")


def test_guidelines_markdown_escapes_html():
    html = render_guidelines("# Rules\n\n- Good: **clear**\n- Bad: <script>x</script>")
    assert "<h2>Rules</h2>" in html and "<li>Good: <strong>clear</strong></li>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html


# --- Drafts and submit --------------------------------------------------------------------------


def test_draft_survives_a_reload_and_a_stale_save_from_another_device_gets_409(client, benchmark):
    campaign = make_campaign(benchmark)
    enter(client, campaign)
    pk = Assignment.objects.get().pk
    saved = api(client, "put", f"assignments/{pk}/draft/", {"text": "The chair has", "revision": 0}).json()
    assert saved["revision"] == 1
    page = client.get(f"/annotate/{pk}/")
    assert b'"text": "The chair has"' in page.content
    stale = api(client, "put", f"assignments/{pk}/draft/", {"text": "older", "revision": 0})
    assert stale.status_code == 409 and stale.json()["current"]["text"] == "The chair has"
    assert AssignmentDraft.objects.get().text == "The chair has"


@pytest.mark.django_db(transaction=True)
def test_double_submit_at_the_same_moment_creates_one_submission(benchmark):
    campaign = make_campaign(benchmark)
    worker = UserFactory()
    assignment = services.lease_assignment(campaign, worker)

    def submit(_):
        try:
            return services.submit_assignment(assignment.pk, worker, MOVES[0]).completion_code
        except Conflict as exc:
            return exc

    outcomes = fire(submit, 2)
    assert ContextChange.objects.count() == 1
    codes = [o for o in outcomes if isinstance(o, str)]
    conflicts = [o for o in outcomes if isinstance(o, Conflict)]
    assert len(codes) == 1 and len(conflicts) == 1
    assert conflicts[0].extra["completion_code"] == codes[0]


@pytest.mark.parametrize("method, path, body", [
    ("get", "", None),
    ("put", "draft/", {"text": "mine now"}),
    ("post", "descriptions/", {"text": MOVES[0]}),
    ("delete", "descriptions/1/", None),
    ("post", "heartbeat/", None),
    ("post", "release/", None),
    ("post", "submit/", {"text": MOVES[0]}),
])
def test_another_workers_assignment_is_403_and_nothing_is_written(client, benchmark, method, path, body):
    campaign = make_campaign(benchmark, scenes=2, descriptions_per_assignment=2)
    enter(client, campaign, "OWNER")
    theirs = Assignment.objects.get()
    api(client, "post", f"assignments/{theirs.pk}/descriptions/", {"text": MOVES[1]})
    theirs.refresh_from_db()
    before = (AssignmentDraft.objects.get().text, AssignmentDraft.objects.get().descriptions, theirs.lease_expires_at)
    client.logout()
    enter(client, campaign, "INTRUDER")
    response = api(client, method, f"assignments/{theirs.pk}/{path}", body)
    assert response.status_code == 403
    assert response.json()["assignment"] == ["This assignment belongs to another worker."]
    theirs.refresh_from_db()
    draft = AssignmentDraft.objects.get(assignment=theirs)
    assert (draft.text, draft.descriptions, theirs.lease_expires_at) == before and theirs.status == "leased"
    assert not ContextChange.objects.exists()
    assert api(client, "get", "assignments/999999/").status_code == 404


def test_completion_redirects_to_the_campaigns_return_url(client, benchmark):
    campaign = make_campaign(benchmark, completion_url="https://connect.example/complete?code={code}")
    enter(client, campaign)
    body = api(client, "post", f"assignments/{Assignment.objects.get().pk}/submit/", {"text": MOVES[0]}).json()
    assert body["completion_url"] == f"https://connect.example/complete?code={body['completion_code']}"
    page = client.get(f"/annotate/{body['id']}/done/")
    assert body["completion_code"] in page.content.decode()


# --- Staff: payments, API, dashboard -----------------------------------------------------------


def test_payment_report_pays_accepted_descriptions_at_the_campaign_rate(benchmark):
    campaign = make_campaign(benchmark, scenes=2, pay_cents=100, pay_unit=5)
    for pid, approved in (("A1", 3), ("B2", 5)):
        worker, _ = crowd_services.enter_from_crowd_link({"PROLIFIC_PID": pid, "STUDY_ID": "S1", "SESSION_ID": "SE"},
                                                         roles.ANNOTATOR)
        for i in range(5):
            ContextChange.objects.create(
                scene=campaign.scenes.first(), change_type="movement", raw_text=f"text {i}", author=worker,
                status="approved" if i < approved else "rejected", provenance={"campaign": campaign.pk},
            )
    assert progress.payment_report_csv(campaign).splitlines() == [
        "platform,worker_id,study_id,submitted_units,accepted_units,amount_usd",
        "prolific,A1,S1,5,3,0.60",
        "prolific,B2,S1,5,5,1.00",
    ]


def test_staff_create_a_campaign_by_api_with_five_descriptions_by_default(client, benchmark):
    scene = SceneFactory(benchmark=benchmark)
    payload = {"benchmark": benchmark.slug, "name": "Removals", "change_type": "removal", "scenes": [scene.pk]}
    client.force_login(UserFactory(role=roles.REVIEWER))
    assert api(client, "post", "campaigns/", payload).status_code == 403
    client.force_login(UserFactory(is_staff=True))
    response = api(client, "post", "campaigns/", payload)
    assert response.status_code == 201, response.json()
    assert response.json()["descriptions_per_assignment"] == 5
    bad = api(client, "post", "campaigns/", {**payload, "quiz": [{"question": "?", "choices": ["a", "b"],
                                                                   "answer": 5}]})
    assert bad.status_code == 400 and "answer must be the index" in bad.json()["quiz"][0]
    detail = api(client, "get", f"campaigns/{response.json()['id']}/").json()
    assert detail["progress"]["assignments"] == {"leased": 0, "submitted": 0, "expired": 0, "released": 0}
    assert client.get(f"/api/v1/campaigns/{detail['id']}/payments.csv").status_code == 200
    assert client.get(f"/campaigns/{detail['id']}/dashboard/").status_code == 200


def test_progress_counts_assignments_and_per_worker_throughput(client, benchmark):
    campaign = make_campaign(benchmark, scenes=2)
    enter(client, campaign)
    api(client, "post", f"assignments/{Assignment.objects.get().pk}/submit/", {"text": MOVES[0]})
    services.lease_assignment(campaign, UserFactory())
    shown = progress.campaign_progress(campaign)
    assert shown["assignments"]["submitted"] == 1 and shown["assignments"]["leased"] == 1
    assert shown["descriptions"]["submitted"] == 1
    assert [w["worker_id"] for w in shown["workers"]] == ["PID1"]


# --- Prolific webhook ---------------------------------------------------------------------------


def signed_post(client, event, event_id, secret="s3cret"):
    """A delivery signed as Prolific documents it (tests/prolific_fake.py)."""
    return post_delivery(client, *delivery(secret, event, event_id, sent_at=1_780_000_000))


def test_prolific_webhook_is_handled_once_and_a_return_releases_the_lease(client, benchmark, settings):
    settings.PROLIFIC_WEBHOOK_SECRET = "s3cret"
    campaign = make_campaign(benchmark)
    enter(client, campaign, "GONE")
    client.logout()
    event = {"resource_id": "SE", "event_type": "submission.status.change", "participant_id": "GONE",
             "status": "RETURNED"}
    assert signed_post(client, event, "evt-1").json() == {"handled": True}
    assert signed_post(client, event, "evt-1").json() == {"handled": False}
    assert WebhookEvent.objects.count() == 1
    assert Assignment.objects.get().status == "released"
    assert signed_post(client, event, "evt-2", secret="wrong").status_code == 403
    assert CrowdWorker.objects.get().worker_id == "GONE"
