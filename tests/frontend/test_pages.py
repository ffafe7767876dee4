"""Every page renders for its role and refuses the others."""

import pytest

from annotation import services as annotation_services
from core import roles
from humaneval.models import StudyInvitation
from tests.factories import ChangeFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_home_page_shows_crowd_links_to_admins(client):
    item = ItemFactory()
    annotation_services.create_campaign(item.benchmark, "Moves", "movement", [item.scene])
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get("/").content.decode()
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in page
    assert f"/manage/{item.benchmark.slug}/" in page


def test_anonymous_home_page_offers_login(client):
    assert b"Log in" in client.get("/").content


@pytest.mark.parametrize("role", [roles.ADMIN, roles.REVIEWER])
def test_review_pages_render_for_reviewers_and_admins(client, role):
    change = ChangeFactory()
    client.force_login(UserFactory(role=role))
    queue = client.get("/review/")
    assert queue.status_code == 200
    assert b"<title>Review queue \xc2\xb7 HypoLab</title>" in queue.content
    page = client.get(f"/review/changes/{change.pk}/")
    assert page.status_code == 200 and change.raw_text.encode() in page.content


def test_admin_pages_render(client):
    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    assert client.get(f"/manage/{item.benchmark.slug}/").status_code == 200
    assert client.get(f"/results/{item.benchmark.slug}/").status_code == 200
    assert client.get("/api/v1/schema/").status_code == 200


@pytest.mark.parametrize("url", ["/review/", "/manage/{slug}/", "/results/{slug}/"])
def test_annotators_are_refused_staff_pages(client, url):
    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ANNOTATOR))
    assert client.get(url.format(slug=item.benchmark.slug)).status_code == 403


def test_bad_study_form_is_a_400_with_the_field(client):
    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.post(f"/manage/{item.benchmark.slug}/studies/", {"name": "", "items": [item.pk]})
    assert page.status_code == 400 and b">Give the study a name.<" in page.content


def test_bad_release_form_is_a_400_with_the_field(client):
    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.post(f"/manage/{item.benchmark.slug}/releases/", {"version": "latest"})
    assert page.status_code == 400 and b">Use a version like 1.0.0" in page.content


def test_run_form_launches_with_repeats_and_a_protocol(client):
    from modeleval.models import Run
    from modeleval.services import ensure_baseline_model

    item = ItemFactory(answer_format="single", choices=["left", "right"], answers=["A"])
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.post(f"/manage/{item.benchmark.slug}/runs/", {
        "model": ensure_baseline_model().pk, "batch_size": 4, "repeats": 2, "circular": "on"})
    run = Run.objects.get(benchmark=item.benchmark)
    assert page.status_code == 302 and run.repeats == 2 and run.protocol == {"circular": True, "flip": False}


def test_bad_run_form_is_a_400_with_the_field(client):
    from modeleval.services import ensure_baseline_model

    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.post(f"/manage/{item.benchmark.slug}/runs/", {
        "model": ensure_baseline_model().pk, "repeats": "0"})
    assert page.status_code == 400 and b"Repeats: Must be between" in page.content


# --- Newcomer issue: a home per role, studies that open like studies, forms that keep what was typed,
# safe crowd exits, one review state, small things ----------------------------------------------------

def _prolific(client, path, pid, session="S1"):
    return client.post(path, {"PROLIFIC_PID": pid, "STUDY_ID": "ST", "SESSION_ID": session})


def test_reviewer_written_question_waits_for_a_second_reviewer(client):
    from review import services as review_services

    change = ChangeFactory(status="approved")
    author = UserFactory(role=roles.REVIEWER)
    item = review_services.author_question(change.pk, author, "What is now left of the chair?", "window",
                                           ["Direction"])
    assert item.status == "draft" and not item.decisions.exists()
    client.force_login(author)
    page = client.get(f"/review/items/{item.pk}/").content.decode()
    assert "Pending a second reviewer" in page and "waits for another reviewer" in page
    assert "someone else must review it" not in page and 'class="error"' not in page.split("<section")[1]
    assert "pending a second reviewer" in client.get(f"/review/changes/{change.pk}/").content.decode()
    second = UserFactory(role=roles.REVIEWER)
    approved = review_services.approve_item(item.pk, second, item.version)
    assert approved.status == "approved"


def test_self_approval_is_a_benchmark_setting(client):
    from review import services as review_services

    change = ChangeFactory(status="approved")
    change.scene.benchmark.allow_self_approval = True
    change.scene.benchmark.save()
    author = UserFactory(role=roles.REVIEWER)
    item = review_services.author_question(change.pk, author, "What is now left of the chair?", "window",
                                           ["Direction"])
    assert item.status == "approved"
    assert item.decisions.get().reviewer == author
    client.force_login(author)
    page = client.get(f"/review/items/{item.pk}/").content.decode()
    assert '<span id="item-status">Approved</span>' in page and "it is approved" in page


