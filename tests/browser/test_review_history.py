"""Review in a real browser: a reviewer edits and approves one raw change and rejects another with
two criteria; the history shows raw and refined text; a second reviewer's stale save gets the 409
message in the page."""


import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .conftest import login, shot, stack_shell

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.timeout(300)]

# Two raw changes by two annotators on the demo scene; printed as "first_id second_id".
MAKE_CHANGES = """
from core import roles
from benchmarks.models import ContextChange, Scene
from django.contrib.auth import get_user_model
scene = Scene.objects.filter(benchmark__slug="hypo3d-demo").first()
ids = []
for n, text in enumerate(["The chair has been moved from the desk to the window, next to the shelf.",
                          "Something in the room is different now, maybe the lamp or a chair."]):
    user, _ = get_user_model().objects.get_or_create(username=f"review-e2e-author-{n}")
    roles.grant_role(user, roles.ANNOTATOR)
    ids.append(ContextChange.objects.create(scene=scene, change_type="movement", raw_text=text, author=user).pk)
print(*ids)
"""



def test_reviewer_edits_approves_rejects_and_a_stale_save_gets_409(stack, new_page):
    base = stack["base"]
    first, second = stack_shell(stack, MAKE_CHANGES).split()

    reviewer, other = new_page(), new_page()
    login(reviewer, base, "reviewer")
    login(other, base, "admin")  # admins count as reviewers
    reviewer.goto(f"{base}/review/changes/{first}/")
    other.goto(f"{base}/review/changes/{first}/")  # the second reviewer opens the same version

    refined = "The chair has been moved from the desk to the window, right beside the shelf."
    held = []  # the page's script on the reload that a save makes, held back until released below
    reviewer.route("**/review-change.js", lambda route: held.append(route))
    reviewer.fill("#refined", refined)
    reviewer.click("#save-edit")
    reviewer.wait_for_selector(f"#refined-text:has-text('{refined}')")
    # The reloaded page is there, its script is not: Approve takes no click yet, rather than losing it.
    with pytest.raises(PlaywrightTimeout):
        reviewer.click("#approve", trial=True, timeout=1_000)
    assert len(held) == 1
    held.pop().continue_()
    reviewer.unroute("**/review-change.js")
    reviewer.click("#approve")
    reviewer.wait_for_selector("#change-status:has-text('Approved')")
    history = reviewer.locator("#history")
    assert "Raw" in history.text_content() and "The chair has been moved from the desk to the window, next" in \
        history.text_content()
    assert refined in history.text_content() and "{+right beside+}" in history.text_content()
    shot(reviewer, "10-reviewer-history", stack)

    other.fill("#refined", "The chair now stands by the window next to the shelf in the room.")
    other.click("#save-edit")
    other.wait_for_selector("#review-error:has-text('Someone saved this after you opened it')")
    assert "current 3" in other.locator("#review-error").text_content()
    shot(other, "11-second-reviewer-409", stack)

    reviewer.goto(f"{base}/review/changes/{second}/")
    reviewer.check("input[name=criteria][value=unambiguous]")
    reviewer.check("input[name=criteria][value=plausible]")
    reviewer.fill("#reject-note", "Say which object moved and where.")
    reviewer.click("#reject")
    reviewer.wait_for_selector("#change-status:has-text('Rejected')")
    decision = reviewer.locator("#history .history-decision").last.text_content()
    # The criteria it fails in the words the reviewer ticked (review.services.CHANGE_CRITERIA), not their keys.
    assert "Names each object so that only one can be meant" in decision
    assert "Physically possible in this room" in decision
    assert "unambiguous" not in decision and "Refers only to objects" not in decision
