"""The newcomer's issue in a real browser: each role lands on its own home and reaches its main action
in at most two clicks; a study opens with its instructions and consent before the first timed item
and the server's clock starts at consent; a refused study form keeps what was typed; giving a scene
back with a draft asks first and ends on the crowd platform's return URL."""

import re
import time
from datetime import datetime

import pytest

from .conftest import login, shot, stack_json

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(300)]

PASSWORD = "newcomer-pw"
RETURN_CODE = "NCRETURN"
RETURN_URL = f"https://app.prolific.com/submissions/complete?cc={RETURN_CODE}"

# Runs inside the live stack (manage.py shell): one account per role, a campaign on the demo scene with
# a return code, a change waiting for review, and a study with instructions, consent and a practice item.
SETUP = """
import json
from django.contrib.auth import get_user_model
from annotation import services as annotation_services
from core import roles
from benchmarks.models import Benchmark, ContextChange, Item
from humaneval.services.design import StudyDesign, create_study

User = get_user_model()
for role in ("admin", "reviewer", "annotator", "evaluator"):
    user, _ = User.objects.get_or_create(username=f"newcomer-{role}", defaults={"is_staff": role == "admin"})
    user.set_password(PASSWORD)
    user.save()
    roles.grant_role(user, role)
demo = Benchmark.objects.get(slug="hypo3d-demo")
scene = demo.scenes.order_by("pk").first()
campaign = annotation_services.create_campaign(demo, "Newcomer moves", "movement", [scene], return_code=RETURN_CODE)
change = ContextChange.objects.create(
    scene=scene, change_type="movement", author=User.objects.get(username="newcomer-annotator"),
    raw_text="The newcomer lamp has been moved from the desk to the sill of the window.")
bench = Benchmark.objects.create(name="Newcomer bench", slug="newcomer-bench", family="3dsrbench")
items = [Item.objects.create(benchmark=bench, question=f"Is the red cube left of the blue ball? ({n})",
                             answer_format="single", choices=["yes", "no"], answers=["A"], status="approved")
         for n in range(2)]
study = create_study(bench, StudyDesign(
    "Newcomer study", [items[0].pk], 60, 600, familiarisation_count=1, seed=3,
    instructions="Look at **each** question carefully.\\n\\n- Pick one option.\\n- Work alone.",
    consent_text="I agree to take part in the newcomer study."), None)
from humaneval.models import StudyInvitation
StudyInvitation.objects.create(study=study, user=User.objects.get(username="newcomer-evaluator"))
print(json.dumps({"campaign": campaign.pk, "change": change.pk, "study": study.pk}))
"""

SESSION_TIMES = """
import json
from humaneval.models import EvalSession
s = EvalSession.objects.select_related("study").get(participant__username=USERNAME)
first = s.responses.order_by("shown_at").first()
print(json.dumps({"started_at": s.started_at.isoformat(), "consented_at": s.consented_at.isoformat(),
                  "deadline": s.deadline.isoformat(), "seconds_per_session": s.study.seconds_per_session,
                  "first_shown_at": first.shown_at.isoformat()}))
"""

DRAFT = """
import json
from annotation.models import Assignment
a = Assignment.objects.select_related("draft").get(pk=ASSIGNMENT)
print(json.dumps({"status": a.status, "text": a.draft.text, "result": a.result}))
"""



@pytest.fixture(scope="module")
def setup(stack):
    return stack_json(stack, SETUP.replace("PASSWORD", repr(PASSWORD)).replace("RETURN_CODE", repr(RETURN_CODE)))


