"""Releases carry a change's geometry (#47): each line of an item whose change has an edit carries
`change_geometry` (the objects, their transforms, added boxes, the derived answer and whether it agreed, the
after-state's files), the after-state files travel as release assets named by the change's release key, the
fixed-column formats and the Hugging Face card get the columns only in a release that carries geometry, and
export -> import -> export gives the same bytes, the imported change with its edit and after-state."""

import csv
import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from benchmarks.models import Benchmark, ContextChange, Release
from benchmarks.releases import life
from benchmarks.releases.geometry import change_key
from benchmarks.releases.hub import datasets_layout
from benchmarks.selectors import after_state_assets
from scenes import tasks
from tests.benchmarks.after_state_rooms import LEFT_OF_BED, moved_chair, scanned_room
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, SceneFactory

pytestmark = pytest.mark.django_db

NAMES = ["items.jsonl", "manifest.json", "items.json", "items.csv", "items.parquet", "card.json"]


def read(asset) -> bytes:
    with asset.file.open("rb") as handle:
        return handle.read()


@pytest.fixture
def benchmark():
    scene = scanned_room(SceneFactory(benchmark=BenchmarkFactory(family="hypo3d"), object_labels=[]))
    change = moved_chair(scene, status="approved")
    ItemFactory(change=change, question="What is the direction of the chair relative to the bed?",
                answers=["to the left"])
    ItemFactory(change=change, question="Which is larger, the bed or the desk?", answers=["desk"])
    plain = ChangeFactory(scene=scene, status="approved", change_type="removal",
                          raw_text="The lamp has been removed from the desk.")
    ItemFactory(change=plain, question="How many lamps are left in the room?", answers=["0"],
                tags={"change_type": "removal", "question_type": ["Semantic"]})
    tasks.make_after_state(change.pk)
    return scene.benchmark


def lines_of(release) -> list[dict]:
    return [json.loads(line) for line in read(release.items_file).decode().splitlines()]


def test_lines_of_a_change_with_an_edit_carry_its_geometry_and_after_state_files(benchmark):
    change = ContextChange.objects.get(edit__isnull=False)
    release = life.export_release(benchmark, "1.0.0", None, inline=True)
    lines = {line["question"]: line for line in lines_of(release)}
    direction = lines["What is the direction of the chair relative to the bed?"]["change_geometry"]
    key = change_key(change.scene.external_id, "movement", LEFT_OF_BED, LEFT_OF_BED)
    assert direction["change"] == key and direction["object_ids"] == [3]
    assert direction["edit"] == change.edit and direction["edit"]["objects"][0]["translation"] == [-3.0, 2.7, 0.0]
    assert direction["edit"]["added"] == [] and direction["edit"]["world"]["side"] == "left"
    assert (direction["derived_answer"], direction["agrees"]) == ("left", True)
    larger = lines["Which is larger, the bed or the desk?"]["change_geometry"]
    assert (larger["derived_answer"], larger["agrees"]) == ("bed", False)
    assert "change_geometry" not in lines["How many lamps are left in the room?"]  # no edit: as before

    # the after-state's files are release assets, named by the change's key in the manifest
    manifest = json.loads(read(release.manifest_file))
    after = {e["role"]: e for e in manifest["assets"] if "after_state" in e["meta"]}
    assert sorted(after) == ["topview_plain", "topview_semantic", "viewer_points"]
    assert {e["meta"]["after_state"] for e in after.values()} == {key}
    assert direction["after_state"] == {role: e["path"] for role, e in after.items()}
    assert set(life.release_assets(release)) >= set(direction["after_state"].values())
    assert release.card["n_items_with_geometry"] == 2

    # the fixed-column formats: a change_geometry column, empty for the change without an edit
    files = life.release_files(release)
    rows = {r["question"]: r for r in csv.DictReader(io.StringIO(read(files["csv"]).decode()))}
    assert json.loads(rows["Which is larger, the bed or the desk?"]["change_geometry"]) == larger
    assert rows["How many lamps are left in the room?"]["change_geometry"] == ""
    table = pq.read_table(io.BytesIO(read(files["parquet"]))).to_pylist()
    assert sorted(r["change_geometry"] is None for r in table) == [False, False, True]

    # Hypo3D's published shape: the change's geometry beside its text, each question's derived answer
    published = json.loads(read(files["published"]))[change.scene.external_id]
    moved, removed = sorted(published, key=lambda entry: "change_geometry" not in entry)
    assert moved["change_geometry"] == {"object_ids": [3], "edit": change.edit} and "change_geometry" not in removed
    assert [(qa["derived_answer"], qa["agrees"]) for qa in moved["questions_answers"]] == [("left", True),
                                                                                            ("bed", False)]
    assert all("derived_answer" not in qa for qa in removed["questions_answers"])


