"""Public results in a real browser (issue #46): signed out, a visitor reads on the home page what each role
does and the demo's public benchmarks with an example table, opens one's results (paper tables, radar), and
reaches no private benchmark's results nor any benchmark's items, releases or studies (403/404 or the
login page); the login page names the demo's accounts; "Try it as a participant" starts a session of the demo's open
study."""

import re

import pytest

from .conftest import shot, stack_json

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(300)]

PUBLIC = ("hypo3d-finished", "3dsrbench-demo", "causalspatial-demo", "spatial457-demo", "m3verse-demo")
PRIVATE = "hypo3d-demo"  # the sandbox
IDS = """
import json
from benchmarks.models import Item, Release
from humaneval.models import Study
print(json.dumps({"release": Release.objects.filter(benchmark__slug="hypo3d-finished").first().pk,
                  "study": Study.objects.filter(benchmark__slug="hypo3d-finished").first().pk,
                  "item": Item.objects.filter(benchmark__slug="hypo3d-finished").first().pk}))
"""


def refused(page, url: str) -> str:
    """Opens `url` and says how it was refused: its status, or "login" where it sent the visitor there."""
    response = page.goto(url)
    if "/accounts/login/" in page.url:
        return "login"
    return str(response.status)


def test_signed_out_a_visitor_reads_public_results_and_nothing_private(stack, new_page):
    base = stack["base"]
    ids = stack_json(stack, IDS)
    page = new_page()
    page.goto(base + "/")
    roles = page.locator("#roles").inner_text()
    for role in ("Annotators", "Reviewers", "Participants", "Admins"):
        assert role in roles
    listed = page.locator("#public-benchmarks .public-list a").evaluate_all("links => links.map(a => a.pathname)")
    assert sorted(listed) == sorted(f"/results/{slug}/" for slug in PUBLIC)
    example = page.locator("#example-table")
    assert example.is_visible() and example.locator("tbody tr").count() >= 3  # chance, human and model rows
    shot(page, "home-signed-out", stack)

    page.locator("#public-benchmarks .public-list a", has_text="Hypo3D").click()
    page.wait_for_url(f"{base}/results/hypo3d-finished/")
    assert page.locator("table.paper-table").count() >= 1 and page.locator("#radar svg").count() == 1
    assert page.locator("#item-analysis-link").count() == 0  # a reviewer's page: not offered signed out
    shot(page, "results-signed-out", stack)
    assert page.request.get(f"{base}/api/v1/benchmarks/hypo3d-finished/results/").ok

    assert refused(page, f"{base}/results/{PRIVATE}/") == "login"
    assert refused(page, f"{base}/benchmarks/{PRIVATE}/results/") == "login"
    for url in (f"/releases/{ids['release']}/", f"/studies/{ids['study']}/results/",
                f"/studies/{ids['study']}/settings/", f"/review/items/{ids['item']}/", "/manage/hypo3d-finished/",
                "/review/item-analysis/hypo3d-finished/"):
        assert refused(page, base + url) == "login", url
    for url in ("/api/v1/items/", f"/api/v1/items/{ids['item']}/", "/api/v1/releases/",
                f"/api/v1/releases/{ids['release']}/", f"/api/v1/studies/{ids['study']}/results/",
                f"/api/v1/benchmarks/{PRIVATE}/results/",
                f"/api/v1/benchmarks/hypo3d-finished/results/?study={ids['study']}"):
        assert page.request.get(base + url).status in (401, 403, 404), url


def test_the_login_page_names_the_demo_accounts_and_a_visitor_tries_the_open_study(stack, new_page):
    base = stack["base"]
    page = new_page()
    page.goto(base + "/accounts/login/")
    accounts = page.locator("#demo-accounts")
    assert "hypolab-demo" in accounts.inner_text()
    assert {"admin", "reviewer", "annotator", "evaluator"} <= set(accounts.locator("li code").all_inner_texts())

    page.goto(base + "/")
    page.click("#try-as-participant")
    page.wait_for_url(re.compile(r".*/eval/sessions/\d+/$"))
    page.check("#agree")
    page.click("#start-session")
    page.wait_for_selector("#progress:has-text('Question 1 of 5')")
