"""A paper's recipe launched from the manage page in a real browser: every run of it for the models
chosen, and a refusal shown at the recipe form."""

import re

import pytest

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]  # its stack may be the first built

SLUG = "m3verse-demo"


def test_the_recipe_form_launches_every_run_and_shows_a_refusal_at_the_form(stack, new_page):
    if stack["mode"] != "embedded":
        pytest.skip("one stack is enough: the form posts the same on both")
    page = new_page()
    login(page, stack["base"], "admin")
    page.goto(f"{stack['base']}/manage/{SLUG}/")
    before = page.locator("#runs table tr").count()
    page.select_option("#recipe-form select[name=recipe]", "m3verse-table2")
    page.click("#recipe-form button[type=submit]")  # no model chosen
    page.wait_for_selector("#recipe-form [role=alert]:has-text('Name at least one model.')")

    option = page.locator("#recipe-form select[name=models] option").first
    page.select_option("#recipe-form select[name=models]", option.get_attribute("value"))
    page.click("#recipe-form button[type=submit]")
    page.wait_for_url(re.compile(rf".*/manage/{SLUG}/#runs$"))
    page.wait_for_load_state("domcontentloaded")
    # the model's run and the recipe's Random baseline (at most 20 runs are listed)
    assert min(before + 2, 20) <= page.locator("#runs table tr").count()