def test_each_decision_form_lists_the_criteria_of_what_it_decides(client):
    from review import services as review_services

    change, item = ChangeFactory(), ItemFactory()
    client.force_login(UserFactory(role=roles.REVIEWER))
    change_page = client.get(f"/review/changes/{change.pk}/").content.decode()
    item_page = client.get(f"/review/items/{item.pk}/").content.decode()
    for key in review_services.CHANGE_CRITERIA:
        assert f'value="{key}"' in change_page
    assert 'value="answer_affected"' not in change_page and 'value="not_common_sense"' not in change_page
    for key in review_services.QUESTION_CRITERIA:
        assert f'value="{key}"' in item_page
    assert 'value="plausible"' not in item_page
    refused = client.post(f"/api/v1/changes/{change.pk}/reject/", {"version": 1, "criteria": ["answer_affected"]},
                          content_type="application/json")
    assert refused.status_code == 400 and "plausible" in refused.json()["allowed_criteria"]
    assert "plausible" not in refused.json()["criteria"][0]  # the message says it in words


def test_unknown_campaign_is_a_plain_404_without_debug_information(client, settings):
    settings.DEBUG = False
    page = client.get("/crowd/campaigns/999999/?PROLIFIC_PID=a&STUDY_ID=b&SESSION_ID=c")
    text = page.content.decode()
    assert page.status_code == 404 and "Page not found" in text and 'id="error-404"' in text
    for leak in ("URLconf", "Django tried these URL patterns", "DEBUG = True", "Traceback", "crowd/campaigns/<int"):
        assert leak not in text
    assert client.get("/no/such/page/").status_code == 404


def test_error_templates_render_without_debug_information(rf):
    from django.template import loader

    forbidden = loader.render_to_string("403.html", request=rf.get("/"))
    assert "Not allowed" in forbidden
    broken = loader.render_to_string("500.html")
    assert "Something went wrong" in broken and "Traceback" not in broken


def test_favicon_is_served_and_linked(client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon["Content-Type"] == "image/x-icon"
    assert b"".join(icon.streaming_content)[:4] == b"\x00\x00\x01\x00"  # an ICO header
    assert b'<link rel="icon" href="/favicon.ico"' in client.get("/").content


def test_tags_show_as_chips_not_a_python_dict(client):
    item = ItemFactory(tags={"change_type": "movement", "question_type": ["Direction", "Scale"]})
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/manage/{item.benchmark.slug}/studies/design/").content.decode()
    assert '<span class="chip"><span class="chip-key">Question type</span> Direction, Scale</span>' in page
    assert "{&#x27;change_type&#x27;" not in page and "{'change_type'" not in page
    assert '<span class="chip-key">Change type</span>' in client.get(f"/review/items/{item.pk}/").content.decode()


def test_history_word_diff_is_coloured_with_the_markers_kept_for_screen_readers(client):
    from review import services as review_services

    change = ChangeFactory()
    reviewer = UserFactory(role=roles.REVIEWER)
    review_services.refine_change(change.pk, reviewer, change.raw_text.replace("next to", "right beside <b>"), 1)
    client.force_login(reviewer)
    page = client.get(f"/review/changes/{change.pk}/").content.decode()
    assert ('<del class="diff-del"><span class="diff-mark">[-</span>next to<span class="diff-mark">-]</span></del>'
            in page)
    assert '<ins class="diff-ins"><span class="diff-mark">{+</span>right beside &lt;b&gt;<span' in page


def test_crowd_link_templates_for_each_platform_on_campaign_and_study_pages(client):
    from humaneval.services.design import StudyDesign, create_study

    item = ItemFactory()
    campaign = annotation_services.create_campaign(item.benchmark, "Moves", "movement", [item.scene])
    study = create_study(item.benchmark, StudyDesign("Pilot", [item.pk]), None)
    client.force_login(UserFactory(role=roles.ADMIN))
    prolific = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}"
    connect = "?participantId={{%PARTICIPANT_ID%}}&amp;assignmentId={{%ASSIGNMENT_ID%}}"
    for url, entry in ((f"/campaigns/{campaign.pk}/settings/", f"/crowd/campaigns/{campaign.pk}/"),
                       (f"/campaigns/{campaign.pk}/dashboard/", f"/crowd/campaigns/{campaign.pk}/"),
                       (f"/studies/{study.pk}/settings/", f"/crowd/studies/{study.pk}/"),
                       (f"/studies/{study.pk}/results/", f"/crowd/studies/{study.pk}/")):
        page = client.get(url).content.decode()
        assert f"http://testserver{entry}{prolific}" in page, url
        assert f"http://testserver{entry}{connect}" in page, url
        assert 'data-platform="mturk"' not in page, url  # MTurk closed to new customers (crowd.services)
        assert "=…" not in page, url
    manage = client.get(f"/manage/{item.benchmark.slug}/").content.decode()
    assert f"/crowd/studies/{study.pk}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" in manage and "=…" not in manage


