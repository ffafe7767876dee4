"""The seeded demo as a new user meets it (issue #30): every page, as every role (anonymous, crowd worker,
annotator, evaluator, reviewer, admin), served as ./scripts/demo serves it (DEBUG off). A page fails on
template source in its text, a 5xx, Django's technical error page, text wider than the window at
1280 px, a raw Python dict or list in its text, a code name anywhere in its visible text (snake_case keys,
job kinds, condition ids, command names such as manage.py: people read words; code, pre and kbd blocks
such as the API docs' are code and may show them), a message naming a field by its code name, or a serious
or critical accessibility violation found by axe-core. A study form sent with no item ticked answers
with its message in view. `test_the_checks_catch_planted_faults` shows each check failing."""

import os
import re
from collections import deque
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from tests.needs import need

from .conftest import CHROMIUM, SCREENSHOTS, login, stack_json

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "frontend" / "static" / "vendor" / "axe" / "axe.min.js"  # scripts/install_static.sh
AXE_URL = "/static/vendor/axe/axe.min.js"
PAGES_PER_ROLE = 70
TEMPLATE_SOURCE = re.compile(r"\{#|#\}|\{%|%\}|\{\{|\}\}")
RAW_PYTHON = re.compile(r"[{\[]\s*['\"][^'\"\n]{0,60}['\"]\s*[:,\]]|\bobject at 0x|<QuerySet|\bOrderedDict\(")
CODE_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b\w+\.py\b")
FIELD_PREFIX = re.compile(r"\s*([a-z][A-Za-z_]*)\s*:")  # "text: …": a person's sentence starts in capitals
TECHNICAL_PAGE = ("NONE,NOARCHIVE", "Traceback (most recent call last)", "Using the URLconf defined in")
# Not pages of the app: the API, Django's admin, files, downloads, exports.
SKIPPED = re.compile(r"^/(api|admin|media|static)/|\.(csv|json|jsonl|tex|zip|tsv|png|ply|mp4)$")

# What a page's text is for these checks: every text node of the body but code, scripts and the like (a
# crowd link's {{%PROLIFIC_PID%}} is Prolific's own placeholder, shown as code); the part of it on screen
# (what a person reads: code names are looked for there); messages; and what sticks out at the right.
PAGE_FACTS = """
() => {
  const skip = "code, pre, kbd, samp, textarea, script, style, template, noscript, svg";
  const text = (root, onScreen = false) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const parts = [];
    while (walker.nextNode()) {
      const el = walker.currentNode.parentElement;
      if (el && !el.closest(skip) && (!onScreen || el.checkVisibility())) parts.push(walker.currentNode.textContent);
    }
    return parts.join(" ");
  };
  const shown = (selector) => [...document.querySelectorAll(selector)].filter((el) => el.checkVisibility()).map(text);
  const messages = ".error, [role=alert], .errorlist, #page-error";
  const width = window.innerWidth;
  const wide = [...document.body.querySelectorAll("*")]
    .filter((el) => el.checkVisibility() && el.getBoundingClientRect().right > width + 1
            && !el.closest("[data-scrolls], .table-scroll") && el.children.length === 0)
    .slice(0, 3).map((el) => `${el.tagName.toLowerCase()}#${el.id}.${el.className} "${el.textContent.slice(0, 40)}"`);
  return {text: text(document.body), visible: text(document.body, true), messages: shown(messages), html: document.documentElement.outerHTML.slice(0, 4000),
          scrollWidth: document.documentElement.scrollWidth, width, wide};
}
"""
AXE_RUN = """
async () => {
  const found = await axe.run(document, {resultTypes: ["violations"]});
  return found.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | ")}`);
}
"""


def page_problems(page, status: int | None, axe_url: str | None = AXE_URL) -> list[str]:
    """Everything wrong with the page now on screen (see the module's docstring)."""
    problems = []
    if status is not None and status >= 500:
        problems.append(f"answered {status}")
    facts = page.evaluate(PAGE_FACTS)
    if any(marker in facts["html"] or marker in facts["text"] for marker in TECHNICAL_PAGE):
        problems.append("Django's technical error page")
    if found := TEMPLATE_SOURCE.search(facts["text"]):
        problems.append(f"template source: {facts['text'][max(0, found.start() - 40):found.end() + 40]!r}")
    if found := RAW_PYTHON.search(facts["text"]):
        problems.append(f"a raw dict or list: {facts['text'][max(0, found.start() - 20):found.end() + 40]!r}")
    for found in CODE_NAME.finditer(facts["visible"]):
        around = " ".join(facts["visible"][max(0, found.start() - 50):found.end() + 50].split())
        problems.append(f"a code name ({found.group()}) in {around!r}")
    for line in facts["messages"]:
        if found := FIELD_PREFIX.match(line):
            problems.append(f"a code name ({found.group(1)}) before the message {line.strip()[:120]!r}")
    if facts["scrollWidth"] > facts["width"] + 1:
        problems.append(f"wider than the window ({facts['scrollWidth']} px > {facts['width']}): {facts['wide']}")
    if axe_url:
        page.add_script_tag(url=axe_url)
    else:
        page.add_script_tag(path=str(AXE))
    problems += page.evaluate(AXE_RUN)
    return problems


