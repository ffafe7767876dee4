"""benchmarks.sql gives back, from hand-written SQL, the instances the ORM would load."""

import pytest
from django.db import connection

from benchmarks.models import ContextChange, Item, Scene
from benchmarks.sql import columns, instances
from tests.factories import BenchmarkFactory, ItemFactory

pytestmark = pytest.mark.django_db

SQL = (
    f"SELECT {columns(Item, 'i')}, {columns(Scene, 'sc')}, {columns(ContextChange, 'ch')} "
    f"FROM {Item._meta.db_table} i LEFT JOIN {Scene._meta.db_table} sc ON sc.id = i.scene_id "
    f"LEFT JOIN {ContextChange._meta.db_table} ch ON ch.id = i.change_id WHERE i.id = %s"
)


def read(item_id):
    with connection.cursor() as cursor:
        cursor.execute(SQL, [item_id])
        return instances(cursor.fetchone(), Item, Scene, ContextChange)


def field_values(instance):
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def test_a_joined_row_becomes_the_instances_the_orm_loads():
    made = ItemFactory(answer_format="single", choices=["left", "right", "Not sure"], answers=["A"],
                       tags={"category": "location", "flip": "swap"})
    item, scene, change = read(made.pk)
    assert field_values(item) == field_values(Item.objects.get(pk=made.pk))  # JSON decoded, dates aware
    assert field_values(scene) == field_values(Scene.objects.get(pk=made.scene_id))
    assert field_values(change) == field_values(ContextChange.objects.get(pk=made.change_id))
    assert item.choices == ["left", "right", "Not sure"] and item.created_at.tzinfo is not None
    assert not item._state.adding and item._state.db == "default"


def test_nothing_matched_by_an_outer_join_reads_as_none():
    made = ItemFactory(change=None, scene=None, benchmark=BenchmarkFactory())
    item, scene, change = read(made.pk)
    assert (item.pk, item.scene_id, scene, change) == (made.pk, None, None, None)