def test_each_role_reaches_its_main_action_from_its_home_in_two_clicks(stack, new_page, setup):
    base = stack["base"]

    admin = new_page()
    login(admin, base, "newcomer-admin", PASSWORD)
    row = admin.locator("#pipelines tr", has_text="Newcomer bench")
    assert "no release yet" in row.text_content() and "0 runs finished" in row.text_content()
    assert admin.locator("#pipelines .next-step").count() >= 1
    assert "{{%PROLIFIC_PID%}}" in admin.locator(f"#campaign-links-{setup['campaign']}").inner_html()
    shot(admin, "home-admin", stack)
    row.get_by_role("link", name="Manage").click()  # 1
    admin.wait_for_selector("#study-form")
    assert admin.locator("#design-study-link").is_visible()

    reviewer = new_page()
    login(reviewer, base, "newcomer-reviewer", PASSWORD)
    counts = reviewer.locator("#home-reviewer")
    assert re.search(r"\d+ changes? to review", counts.text_content())
    assert "questions to review" in counts.text_content() or "question to review" in counts.text_content()
    assert "flagged" in counts.text_content()
    shot(reviewer, "home-reviewer", stack)
    reviewer.click("#queue-changes")  # 1
    reviewer.locator("#review-queue tr", has_text="newcomer lamp").get_by_role("link", name="Review").click()  # 2
    reviewer.wait_for_selector("#approve")
    assert reviewer.locator("#change-criteria input[value=plausible]").count() == 1

    annotator = new_page()
    login(annotator, base, "newcomer-annotator", PASSWORD)
    assert annotator.locator("#home-annotator").is_visible()
    # The campaign's kind in words, not its choice label's placeholder ("Context change (N descriptions …)").
    open_campaign = annotator.locator("#home-annotator li", has_text="Start “Newcomer moves”")
    assert open_campaign.locator(".muted").text_content() == "Context changes"
    annotator.get_by_role("link", name="Start “Newcomer moves”").click()  # 1
    annotator.wait_for_url(re.compile(r".*/annotate/\d+/$"))
    annotator.wait_for_selector("#change-text")
    annotator.goto(base + "/")
    earnings = annotator.locator("#home-annotator .campaign-earnings", has_text="Newcomer moves")
    assert "$0.00" in earnings.text_content() and "Leased" in earnings.text_content()
    shot(annotator, "home-annotator", stack)
    earnings.get_by_role("link", name="Continue").first.click()  # 1
    annotator.wait_for_selector("#change-text")

    evaluator = new_page()
    login(evaluator, base, "newcomer-evaluator", PASSWORD)
    evaluator.get_by_role("button", name="Start “Newcomer study”").click()  # 1 (a form: starting is a POST)
    evaluator.wait_for_selector("#consent-form")
    evaluator.goto(base + "/")
    sessions = evaluator.locator("#home-evaluator")
    assert "Newcomer study" in sessions.text_content() and "Not started" in sessions.text_content()
    shot(evaluator, "home-evaluator", stack)
    sessions.locator("a.resume-session").first.click()  # 1
    evaluator.wait_for_selector("#consent-form")

    # A signed-in annotator opens the campaign's crowd link without platform ids: it just goes on.
    annotator.goto(f"{base}/crowd/campaigns/{setup['campaign']}/")
    annotator.wait_for_url(re.compile(r".*/annotate/\d+/$"))


def test_study_instructions_and_consent_come_before_the_clock(stack, new_page, setup):
    base = stack["base"]
    evaluator = new_page()
    evaluator.goto(f"{base}/crowd/studies/{setup['study']}/?PROLIFIC_PID=newcomer-eval&STUDY_ID=s&SESSION_ID=n1")
    evaluator.wait_for_url(re.compile(r".*/eval/sessions/\d+/$"))
    intro = evaluator.locator("#intro")
    assert "1 practice question first" in intro.text_content() and "1 question" in intro.text_content()
    assert "up to 60 seconds each" in intro.text_content() and "10 minutes at most" in intro.text_content()
    assert evaluator.locator("#instructions strong").text_content() == "each"
    assert evaluator.locator("#instructions li").count() == 2
    assert "newcomer study" in evaluator.locator("#consent-text").text_content()
    assert evaluator.locator("#item-countdown").count() == 0 and evaluator.locator("#stage").is_hidden()
    shot(evaluator, "study-instructions-and-consent", stack)
    time.sleep(2.5)  # reading the instructions takes no time off the clock
    evaluator.click("#start-session")  # not ticked: the browser asks for the tick
    assert evaluator.locator("#consent-form").is_visible()
    evaluator.check("#agree")
    evaluator.click("#start-session")
    evaluator.wait_for_selector("#progress:has-text('Question 1 of 2')")
    assert evaluator.locator("#practice-badge").is_visible()
    evaluator.wait_for_function("() => /\\d+:\\d\\d/.test(document.getElementById('item-countdown').textContent)")

    times = stack_json(stack, SESSION_TIMES.replace("USERNAME", repr("prolific-newcomer-eval")))
    started, consented, deadline, first_shown = (datetime.fromisoformat(times[key]) for key in
                                                 ("started_at", "consented_at", "deadline", "first_shown_at"))
    assert (consented - started).total_seconds() >= 2.5
    assert (deadline - consented).total_seconds() == times["seconds_per_session"]
    assert first_shown >= consented


