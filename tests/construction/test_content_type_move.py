"""PipelineStage's content type follows the model from review to construction (construction 0002),
on a database made before the move."""

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_content_type_cache():
    yield
    ContentType.objects.clear_cache()  # these tests make and drop rows the cache may have seen

move = importlib.import_module("construction.migrations.0002_pipelinestage_content_type")


def test_review_s_content_type_of_the_stage_becomes_construction_s_with_its_permissions():
    ContentType.objects.filter(model="pipelinestage").delete()
    old = ContentType.objects.create(app_label="review", model="pipelinestage")
    permission = Permission.objects.create(content_type=old, codename="change_pipelinestage", name="Can change")
    move.move_content_type(apps, None)
    moved = ContentType.objects.get(model="pipelinestage")
    assert (moved.pk, moved.app_label) == (old.pk, "construction")
    assert Permission.objects.get(pk=permission.pk).content_type == moved
    move.move_content_type_back(apps, None)
    assert ContentType.objects.get(pk=old.pk).app_label == "review"


def test_a_stale_one_beside_construction_s_own_is_dropped():
    ContentType.objects.get_or_create(app_label="construction", model="pipelinestage")
    ContentType.objects.create(app_label="review", model="pipelinestage")
    move.move_content_type(apps, None)
    assert list(ContentType.objects.filter(model="pipelinestage").values_list("app_label", flat=True)) == [
        "construction"]
