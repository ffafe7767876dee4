"""The API documents itself offline: Swagger UI and ReDoc come from the site's own static files
(drf-spectacular-sidecar), so with every request to another host refused the pages still list the
operations."""

from urllib.parse import urlsplit

import pytest

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

LOCAL = {"127.0.0.1", "localhost", "[::1]", "::1"}


def offline(page) -> list[str]:
    """Abort every request that leaves this machine; returns the list of what was refused."""
    refused = []

    def route(route):
        if urlsplit(route.request.url).hostname in LOCAL:
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    page.context.route("**/*", route)
    return refused


def test_swagger_ui_and_redoc_list_the_operations_offline(stack, new_page):
    base = stack["base"]
    page = new_page()
    refused = offline(page)
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, base, "admin")

    page.goto(base + "/api/v1/docs/")
    page.wait_for_selector(".swagger-ui .opblock", timeout=60_000)
    assert page.locator(".swagger-ui .opblock").count() > 50
    paths = page.locator(".opblock-summary-path").all_text_contents()
    assert any("/api/v1/runs/" in path for path in paths) and any("/api/v1/sessions/" in path for path in paths)
    page.locator(".opblock-summary-path", has_text="/api/v1/review/queue/").first.click()
    page.wait_for_selector(".opblock.is-open .responses-table")
    assert "403" in page.locator(".opblock.is-open .responses-table").inner_text()

    page.goto(base + "/api/v1/redoc/")
    page.wait_for_selector("[data-section-id^='tag/']", timeout=60_000)
    assert page.locator("[data-section-id*='operation/']").count() > 50

    assert not refused, refused
    assert not errors, errors