def test_each_role_lands_on_its_own_home(client):
    from humaneval.services.design import StudyDesign, create_study
    from humaneval.services.sessions import start_session

    item = ItemFactory()
    ChangeFactory(scene=item.scene)  # one change waiting for review
    campaign = annotation_services.create_campaign(item.benchmark, "Moves", "movement", [item.scene], pay_cents=100,
                                                   pay_unit=5)
    study = create_study(item.benchmark, StudyDesign("Pilot", [item.pk]), None)

    annotator = UserFactory(role=roles.ANNOTATOR)
    assignment = annotation_services.lease_assignment(campaign, annotator)
    client.force_login(annotator)
    page = client.get("/").content.decode()
    assert 'id="home-annotator"' in page and "Moves" in page and "$0.00" in page
    assert f"/annotate/{assignment.pk}/" in page and "$1.00 per 5 accepted" in page
    assert 'id="home-admin"' not in page and 'id="home-reviewer"' not in page

    evaluator = UserFactory(role=roles.EVALUATOR)
    session = start_session(study, evaluator)
    client.force_login(evaluator)
    page = client.get("/").content.decode()
    assert 'id="home-evaluator"' in page and "Pilot" in page and f"/eval/sessions/{session.pk}/" in page

    client.force_login(UserFactory(role=roles.REVIEWER))
    page = client.get("/").content.decode()
    assert 'id="home-reviewer"' in page and '<strong>1</strong> change to review' in page

    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get("/").content.decode()
    assert "1 change waiting for review" in page and "no release yet" in page and "0 runs finished" in page
    assert 'class="next-step"' in page


def test_signed_in_annotator_and_evaluator_open_crowd_links_without_platform_ids(client):
    from humaneval.services.design import StudyDesign, create_study

    item = ItemFactory()
    campaign = annotation_services.create_campaign(item.benchmark, "Moves", "movement", [item.scene])
    client.force_login(UserFactory(role=roles.ANNOTATOR))
    response = client.post(f"/crowd/campaigns/{campaign.pk}/")
    assert response.status_code == 302 and "/annotate/" in response["Location"]
    study = create_study(item.benchmark, StudyDesign("Pilot", [item.pk]), None)
    evaluator = UserFactory(role=roles.EVALUATOR)
    StudyInvitation.objects.create(study=study, user=evaluator)
    client.force_login(evaluator)
    response = client.post(f"/crowd/studies/{study.pk}/")
    assert response.status_code == 302 and "/eval/sessions/" in response["Location"]


def test_a_failed_study_design_form_keeps_what_was_typed(client):
    first, second = ItemFactory(), ItemFactory()
    second.benchmark, second.status = first.benchmark, "approved"
    second.save()
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.post(f"/manage/{first.benchmark.slug}/studies/design/", {
        "name": "My careful study", "seconds_per_item": "45", "seconds_per_session": "20",
        "instructions": "Look **closely**.", "consent_text": "I agree to this.", "familiarisation_count": "0",
        "participants_per_item": "4", "items": [str(second.pk)], "attention_ids": [], "allow_going_back": "on",
    })
    text = page.content.decode()
    assert page.status_code == 400 and "seconds_per_session" in text
    assert 'value="My careful study"' in text and 'value="45"' in text and 'value="20"' in text
    assert 'value="4"' in text and "Look **closely**.</textarea>" in text and "I agree to this.</textarea>" in text
    assert f'value="{second.pk}" checked' in text and f'value="{first.pk}" checked' not in text
    assert 'name="allow_going_back" checked' in text and 'name="shuffle_choices" checked' not in text
    quick = client.post(f"/manage/{first.benchmark.slug}/studies/", {"name": "", "seconds_per_item": "33"})
    assert quick.status_code == 400 and 'name="seconds_per_item" type="number" value="33"' in quick.content.decode()


