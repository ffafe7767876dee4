"""#30: every manage-page form that can fail brings its message into view. Each form is sent from the
top of a long manage page with a value it refuses; the page must end scrolled to that form, its message
inside the form and within the window (the forms that reload post to their own #fragment; the pipeline's
stage form answers in place and scrolls its message in)."""

import pytest

from .conftest import login, stack_shell

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(300)]

SLUG = "form-errors"
# Enough approved items that every form sits far below the top of the page.
MAKE_BENCHMARK = f"""
from benchmarks.models import Benchmark, Item
benchmark, _ = Benchmark.objects.get_or_create(slug="{SLUG}", defaults={{"name": "Form errors", "family": "spatial457"}})
for n in range(40):
    Item.objects.get_or_create(benchmark=benchmark, external_id=f"L1_single/{{n}}", defaults={{
        "question": f"How many cubes are there in picture {{n}}?", "answers": ["3"], "answer_format": "open",
        "status": "approved", "tags": {{"level": "L1_single"}}}})
print("ok")
"""

IN_VIEW = "el => { const r = el.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }"


def refuse_study(page):
    for box in page.locator("#study-form input[name=items]").all():
        box.uncheck()
    page.click("#study-form button[type=submit]")


def refuse_run(page):
    page.fill("#run-form input[name=batch_size]", "0")
    page.click("#run-form button[type=submit]")


def refuse_release(page):
    page.fill("#release-form input[name=version]", "not a version")
    page.click("#release-form button[type=submit]")


def refuse_stage(page):
    page.select_option("#stage-form select[name=kind]", "generate")
    page.fill("#stage-form textarea[name=params]", '{"level": "L9"}')
    page.click("#stage-form button[type=submit]")


FORMS = {
    "study": ("#study-form", refuse_study, "#study-form .error"),
    "run": ("#run-form", refuse_run, "#run-form .error"),
    "release": ("#release-form", refuse_release, "#release-form .error"),
    "stage": ("#stage-form", refuse_stage, "#stage-error"),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_a_refused_manage_form_comes_back_scrolled_to_its_message(stack, new_page, form):
    if stack["mode"] != "services":
        pytest.skip("the page is the same on both stacks")
    base = stack["base"]
    stack_shell(stack, MAKE_BENCHMARK)
    selector, refuse, message = FORMS[form]
    page = new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    login(page, base, "admin")
    page.goto(f"{base}/manage/{SLUG}/", wait_until="load")
    page.evaluate("window.scrollTo(0, 0)")
    assert not page.locator(selector).evaluate(IN_VIEW), f"{form}: the form is in view before; the test shows nothing"
    refuse(page)
    error = page.locator(message).first
    error.wait_for(state="visible")
    page.wait_for_function(f"() => {{ const el = document.querySelector({message!r}); "
                           "return el && el.textContent.trim() && (" + IN_VIEW + ")(el); }", timeout=10_000)
    assert error.inner_text().strip(), form
    assert error.evaluate(IN_VIEW), f"{form}: the message is out of view"