class Crawler:
    """One role's browser tab: opens pages, follows the links on them (one page per address shape: ids
    as N), and keeps what is wrong with each."""

    def __init__(self, page, base: str, role: str):
        self.page, self.base, self.role = page, base, role
        self.problems: list[str] = []
        self.seen_shapes: set[str] = set()
        self.visited = 0

    def shape(self, path: str) -> str:
        return re.sub(r"\d+", "N", path)

    def visit(self, path: str, expect_status: int | None = None) -> list[str]:
        """Open one page and check it; the same-origin links on it."""
        response = self.page.goto(self.base + path, wait_until="load")
        self.page.wait_for_timeout(150)  # module scripts fill in what the page loads after
        status = response.status if response else None
        self.visited += 1
        found = page_problems(self.page, status)
        if expect_status is not None and status != expect_status:
            found.append(f"answered {status}, expected {expect_status}")
        self.problems += [f"{self.role} {path}: {problem}" for problem in found]
        links = self.page.eval_on_selector_all("a[href]", "links => links.map(a => a.getAttribute('href'))")
        return [urlsplit(urljoin(self.base + path, href)) for href in links]

    def crawl(self, starts: list[str], follow: bool = True) -> None:
        """Visit `starts` and, with `follow`, the pages they link to; the first page (the role's start) is
        the README's picture of the role (docs/screenshots/crawl-<role>.png)."""
        queue = deque(starts)
        first = True
        while queue and self.visited < PAGES_PER_ROLE:
            path = queue.popleft()
            shape = self.shape(path)
            if shape in self.seen_shapes:
                continue
            self.seen_shapes.add(shape)
            links = self.visit(path)
            if first:
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                self.page.screenshot(path=str(SCREENSHOTS / f"crawl-{self.role.replace(' ', '-')}.png"))
                first = False
            for link in links:
                if not follow or link.netloc != urlsplit(self.base).netloc:
                    continue
                target = link.path + (f"?{link.query}" if link.query and "format=" not in link.query else "")
                if not SKIPPED.search(link.path) and "format=" not in link.query and "logout" not in link.path:
                    queue.append(target)


# Runs in the live stack: what a crowd worker is sent (a campaign's and a study's links) and a benchmark
# with no approved item (the tour's sandbox, where "Create study" first crashed).
SETUP = """
import json
from annotation.models import Campaign
from benchmarks.models import Benchmark, Item
from humaneval.models import Study
from humaneval.services.design import StudyDesign, create_study

campaign = Campaign.objects.filter(benchmark__slug="hypo3d-demo", is_active=True).order_by("pk").first()
finished = Benchmark.objects.get(slug="hypo3d-finished")
items = list(Item.objects.filter(benchmark=finished, status="approved").order_by("pk").values_list("pk", flat=True))
# each role's test asks; the first makes the study
study = (Study.objects.filter(benchmark=finished, name="Crawl study").first()
         or create_study(finished, StudyDesign("Crawl study", items[:2], 120, 1200), None))
empty = Benchmark.objects.get(slug="hypo3d-demo")
print(json.dumps({"campaign": campaign.pk, "study": study.pk, "empty": empty.slug,
                  "empty_has_items": Item.objects.filter(benchmark=empty, status="approved").exists()}))
"""


@pytest.fixture(scope="module")
def demo(stacks):
    need(Path(CHROMIUM).exists(), "/usr/bin/chromium")
    need(bool(os.environ.get("REDIS_URL")), "REDIS_URL (PostgreSQL and Redis)")
    need(AXE.exists(), "axe-core in frontend/static/vendor (scripts/install_static.sh)")
    return stacks("demo")


def crowd_params(worker: str) -> str:
    return f"?PROLIFIC_PID={worker}&STUDY_ID=crawl&SESSION_ID={worker}-s"


def submit_empty_study(crawler: Crawler, path: str, form: str) -> None:
    """A study form sent with no item ticked: a 400 whose message is in view, not a 500."""
    page = crawler.page
    page.goto(crawler.base + path, wait_until="load")
    for box in page.locator(f"{form} input[name=items]").all():
        box.uncheck()
    with page.expect_navigation(wait_until="load") as sent:
        page.locator(f"{form} button[type=submit]").click()
    status = sent.value.status if sent.value else None
    where = f"{crawler.role} {path} (no item ticked)"
    crawler.problems += [f"{where}: {problem}" for problem in page_problems(page, status)]
    error = page.locator(f"{form} .error")
    if status != 400 or error.count() == 0:
        crawler.problems.append(f"{where}: answered {status} without a message")
    elif not error.first.is_visible() or not error.first.evaluate(
            "el => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }"):
        crawler.problems.append(f"{where}: the message is out of view")


