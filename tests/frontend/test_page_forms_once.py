"""A page form sent twice (a double click, a resent form) writes once: the manage page's study and run
forms carry a `form_key`, and a second submission of the same rendering goes where the first went."""

import re

import pytest
from django.test import Client

from core import roles
from humaneval.models import Study
from modeleval import services as modeleval_services
from modeleval.models import Run
from tests.factories import ItemFactory, UserFactory
from tests.together import fire


def form_key(client, slug) -> str:
    page = client.get(f"/manage/{slug}/").content.decode()
    return re.search(r'name="form_key" value="([0-9a-f]+)"', page).group(1)


def signed_in(user) -> Client:
    """A client of its own, so that each of the concurrent launches below has one."""
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_same_study_form_sent_twice_makes_one_study():
    item = ItemFactory()
    client = signed_in(UserFactory(role=roles.ADMIN))
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
    client = signed_in(UserFactory(role=roles.ADMIN))
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
    form = {"model": model.pk, "batch_size": 8, "repeats": 1, "form_key": form_key(signed_in(admin), slug)}
    answers = fire(lambda _: signed_in(admin).post(f"/manage/{slug}/runs/", form), 8)
    assert all(answer.status_code in (302, 409) for answer in answers)
    assert Run.objects.filter(benchmark=item.benchmark).count() == 1
