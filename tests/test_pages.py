"""Every page renders for its role and refuses the others."""

import pytest

from annotation import services as annotation_services
from benchmarks import roles
from tests.factories import ChangeFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_home_page_shows_crowd_links_to_admins(client):
    item = ItemFactory()
    annotation_services.create_campaign(item.benchmark, "Moves", "movement", [item.scene])
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get("/").content.decode()
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in page
    assert f"/manage/{item.benchmark.slug}/" in page


def test_anonymous_home_page_offers_login(client):
    assert b"Log in" in client.get("/").content


@pytest.mark.parametrize("role", [roles.ADMIN, roles.REVIEWER])
def test_review_pages_render_for_reviewers_and_admins(client, role):
    change = ChangeFactory()
    client.force_login(UserFactory(role=role))
    queue = client.get("/review/")
    assert queue.status_code == 200
    assert b"<title>Review queue \xc2\xb7 HypoLab</title>" in queue.content
    page = client.get(f"/review/changes/{change.pk}/")
    assert page.status_code == 200 and change.raw_text.encode() in page.content


def test_admin_pages_render(client):
    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    assert client.get(f"/manage/{item.benchmark.slug}/").status_code == 200
    assert client.get(f"/results/{item.benchmark.slug}/").status_code == 200
    assert client.get("/api/v1/schema/").status_code == 200


@pytest.mark.parametrize("url", ["/review/", "/manage/{slug}/", "/results/{slug}/"])
def test_annotators_are_refused_staff_pages(client, url):
    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ANNOTATOR))
    assert client.get(url.format(slug=item.benchmark.slug)).status_code == 403


def test_bad_study_form_is_a_400_with_the_field(client):
    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.post(f"/manage/{item.benchmark.slug}/studies/", {"name": "", "items": [item.pk]})
    assert page.status_code == 400 and b"name: Give the study a name." in page.content


def test_bad_release_form_is_a_400_with_the_field(client):
    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.post(f"/manage/{item.benchmark.slug}/releases/", {"version": "latest"})
    assert page.status_code == 400 and b"version: Use a version like 1.0.0" in page.content


def test_run_form_launches_with_repeats_and_a_protocol(client):
    from modeleval.models import Run
    from modeleval.services import ensure_baseline_model

    item = ItemFactory(answer_format="single", choices=["left", "right"], answers=["A"])
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.post(f"/manage/{item.benchmark.slug}/runs/", {
        "model": ensure_baseline_model().pk, "batch_size": 4, "repeats": 2, "circular": "on"})
    run = Run.objects.get(benchmark=item.benchmark)
    assert page.status_code == 302 and run.repeats == 2 and run.protocol == {"circular": True, "flip": False}


def test_bad_run_form_is_a_400_with_the_field(client):
    from modeleval.services import ensure_baseline_model

    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.post(f"/manage/{item.benchmark.slug}/runs/", {
        "model": ensure_baseline_model().pk, "repeats": "0"})
    assert page.status_code == 400 and b"repeats:" in page.content