def test_a_stale_after_state_is_not_released(benchmark):
    change = ContextChange.objects.get(edit__isnull=False)
    change.edit = {**change.edit, "objects": [{**change.edit["objects"][0], "translation": [-3.0, 2.6, 0.0]}]}
    change.save(update_fields=["edit"])  # not built again yet: its files are an older edit's
    release = life.export_release(benchmark, "1.0.0", None, inline=True)
    assert not [e for e in json.loads(read(release.manifest_file))["assets"] if "after_state" in e["meta"]]
    assert all(line.get("change_geometry", {}).get("after_state") in (None, {}) for line in lines_of(release))


def test_the_dataset_card_and_parquet_name_the_geometry_columns(benchmark):
    release = life.export_release(benchmark, "1.0.0", None, inline=True)
    files = datasets_layout(release)
    rows = pq.read_table(io.BytesIO(files["data/test-00000-of-00001.parquet"])).to_pylist()
    with_edit = [r for r in rows if r["change_geometry"] is not None]
    assert len(with_edit) == 2 and all(r["image_after_state"]["bytes"].startswith(b"\x89PNG") for r in with_edit)
    assert [r["image_after_state"] for r in rows if r["change_geometry"] is None] == [None]
    readme = files["README.md"].decode()
    assert "name: change_geometry" in readme and "name: image_after_state" in readme


def test_a_release_without_geometry_has_no_geometry_columns():
    item = ItemFactory()
    release = life.export_release(item.benchmark, "1.0.0", None, inline=True)
    assert "change_geometry" not in lines_of(release)[0] and "n_items_with_geometry" not in release.card
    files = life.release_files(release)
    assert "change_geometry" not in read(files["csv"]).decode().splitlines()[0]
    assert "change_geometry" not in pq.read_table(io.BytesIO(read(files["parquet"]))).column_names
    assert "change_geometry" not in datasets_layout(release)["README.md"].decode()


def test_export_import_export_keeps_the_geometry_and_the_after_state_byte_identical(benchmark, tmp_path):
    call_command("export_release", benchmark.slug, "1.0.0", out=str(tmp_path / "first"))
    first = {name: (tmp_path / "first" / name).read_bytes() for name in NAMES}
    edit = ContextChange.objects.get(edit__isnull=False).edit
    slug = benchmark.slug
    Benchmark.objects.filter(pk=benchmark.pk).delete()

    call_command("import_release", str(tmp_path / "first"))
    imported = Benchmark.objects.get(slug=slug)
    change = ContextChange.objects.get(scene__benchmark=imported, edit__isnull=False)
    assert change.edit == edit
    assets = after_state_assets(change)  # the imported files are the imported change's after-state
    assert sorted(assets) == ["topview_plain", "topview_semantic", "viewer_points"]
    assert {a.meta["after_state"] for a in assets.values()} == {change.pk}
    release = Release.objects.get(benchmark=imported)
    files = life.release_files(release)
    again = {"items.jsonl": read(files["jsonl"]), "manifest.json": read(files["manifest"]),
             "items.json": read(files["json"]), "items.csv": read(files["csv"]),
             "items.parquet": read(files["parquet"]), "card.json": read(files["card"])}
    assert again == first
