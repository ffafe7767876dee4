"""The seeded demo as a newcomer sees it: each family's results page shows a full paper table with
human, model and chance rows, and the radar chart beside it. The embedded stack (the README's demo)
finishes its model runs while seeding, so the README's results screenshots are taken there."""

import pytest

from demo.files import FAMILY_SLUGS

from .conftest import SCREENSHOTS, login

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

CLIPPED_LABELS = """() => {
  const chart = document.querySelector("#radar-chart").getBoundingClientRect();
  return [...document.querySelectorAll("#radar-chart text.radar-axis")].filter((label) => {
    const box = label.getBoundingClientRect();
    return box.left < chart.left - 0.5 || box.right > chart.right + 0.5;
  }).map((label) => label.textContent);
}"""
WIDER_THAN_CARD = """() => [...document.querySelectorAll("table.paper-table")].filter((table) => {
  const card = table.closest(".card").getBoundingClientRect(), frame = table.parentElement;
  return !frame.matches(".table-scroll") || frame.getBoundingClientRect().right > card.right + 0.5;
}).map((table) => table.dataset.table)"""


@pytest.mark.parametrize("family", list(FAMILY_SLUGS))
def test_each_family_of_the_demo_has_a_full_paper_table(stack, new_page, family):
    if stack["mode"] != "embedded":
        pytest.skip("the services stack leaves the seeded runs to its worker; the embedded demo finishes them")
    page = new_page()
    login(page, stack["base"], "admin")
    page.goto(f"{stack['base']}/benchmarks/{FAMILY_SLUGS[family]}/results/")
    table = page.locator("table.paper-table").first
    assert table.locator("tr.human-row").count() >= 1
    assert table.locator("tr.model-row").count() >= 3
    # Hypo3D's open answers have no chance level; 3DSRBench reports Random and Random++, the others Random
    assert table.locator("tr.chance-row").count() == {"hypo3d": 0, "3dsrbench": 2}.get(family, 1)
    # The sentences above the tables describe the rows they have: no chance rows promised above "No chance row".
    assert ("Chance rows" in page.locator("#results-intro").inner_text()) == (family != "hypo3d")
    assert page.locator("#no-chance-row").count() == (family == "hypo3d")
    assert "–" not in table.locator("tr.model-row").first.locator("td").nth(2).inner_text()
    assert page.locator("svg").count() >= 1  # the radar chart
    # Its axis labels are words (no snake_case) and none sticks out of the chart, where it would be clipped.
    labels = page.locator("#radar-chart text.radar-axis")
    assert labels.count() >= 3 and not any("_" in label for label in labels.all_text_contents())
    assert page.evaluate(CLIPPED_LABELS) == []
    # A table wider than its card (Hypo3D's Table 9) scrolls inside it: the card keeps the page's width.
    assert page.evaluate(WIDER_THAN_CARD) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"results-{family}.png"), full_page=True)