def enter_by_link(crawler, link: str, lands: str) -> None:
    """Open a crowd link (its start page posts itself) and crawl the page it lands on."""
    page = crawler.page
    page.goto(crawler.base + link, wait_until="commit")
    page.wait_for_url(lambda url: lands in url, wait_until="load")
    crawler.crawl([urlsplit(page.url).path], follow=False)


# One test per role, so that the roles' crawls run on both workers (each on its own copy of the demo).
ROLES = ("visitor and crowd", "annotator", "evaluator", "reviewer", "admin")


@pytest.mark.parametrize("role", ROLES)
def test_every_page_as_every_role_reads_clean(demo, new_page, role):
    base = demo["base"]
    ids = stack_json(demo, SETUP)
    crawlers = []
    if role == "visitor and crowd":
        anonymous = Crawler(new_page(), base, "anonymous")
        anonymous.crawl(["/", "/accounts/login/"])
        anonymous.visit("/no/such/page/", expect_status=404)
        anonymous.visit(f"/crowd/studies/{ids['study']}/", expect_status=None)  # no platform ids: a message
        anonymous.visit("/crowd/studies/999999/" + crowd_params("lost-worker"), expect_status=404)
        # A crowd worker opens what the platform sends: an annotation campaign's link, a study's link.
        # The link's GET shows a start page whose form POSTs it (sent at once): the crawl reads where it lands.
        worker = Crawler(new_page(), base, "crowd worker")
        enter_by_link(worker, f"/crowd/campaigns/{ids['campaign']}/" + crowd_params("crawl-annotator"), "/annotate/")
        participant = Crawler(new_page(), base, "crowd participant")
        enter_by_link(participant, f"/crowd/studies/{ids['study']}/" + crowd_params("crawl-participant"),
                      "/eval/sessions/")
        crawlers += [anonymous, worker, participant]
    else:
        crawler = Crawler(new_page(), base, role)
        login(crawler.page, base, role)
        crawler.crawl(["/"])
        crawler.visit("/no/such/page/", expect_status=404)
        crawlers.append(crawler)
    if role == "admin":
        assert not ids["empty_has_items"], "the sandbox is meant to have no approved item"
        submit_empty_study(crawler, f"/manage/{ids['empty']}/", "#study-form")
        submit_empty_study(crawler, f"/manage/{ids['empty']}/studies/design/", "#design-form")
        assert crawler.visited > 20, crawler.visited

    print("pages visited:", {c.role: c.visited for c in crawlers})
    assert all(c.visited for c in crawlers), [(c.role, c.visited) for c in crawlers]
    problems = [problem for crawler in crawlers for problem in crawler.problems]
    assert not problems, "\n".join(problems)


PLANTED = """<!doctype html><html lang="en"><head><title>Planted</title></head><body><main>
<h1>Planted page</h1>
<p>{content}</p>
</main></body></html>"""


@pytest.mark.parametrize("content, expected", [
    ("Runs after the page's module scripts #}", "template source"),
    ("{'items': 'Pick at least one approved item.'}", "a raw dict or list"),
    ('</p><p class="error" role="alert">text: A description needs 5 words.', "a code name (text)"),
    ('</p><p class="error" role="alert">seconds_per_session: Must be between 1 and 9.', "a code name"),
    ('</p><div style="width: 2000px">a wide table</div><p>', "wider than the window"),
    ('</p><button><a href="/x">Open</a></button><p>', "serious nested-interactive"),
    ('</p><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><p>', "critical image-alt"),
    ("Traceback (most recent call last): File", "technical error page"),
    ("Job model_run: 3 of 5 done", "a code name (model_run)"),
    ("Qwen · main · caption_only", "a code name (caption_only)"),
    ("Send the link with manage.py prolific", "a code name (manage.py)"),
])
def test_the_checks_catch_planted_faults(new_page, content, expected):
    need(Path(CHROMIUM).exists(), "/usr/bin/chromium")
    need(AXE.exists(), "axe-core in frontend/static/vendor (scripts/install_static.sh)")
    page = new_page()
    # Code blocks and text off screen are not read as words.
    clean = page_problems(_planted(page, "All is well: <code>model_run</code> <kbd>manage.py seed_demo</kbd>"
                                         "<span hidden>release_export</span>"), None, axe_url=None)
    assert clean == []
    assert "answered 502" in page_problems(page, 502, axe_url=None)
    problems = page_problems(_planted(page, content), None, axe_url=None)
    assert any(expected in problem for problem in problems), problems


def _planted(page, content: str):
    page.set_content(PLANTED.format(content=content))
    return page
