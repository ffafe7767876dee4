"""The study planner on the admin's design page (#31): participants per cell of the main table from the
pilot, the paper's numbers typed in, or 50 % assumed; a refused value is a 400 naming its field; no more
items per participant than a cell has, and the plan's cost and duration (#46)."""

import re

import pytest

from core import roles
from scoring.comparison import participants_needed
from tests.factories import BenchmarkFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def design_page(client):
    bench = BenchmarkFactory()
    scene = SceneFactory(benchmark=bench)
    for k in range(4):
        ItemFactory(change=None, scene=scene, benchmark=bench, answers=["window"], status="approved",
                    tags={"change_type": "movement" if k % 2 else "removal", "question_type": ["Direction"]})
    client.force_login(UserFactory(role=roles.ADMIN))
    return bench, f"/manage/{bench.slug}/studies/design/"


def total(html: str) -> int:
    return int(re.search(r'id="planner-total"><strong>(\d+)</strong>', html).group(1))


def test_the_design_page_plans_participants_with_50_percent_assumed_without_a_pilot(client, design_page):
    _, url = design_page
    html = client.get(url).content.decode()
    assert 'id="study-planner"' in html and 'id="design-form"' in html
    # up to 50 items per participant, as many as the smallest cell has
    assert total(html) == participants_needed(0.5, 5.0, 4, 0.05)["participants"]
    assert "assumed 50 %" in html and 'name="items_per_participant" value="4"' in html


def test_the_papers_numbers_typed_per_cell_replace_the_assumed_accuracy(client, design_page):
    _, url = design_page
    # no row yet: the main table has its Overall cell only
    html = client.get(url, {"half_width": "3", "items_per_participant": "3", "icc": "0",
                            "accuracy Overall": "90"}).content.decode()
    assert total(html) == participants_needed(0.9, 3.0, 3, 0.0)["participants"]
    assert html.count(">typed<") == 1 and 'name="accuracy Overall" value="90.0"' in html


def test_a_refused_planner_value_is_a_400_naming_the_field(client, design_page):
    _, url = design_page
    response = client.get(url, {"half_width": "0", "items_per_participant": "3"})
    assert response.status_code == 400
    assert 'name="half_width" value="0" aria-invalid="true"' in response.content.decode()
    response = client.get(url, {"half_width": "5", "items_per_participant": "3", "accuracy Overall": "120"})
    assert response.status_code == 400 and "Must be from 0 to 100" in response.content.decode()
    assert client.get(url, {"half_width": "5", "items_per_participant": "3", "pilot": "999"}).status_code == 400


def test_the_planner_refuses_more_items_per_participant_than_a_cell_has(client, design_page):
    _, url = design_page
    response = client.get(url, {"half_width": "5", "items_per_participant": "50", "icc": "0.05"})
    html = response.content.decode()
    assert response.status_code == 400 and 'id="planner-total"' not in html
    assert "The cell “Overall” has 4 approved items: a participant can answer at most 4 of a cell, not 50." in html
    assert 'name="items_per_participant" value="50" aria-invalid="true"' in html


def test_the_plan_says_its_cost_and_duration_from_the_pilots_times(client, design_page):
    from humaneval.models import Response

    bench, url = design_page
    html = client.get(url, {"half_width": "5", "items_per_participant": "4", "pay_per_hour": "15"}).content.decode()
    participants = total(html)
    # no answer timed yet: the study's time limit per item (120 s by default)
    assert "120 s per answer: the time limit per item, no answer timed yet" in html
    cost = re.search(r'id="planner-cost">About <strong>([\d.]+) minutes</strong>.*?<strong>([\d.]+)</strong> at 15\.00',
                     html, re.S)
    assert float(cost.group(1)) == 8.0 and float(cost.group(2)) == pytest.approx(15 * participants * 8 / 60, abs=0.01)

    from tests.results.test_human_row_comparisons import human_study

    study = human_study(bench, list(bench.items.order_by("pk")), [{0, 1}])
    seconds = sorted((r.answered_at - r.shown_at).total_seconds() for r in Response.objects.filter(session__study=study))
    # the pilot's rows split the table by change type: two items a cell
    html = client.get(url, {"half_width": "5", "items_per_participant": "2", "pilot": study.pk}).content.decode()
    median = round((seconds[1] + seconds[2]) / 2, 1)
    assert f"{median} s per answer, the median of {study.name}" in html and "no answer timed" not in html
