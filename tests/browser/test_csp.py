"""Content-Security-Policy: every page, opened as the role that uses it, carries the header and runs with
no violation (inline scripts carry the request's nonce; nothing loads from where the policy forbids)."""

import re

import pytest

from .conftest import login, stack_json

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

# Runs inside the live stack (manage.py shell): a campaign and a study of its own (so crowd links always find
# work and a place), and the ids of one of everything the demo made.
SETUP = """
import json
from annotation import services as annotation_services
from benchmarks.models import Benchmark, ContextChange, Item, Release
from humaneval.services.design import StudyDesign, create_study
from modeleval.models import Run
from core.jobs import finish_job, start_job
from review.dedup import new_dedup_run
from review.models import DedupRun

demo = Benchmark.objects.get(slug="hypo3d-demo")  # scanned rooms for crowd work
scenes = list(demo.scenes.order_by("pk")[:2])
campaign = annotation_services.create_campaign(demo, "CSP moves", "movement", scenes)
done = Benchmark.objects.get(slug="hypo3d-finished")  # approved items, runs, studies, a release
approved = Item.objects.filter(benchmark=done, status="approved").order_by("pk")
items = list(approved.values_list("pk", flat=True))[:2]
study = create_study(done, StudyDesign("CSP study", items, 120, 1200), None)
dedup = DedupRun.objects.filter(benchmark=done).first()
if dedup is None:  # a finished search (its job done)
    dedup = new_dedup_run(done, None)
    start_job(dedup.job_id)
    finish_job(dedup.job_id)
print(json.dumps({
    "slug": done.slug, "campaign": campaign.pk, "study": study.pk, "scene": scenes[0].pk, "dedup": dedup.pk,
    "change": ContextChange.objects.order_by("pk").first().pk, "item": items[0],
    "run": Run.objects.filter(benchmark=done).order_by("pk").first().pk,
    "release": Release.objects.filter(benchmark=done).order_by("pk").first().pk,
}))
"""

# Registered before any page script: every violation the browser reports, with what it blocked.
WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  const where = `${e.sourceFile}:${e.lineNumber}`;
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${where}`);
});
"""


@pytest.fixture(scope="module")
def ids(stack):
    return stack_json(stack, SETUP)


class Visitor:
    """A browser tab that records CSP violations (events and console errors) on every page it opens, and
    the policy each page came with."""

    def __init__(self, page, base):
        self.page, self.base, self.problems, self.policies = page, base, [], {}
        page.add_init_script(WATCH)
        page.on("console", self._console)
        page.on("response", self._response)

    def _console(self, message):
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            self.problems.append(f"{self.page.url}: console: {message.text}")

    def _response(self, response):
        if response.request.is_navigation_request() and response.frame == self.page.main_frame:
            self.policies[response.url] = response.headers.get("content-security-policy")

    def open(self, path: str, ready: str | None = None) -> None:
        self.start(path)
        self.check(ready)

    def start(self, path: str) -> None:
        """Navigate, returning once the answer has come (its status and policy are known)."""
        response = self.page.goto(self.base + path, wait_until="commit")
        assert response is not None and response.status < 400, (path, response and response.status)

    def check(self, ready: str | None = None) -> None:
        page = self.page
        if ready:
            page.wait_for_selector(ready, timeout=60_000)
        page.wait_for_load_state("load")
        page.wait_for_timeout(100)  # the violation events of module scripts and their first fetches
        policy = self.policies.get(page.url) or ""
        scripts = re.search(r"script-src ([^;]*)", policy)
        if not scripts or "'self'" not in scripts.group(1) or "unsafe-inline" in scripts.group(1):
            self.problems.append(f"{page.url}: Content-Security-Policy {policy!r}")
        for violation in page.evaluate("() => window.__cspViolations"):
            self.problems.append(f"{page.url}: {violation}")


def open_all(visitors: list[Visitor], pages: list[tuple[str, str | None]]) -> None:
    """Opens the pages a batch at a time, one per visitor's tab, so that their loads overlap."""
    for first in range(0, len(pages), len(visitors)):
        batch = list(zip(visitors, pages[first:first + len(visitors)], strict=False))
        for visitor, (path, _) in batch:
            visitor.start(path)
        for visitor, (_, ready) in batch:
            visitor.check(ready)


def tabs(visitor: Visitor, count: int) -> list[Visitor]:
    """The visitor and more tabs in its browser context (signed in as the same user)."""
    return [visitor] + [Visitor(visitor.page.context.new_page(), visitor.base) for _ in range(count - 1)]


def test_every_page_runs_under_the_content_security_policy(stack, new_page, ids):
    base, slug = stack["base"], ids["slug"]

    anonymous = Visitor(new_page(), base)
    anonymous.open("/accounts/login/", "input[name=username]")

    admin = Visitor(new_page(), base)
    login(admin.page, base, "admin")
    admin.check("body")
    admins = tabs(admin, 4)
    open_all(admins, [
        (f"/manage/{slug}/", "#study-form"),
        (f"/campaigns/{ids['campaign']}/dashboard/", None),
        (f"/campaigns/{ids['campaign']}/settings/", "form"),
        (f"/manage/{slug}/campaigns/new/", "form"),
        (f"/manage/{slug}/studies/design/", "#design-form"),
        (f"/studies/{ids['study']}/results/", None),
        (f"/studies/{ids['study']}/settings/", None),
        (f"/runs/{ids['run']}/", None),
        (f"/runs/{ids['run']}/predictions/", None),
        (f"/benchmarks/{slug}/results/", None),
        (f"/releases/{ids['release']}/", None),
        (f"/manage/scenes/{ids['scene']}/", None),
        (f"/scenes/{ids['scene']}/", "#scene-pointcloud[data-complete=true]"),
        ("/api/v1/docs/", ".swagger-ui .opblock"),
        ("/api/v1/redoc/", "[data-section-id*='operation/']"),
        ("/admin/", None),
    ])

    reviewer = Visitor(new_page(), base)
    login(reviewer.page, base, "reviewer")
    reviewers = tabs(reviewer, 3)
    open_all(reviewers, [
        ("/review/", None),
        (f"/review/changes/{ids['change']}/", None),
        (f"/review/items/{ids['item']}/", None),
        ("/review/filtering/", None),
        (f"/review/duplicates/{ids['dedup']}/", None),
        (f"/review/agreement/{slug}/", None),
    ])

    annotator = Visitor(new_page(), base)
    crowd = "STUDY_ID=s&SESSION_ID"
    annotator.page.goto(f"{base}/crowd/campaigns/{ids['campaign']}/?PROLIFIC_PID=csp-worker&{crowd}=c1")
    annotator.page.wait_for_url(re.compile(r".*/annotate/\d+/$"))
    annotator.check("[data-loaded=true]")

    evaluator = Visitor(new_page(), base)
    evaluator.page.goto(f"{base}/crowd/studies/{ids['study']}/?PROLIFIC_PID=csp-eval&{crowd}=e1")
    evaluator.page.wait_for_url(re.compile(r".*/eval/sessions/\d+/$"))
    evaluator.check()
    if evaluator.page.locator("#agree").count():
        evaluator.page.check("#agree")
        evaluator.page.click("#start-session")
    evaluator.check("#progress:has-text('Question 1')")

    problems = [p for visitor in (anonymous, *admins, *reviewers, annotator, evaluator) for p in visitor.problems]
    assert not problems, "\n".join(problems)
