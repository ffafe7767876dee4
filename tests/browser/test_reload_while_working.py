"""A page of background work reloads itself until the work is done (a release's export, a dedup run); a
navigation away from it, started just before a reload was due, still arrives."""

import time

import pytest

from .conftest import login, stack_shell

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# A release still being written: its page reloads every 1.5 s (release_detail.html).
MAKE_EXPORTING_RELEASE = """
from benchmarks.models import Benchmark, Release
release = Release.objects.create(benchmark=Benchmark.objects.get(slug="hypo3d-demo"), version="0.0.1-reloading")
print(release.pk)
"""


def test_a_navigation_away_is_not_cancelled_by_the_pages_reload(stack, new_page):
    base = stack["base"]
    release = stack_shell(stack, MAKE_EXPORTING_RELEASE)
    page = new_page()
    login(page, base, "admin")
    page.goto(f"{base}/releases/{release}/")
    page.wait_for_selector("body[data-scripts=ready]")
    assert page.locator("#reload-after-ms").count() == 1

    def answer_late(route):
        time.sleep(2.5)  # the next page answers after the 1.5 s reload was due
        route.continue_()

    page.route(f"{base}/", answer_late)
    try:
        response = page.goto(f"{base}/", wait_until="commit")  # was net::ERR_ABORTED: the reload came first
        assert response.status == 200 and page.url == f"{base}/"
    finally:  # the stack is shared: other tests release this benchmark
        stack_shell(stack, f"from benchmarks.models import Release; Release.objects.filter(pk={release}).delete()")
