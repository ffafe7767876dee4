"""A page form sent twice (a double click, a resent form) writes once: the manage page's study and run
forms carry a `form_key`, and a second submission of the same rendering goes where the first went."""

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections
from django.test import Client

from core import roles
from humaneval.models import Study
from modeleval import services as modeleval_services
from modeleval.models import Run
from tests.factories import ItemFactory, UserFactory


def form_key(client, slug) -> str:
    page = client.get(f"/manage/{slug}/").content.decode()
    return re.search(r'name="form_key" value="([0-9a-f]+)"', page).group(1)


@pytest.mark.django_db
def test_the_same_study_form_sent_twice_makes_one_study():
    item = ItemFactory()
    admin = UserFactory(role=roles.ADMIN)
    client = Client()
    client.force_login(admin)
    slug = item.benchmark.slug
    form = {"name": "Pilot", "items": [item.pk], "seconds_per_item": 60, "seconds_per_session": 600,
            "form_key": form_key(client, slug)}
    first = client.post(f"/manage/{slug}/studies/", form)
    second = client.post(f"/manage/{slug}/studies/", form)
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"]
    assert Study.objects.filter(benchmark=item.benchmark).count() == 1
    # a fresh rendering of the form is a new study
    client.post(f"/manage/{slug}/studies/", {**form, "name": "Second", "form_key": form_key(client, slug)})
    assert Study.objects.filter(benchmark=item.benchmark).count() == 2


@pytest.mark.django_db
def test_a_refused_form_can_be_corrected_and_sent_again_with_its_key():
    item = ItemFactory()
    admin = UserFactory(role=roles.ADMIN)
    client = Client()
    client.force_login(admin)
    slug = item.benchmark.slug
    form = {"name": "", "items": [item.pk], "form_key": form_key(client, slug)}
    assert client.post(f"/manage/{slug}/studies/", form).status_code == 400
    assert client.post(f"/manage/{slug}/studies/", {**form, "name": "Pilot"}).status_code == 302
    assert Study.objects.filter(benchmark=item.benchmark).count() == 1


@pytest.mark.django_db(transaction=True)
def test_eight_concurrent_run_launches_of_one_form_make_one_run():
    item = ItemFactory()
    admin = UserFactory(role=roles.ADMIN)
    model = modeleval_services.ensure_baseline_model()
    slug = item.benchmark.slug
    client = Client()
    client.force_login(admin)
    form = {"model": model.pk, "batch_size": 8, "repeats": 1, "form_key": form_key(client, slug)}

    def launch(_):
        try:
            own = Client()
            own.force_login(admin)
            return own.post(f"/manage/{slug}/runs/", form)
        finally:
            connections.close_all()  # this thread's connection, so the test database can be dropped

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(launch, range(8)))
    assert all(answer.status_code in (302, 409) for answer in answers)
    assert Run.objects.filter(benchmark=item.benchmark).count() == 1
