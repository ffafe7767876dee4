"""Nothing skips review: what a generator writes arrives as drafts in the review queue with its
provenance (generator, version, seed, source states), through generate_items + import_items and
through the pipeline's generate stage alike; a published benchmark's file arrives approved and says
it is published."""

import json

import pytest
from django.core.management import call_command

from benchmarks.models import Item
from construction import pipeline
from construction.generators import m3verse, spatial457
from construction.generators.m3verse_language import unnatural
from core import roles
from review import services
from tests.construction.test_generators import _scene
from tests.construction.test_generators_paper import house
from tests.factories import BenchmarkFactory, UserFactory

pytestmark = pytest.mark.django_db


def _generate_m3(tmp_path, seed=4):
    before, after = house()
    (tmp_path / "before.json").write_text(json.dumps(before))
    (tmp_path / "after.json").write_text(json.dumps({"objects": after}))
    out = tmp_path / "house.jsonl"
    call_command("generate_items", "--family", "m3verse", "--scene-meta", str(tmp_path / "before.json"),
                 "--states", str(tmp_path / "after.json"), "--scene-id", "house_1", "--out", str(out),
                 "--seed", str(seed))
    return out


def test_generated_m3verse_items_are_drafts_in_the_review_queue_with_their_provenance(tmp_path):
    out = _generate_m3(tmp_path)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    call_command("create_benchmark", "gen-house", "--family", "m3verse")
    call_command("import_items", "--benchmark", "gen-house", str(out))
    items = Item.objects.filter(benchmark__slug="gen-house")
    assert items.count() == len(rows) and not items.filter(status=Item.Status.APPROVED).exists()
    assert {i.tags["state_type"] for i in items} == {"intra-state", "inter-states"}
    assert len({i.tags["subcategory"] for i in items}) >= 12
    for item in items:
        assert not any(unnatural(text) for text in (item.question, *item.choices)), item.question
        provenance = item.provenance
        assert provenance["source"] == "generated" and provenance["generator"] == "m3verse"
        assert provenance["version"] == m3verse.VERSION and provenance["seed"] == 4
        assert provenance["scene_id"] == "house_1" and len(provenance["states"]) == 2
        assert provenance["file"] == "house.jsonl" and "state_" in provenance["template"]
    reviewer = UserFactory(role=roles.REVIEWER)
    assert set(services.filtering_queue(reviewer)) == set(items)


def test_a_reviewed_generated_item_stays_approved_until_the_generator_changes_it(tmp_path):
    out = _generate_m3(tmp_path)
    call_command("create_benchmark", "gen-house", "--family", "m3verse")
    call_command("import_items", "--benchmark", "gen-house", str(out))
    item = Item.objects.filter(benchmark__slug="gen-house").order_by("pk").first()
    services.approve_item(item.pk, UserFactory(role=roles.REVIEWER), item.version)
    call_command("import_items", "--benchmark", "gen-house", str(out))  # the same file: left alone
    item.refresh_from_db()
    assert item.status == Item.Status.APPROVED
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    row = next(r for r in rows if r["question_id"] == item.external_id)
    row["question"] += " (reworded)"
    out.write_text(m3verse.write_jsonl(rows))
    call_command("import_items", "--benchmark", "gen-house", str(out))
    item.refresh_from_db()
    assert item.status == Item.Status.DRAFT and item.question.endswith("(reworded)")


def test_a_published_file_arrives_approved_and_says_it_is_published(tmp_path):
    row = {"scene_id": "scene_800", "category": "object_changes", "question_id": "scene_800-1",
           "state_type": "inter-states", "question": "Which objects became visible?",
           "options": ["A. Apple", "B. Mug"], "answer": ["A"], "question_type": "single_choice",
           "subcategory": "new_visible_objects", "generator_name": "object_changes", "hallucination": False,
           "capabilities": ["temporal understanding"]}
    path = tmp_path / "published.jsonl"
    path.write_text(json.dumps(row) + "\n")
    call_command("create_benchmark", "m3-pub", "--family", "m3verse")
    call_command("import_items", "--benchmark", "m3-pub", str(path))
    item = Item.objects.get(benchmark__slug="m3-pub")
    assert item.status == Item.Status.APPROVED and item.provenance["source"] == "published"


def test_generated_spatial457_items_are_drafts_too(tmp_path):
    data = spatial457.generate(_scene(), "L3_2d_spatial", seed=2)
    assert data["provenance"]["source"] == "generated" and data["provenance"]["generator"] == "spatial457"
    path = tmp_path / "L3_2d_spatial.json"
    path.write_text(json.dumps(data))
    call_command("create_benchmark", "gen-457", "--family", "spatial457")
    call_command("import_items", "--benchmark", "gen-457", str(path))
    items = Item.objects.filter(benchmark__slug="gen-457")
    assert items.count() == len(data["questions"])
    assert {i.status for i in items} == {Item.Status.DRAFT}
    assert {i.provenance["seed"] for i in items} == {2}


def generated_by_stage(slug, capture):
    """The items an admin's generate stage writes on a small house pair, and that admin."""
    admin = UserFactory(role=roles.ADMIN)
    benchmark = BenchmarkFactory(slug=slug, family="m3verse")
    before, after = house()
    stage = pipeline.add_stage(benchmark, admin, "generate",
                               {"seed": 1, "scenes": {"scene_id": "house_1", "states": [before, after]}})
    with capture(execute=True):
        pipeline.run_stage(stage, admin)
    return admin, Item.objects.filter(benchmark=benchmark)


def test_the_pipelines_generate_stage_leaves_drafts(django_capture_on_commit_callbacks):
    _, items = generated_by_stage("gen-m3-stage", django_capture_on_commit_callbacks)
    assert items.exists() and {i.status for i in items} == {Item.Status.DRAFT}
    assert {i.provenance["generator"] for i in items} == {"m3verse"}


def test_whoever_ran_the_generate_stage_may_review_what_it_wrote(django_capture_on_commit_callbacks):
    admin, items = generated_by_stage("gen-m3-own", django_capture_on_commit_callbacks)
    assert items.exists() and set(services.filtering_queue(admin)) == set(items)