def test_campaign_form_creates_with_quiz_and_taxonomy_rows_and_keeps_a_refused_form(client):
    from annotation.models import Campaign

    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    url = f"/manage/{item.benchmark.slug}/campaigns/new/"
    assert client.get(url).status_code == 200
    form = {"name": "Questions", "kind": "question_answer", "change_type": "movement", "min_words": "10",
            "descriptions_per_assignment": "5", "lease_minutes": "30", "pay_cents": "150", "pay_unit": "3",
            "quiz_max_attempts": "2", "is_active": "on", "scenes": [str(item.scene.pk)],
            "quiz-rows": "2", "quiz-0-question": "Which side is left?", "quiz-0-choices": "west\neast\n",
            "quiz-0-answer": "1", "quiz-1-question": "", "quiz-1-choices": "", "quiz-1-answer": "",
            "type-rows": "2", "type-0-fine": "Proximity", "type-0-coarse": "Scale",
            "type-1-fine": "Navigation", "type-1-coarse": "Direction, Semantic",
            "return_code": "C1RET", "return_url": "javascript:alert(1)"}
    refused = client.post(url, form)
    text = refused.content.decode()
    assert refused.status_code == 400 and "Return URL: Enter an http" in text
    assert 'value="Questions"' in text and "Which side is left?" in text and "west\neast\n</textarea>" in text
    assert 'value="Direction, Semantic"' in text and not Campaign.objects.exists()
    form["return_url"] = ""
    created = client.post(url, form)
    campaign = Campaign.objects.get()
    assert created.status_code == 302 and created["Location"] == f"/campaigns/{campaign.pk}/settings/"
    assert campaign.quiz == [{"question": "Which side is left?", "choices": ["west", "east"], "answer": 0}]
    assert campaign.question_types == {"Proximity": ["Scale"], "Navigation": ["Direction", "Semantic"]}
    assert (campaign.pay_cents, campaign.pay_unit, campaign.return_code) == (150, 3, "C1RET")
    form.update({"name": "Questions v2", "quiz-0-answer": "3"})
    bad = client.post(f"/campaigns/{campaign.pk}/settings/", form)
    assert bad.status_code == 400 and "right choice" in bad.content.decode()
    form["quiz-0-answer"] = "2"
    assert client.post(f"/campaigns/{campaign.pk}/settings/", form).status_code == 302
    campaign.refresh_from_db()
    assert campaign.name == "Questions v2" and campaign.quiz[0]["answer"] == 1


def test_consent_comes_before_the_clock(client):
    from django.utils import timezone

    from humaneval.models import EvalSession
    from humaneval.services.design import StudyDesign, create_study

    item = ItemFactory()
    study = create_study(
        item.benchmark, StudyDesign("Pilot", [item.pk], 60, 600, instructions="Read **this**.",
                                    consent_text="I agree."), None)
    entered = _prolific(client, f"/crowd/studies/{study.pk}/", "EVAL1")
    session = EvalSession.objects.get()
    assert entered["Location"] == f"/eval/sessions/{session.pk}/" and session.consented_at is None
    page = client.get(entered["Location"]).content.decode()
    assert 'id="consent-form"' in page and "<strong>this</strong>" in page and "1 question" in page
    assert "up to 60 seconds each" in page and "10 minutes at most" in page
    current = client.get(f"/api/v1/sessions/{session.pk}/current/")
    assert current.status_code == 409 and "consent" in current.json()
    assert not session.responses.exists()
    unticked = client.post(f"/eval/sessions/{session.pk}/consent/", {})
    assert unticked.status_code == 400 and "Tick the box" in unticked.content.decode()
    before = timezone.now()
    agreed = client.post(f"/eval/sessions/{session.pk}/consent/", {"agree": "yes"})
    assert agreed.status_code == 302
    session.refresh_from_db()
    assert session.consented_at >= before and (session.deadline - session.consented_at).total_seconds() == 600
    state = client.get(f"/api/v1/sessions/{session.pk}/current/").json()
    assert state["item"]["id"] == item.pk and session.responses.get().shown_at >= session.consented_at
    assert 'id="consent-form"' not in client.get(f"/eval/sessions/{session.pk}/").content.decode()
    again = client.post(f"/eval/sessions/{session.pk}/consent/", {"agree": True}, content_type="application/json")
    assert again.status_code == 200 and again.json()["consented_at"] == session.consented_at.isoformat()


def test_giving_a_scene_back_keeps_the_draft_and_returns_to_prolific_with_the_return_code(client):
    from annotation.models import Assignment

    item = ItemFactory()
    campaign = annotation_services.create_campaign(item.benchmark, "Moves", "movement", [item.scene],
                                                   return_code="C1RETURN")
    _prolific(client, f"/crowd/campaigns/{campaign.pk}/", "WORKER1")
    assignment = Assignment.objects.get()
    client.put(f"/api/v1/assignments/{assignment.pk}/draft/", {"text": "The chair has been"},
               content_type="application/json")
    assert client.post(f"/api/v1/assignments/{assignment.pk}/release/").status_code == 200
    assignment.refresh_from_db()
    assert assignment.status == "released" and assignment.draft.text == "The chair has been"
    assert assignment.result == {"given_back": True, "draft_kept": True}
    back = client.get(f"/annotate/{assignment.pk}/returned/")
    assert back.status_code == 302 and back["Location"] == "https://app.prolific.com/submissions/complete?cc=C1RETURN"