def test_a_refused_study_form_keeps_its_values(stack, new_page, setup):
    base = stack["base"]
    admin = new_page()
    login(admin, base, "newcomer-admin", PASSWORD)
    admin.goto(f"{base}/manage/newcomer-bench/studies/design/")
    form = admin.locator("#design-form")
    form.locator("input[name=name]").fill("Careful newcomer study")
    form.locator("input[name=seconds_per_item]").fill("90")
    form.locator("input[name=seconds_per_session]").fill("30")
    form.locator("textarea[name=instructions]").fill("Read **slowly**.")
    form.locator("input[name=participants_per_item]").fill("5")
    form.locator("input[name=allow_going_back]").check()
    form.locator("input[name=shuffle_choices]").uncheck()
    form.locator("button[type=submit]").click()
    admin.wait_for_selector("#design-form .error:has-text(\"at least one item's time\")")
    assert form.locator("input[name=name]").input_value() == "Careful newcomer study"
    assert form.locator("input[name=seconds_per_item]").input_value() == "90"
    assert form.locator("input[name=seconds_per_session]").input_value() == "30"
    assert form.locator("textarea[name=instructions]").input_value() == "Read **slowly**."
    assert form.locator("input[name=participants_per_item]").input_value() == "5"
    assert form.locator("input[name=allow_going_back]").is_checked()
    assert not form.locator("input[name=shuffle_choices]").is_checked()
    shot(admin, "study-form-kept-values", stack)


def test_giving_a_scene_back_with_a_draft_asks_and_ends_on_the_platforms_return_url(stack, new_page, setup):
    base = stack["base"]
    worker = new_page()
    worker.goto(f"{base}/crowd/campaigns/{setup['campaign']}/?PROLIFIC_PID=newcomer-worker&STUDY_ID=s&SESSION_ID=g1")
    worker.wait_for_url(re.compile(r".*/annotate/\d+/$"))
    worker.fill("#change-text", "The lamp has been moved from the desk")
    dialogs = []

    def answer(dialog, accept):
        dialogs.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    worker.once("dialog", lambda d: answer(d, accept=False))
    worker.click("#release-assignment")
    worker.wait_for_timeout(500)
    assert len(dialogs) == 1 and "draft" in dialogs[0] and re.search(r".*/annotate/\d+/$", worker.url)
    assignment = int(worker.url.rstrip("/").split("/")[-1])
    # The page leaves for Prolific's return URL, sent there by the server. (The sandbox has no internet, and
    # Chromium's process swap for a cross-origin page under COOP escapes Playwright's routes, so the test
    # checks the navigation request rather than the platform's page.)
    worker.once("dialog", lambda d: answer(d, accept=True))
    with worker.expect_request(lambda r: r.url == RETURN_URL and r.is_navigation_request()) as navigation:
        worker.click("#release-assignment")
    assert navigation.value.redirected_from.url == f"{base}/annotate/{assignment}/returned/"
    assert len(dialogs) == 2
    kept = stack_json(stack, DRAFT.replace("ASSIGNMENT", str(assignment)))
    assert kept == {"status": "released", "text": "The lamp has been moved from the desk",
                    "result": {"given_back": True, "draft_kept": True}}
