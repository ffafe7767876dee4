"""The study planner on the admin's design page (#31): participants per cell of the main table from the
pilot, the paper's numbers typed in, or 50 % assumed; a refused value is a 400 naming its field."""

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
    assert total(html) == participants_needed(0.5, 5.0, 50, 0.05)["participants"]
    assert "assumed 50 %" in html


def test_the_papers_numbers_typed_per_cell_replace_the_assumed_accuracy(client, design_page):
    _, url = design_page
    # no row yet: the main table has its Overall cell only
    html = client.get(url, {"half_width": "3", "items_per_participant": "25", "icc": "0",
                            "accuracy Overall": "90"}).content.decode()
    assert total(html) == participants_needed(0.9, 3.0, 25, 0.0)["participants"]
    assert html.count(">typed<") == 1 and 'name="accuracy Overall" value="90.0"' in html


def test_a_refused_planner_value_is_a_400_naming_the_field(client, design_page):
    _, url = design_page
    response = client.get(url, {"half_width": "0", "items_per_participant": "25"})
    assert response.status_code == 400
    assert 'name="half_width" value="0" aria-invalid="true"' in response.content.decode()
    response = client.get(url, {"half_width": "5", "items_per_participant": "25", "accuracy Overall": "120"})
    assert response.status_code == 400 and "Must be from 0 to 100" in response.content.decode()
    assert client.get(url, {"half_width": "5", "items_per_participant": "25", "pilot": "999"}).status_code == 400
