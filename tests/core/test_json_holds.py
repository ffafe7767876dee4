"""List-valued tags are filtered the same way on the embedded default (SQLite) and on PostgreSQL: Django's
JSON `contains` is PostgreSQL-only, so a run with a subset of Hypo3D's question types failed on the demo's
database with NotSupportedError (core.sql.HoldsElement)."""

import pytest
from django.core.files.base import ContentFile

from benchmarks.models import Asset, AssetRole, Item
from modeleval.prompting import visual_inputs
from modeleval.prompting.visual_inputs import Kind
from modeleval.runs import run_options
from tests.factories import ItemFactory, SceneFactory

pytestmark = pytest.mark.django_db


def _external_ids(items):
    return sorted(items.values_list("external_id", flat=True))


def test_a_list_tag_holds_its_elements_and_nothing_else():
    scene = SceneFactory()
    kw = {"change__scene": scene}
    ItemFactory(external_id="dir", tags={"question_type": ["Direction"]}, **kw)
    ItemFactory(external_id="dir-sem", tags={"question_type": ["Direction", "Semantic"]}, **kw)
    ItemFactory(external_id="scalar", tags={"question_type": "Direction"}, **kw)
    ItemFactory(external_id="object", tags={"question_type": {"Direction": 1}}, **kw)
    ItemFactory(external_id="none", tags={}, **kw)
    items = Item.objects.filter(scene=scene)

    assert _external_ids(items.filter(tags__question_type__holds="Direction")) == ["dir", "dir-sem"]
    assert _external_ids(items.filter(tags__question_type__holds="Semantic")) == ["dir-sem"]
    assert _external_ids(items.filter(tags__question_type__holds="Scale")) == []


def test_a_subset_selects_list_and_scalar_tags_on_this_database():
    scene = SceneFactory()
    kw = {"change__scene": scene}
    ItemFactory(external_id="a", tags={"question_type": ["Direction"], "level": "L1_single"}, **kw)
    ItemFactory(external_id="b", tags={"question_type": ["Semantic", "Scale"], "level": "L2_objects"}, **kw)
    ItemFactory(external_id="c", tags={"question_type": ["Semantic"], "level": "L1_single"}, **kw)
    items = Item.objects.filter(scene=scene)

    by_type = run_options.subset_filter(items, run_options.checked_subset({"question_type": ["Direction", "Scale"]}))
    assert _external_ids(by_type) == ["a", "b"]
    by_level = run_options.subset_filter(items, run_options.checked_subset({"level": ["L1_single"]}))
    assert _external_ids(by_level) == ["a", "c"]
    both = run_options.subset_filter(items, {"level": ["L1_single"], "question_type": ["Semantic"]})
    assert _external_ids(both) == ["c"]


def test_aligned_and_plain_top_views_are_told_apart():
    aligned, plain, unmarked = SceneFactory(), SceneFactory(), SceneFactory()
    for scene, meta in ((aligned, {"aligned": True}), (plain, {"aligned": False}), (unmarked, {})):
        Asset.objects.create(scene=scene, role=AssetRole.TOPVIEW_PLAIN, meta=meta, size=3,
                             file=ContentFile(b"png", name="top.png"))
    ids = [aligned.pk, plain.pk, unmarked.pk]

    found = visual_inputs.top_view_maps(ids, Kind.TOP_VIEW_PLAIN, aligned=True).values_list("scene_id", flat=True)
    assert list(found) == [aligned.pk]
    others = visual_inputs.top_view_maps(ids, Kind.TOP_VIEW_PLAIN, aligned=False).values_list("scene_id", flat=True)
    assert sorted(others) == sorted([plain.pk, unmarked.pk])
