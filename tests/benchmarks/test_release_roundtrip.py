"""Versioned releases: the formats task (JSON, CSV, Parquet), the diff against the previous release, the dataset card,
and export -> import -> export giving the same bytes."""

import csv
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from benchmarks import services as benchmark_services
from benchmarks.models import Asset, Benchmark, Release, WorldFrame
from benchmarks.releases import life, stream
from core import roles
from core.jobs import fail_stalled_jobs, start_job
from tests.factories import ChangeFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def read(asset) -> bytes:
    with asset.file.open("rb") as handle:
        return handle.read()


@pytest.fixture
def benchmark():
    change = ChangeFactory(status="approved", refined_text="The chair now stands by the window, next to the shelf.")
    scene = change.scene
    anchor = scene.scene_objects.get(label="desk")
    WorldFrame.objects.create(scene=scene, anchor=anchor, side="left", text="The desk is to the left of the scene.")
    ItemFactory(change=change, external_id="hypo-001")
    ItemFactory(change=change, question="How many objects are now next to the window?", answers=["2"],
                tags={"change_type": "movement", "question_type": ["Scale"], "split": "real"})
    other = ChangeFactory(scene=scene, status="approved", change_type="removal",
                          raw_text="The bookshelf has been removed from the room entirely.")
    ItemFactory(change=other, question="Which object is now the tallest in the room?", answers=["window", "the window"],
                tags={"change_type": "removal", "question_type": ["Semantic"]})
    ItemFactory(change__scene__benchmark=scene.benchmark, answer_format="single", choices=["left", "right"],
                answers=["B"], question="Is the chair left or right of the desk now?")
    return scene.benchmark


def test_formats_task_writes_json_csv_parquet_and_card_with_progress(benchmark, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        release = life.export_release(benchmark, "1.0.0", None)
    release.refresh_from_db()
    # exported as the release's job (core.Job): one step for the items, one a file, with what it wrote as its report
    assert release.status == "ready" and release.job.status == "done" and release.job.kind == "release_export"
    assert release.job.done == release.job.total == 8 and release.job.report["files"][0] == "card"
    files = life.release_files(release)
    assert set(files) == {"jsonl", "manifest", "json", "csv", "parquet", "published", "vlmevalkit", "lmms_eval", "card"}
    lines = [json.loads(line) for line in read(files["jsonl"]).decode().splitlines()]
    assert json.loads(read(files["json"])) == lines
    rows = list(csv.DictReader(io.StringIO(read(files["csv"]).decode())))
    assert [r["id"] for r in rows] == [line["id"] for line in lines]
    assert json.loads(rows[2]["answers"]) == ["window", "the window"]
    table = pq.read_table(io.BytesIO(read(files["parquet"])))
    assert table.num_rows == 4 and table.schema.field("answers").type == pa.list_(pa.string())
    rows = table.to_pylist()
    assert [r["id"] for r in rows] == [line["id"] for line in lines]
    assert rows[2]["answers"] == ["window", "the window"] and rows[0]["world_frame"] == lines[0]["world_frame"]
    assert [json.loads(r["tags"]) for r in rows] == [line["tags"] for line in lines]
    # No timestamps inside: writing the same lines again gives the same bytes.
    assert stream.format_bytes("parquet", lines) == read(files["parquet"])
    card = json.loads(read(files["card"]))
    assert card["n_items"] == 4 and card["by_question_type"] == {"Direction": 2, "Scale": 1, "Semantic": 1}
    assert card["by_split"] == {"real": 1, "test": 3}
    # Distinct changes: 11, 9 and 15 words (the factory's default change) -> 35 / 3.
    assert card["words_per_change"] == 11.67
    # Writing the formats again changes nothing; the task's message delivered again runs nothing.
    life.write_release_formats(release.pk)
    from benchmarks.tasks import export_release
    export_release(release.pk, release.job_id)
    assert release.files.count() == 7


def test_an_export_whose_worker_died_is_exported_again_as_the_same_job(benchmark,
                                                                          django_capture_on_commit_callbacks):
    release = life.export_release(benchmark, "1.0.0", None)  # asked for; its task is never sent here
    assert release.status == "exporting" and release.items_file is None and release.job.status == "queued"
    start_job(release.job_id)
    assert fail_stalled_jobs(0) == [release.job_id]  # its worker died: the sweep fails the job
    with django_capture_on_commit_callbacks(execute=True):
        again = life.export_release(benchmark, "1.0.0", None)  # not a 409: the same release and job, run
    again.refresh_from_db()
    assert again.pk == release.pk and again.job_id == release.job_id and again.status == "ready"
    assert again.job.status == "done" and again.job.done == again.job.total == 8 and again.items.count() == 4


def test_release_diff_against_the_previous_version(benchmark):
    first = life.export_release(benchmark, "1.0.0", None, inline=True)
    items = list(benchmark.items.order_by("pk"))
    items[0].answers = ["the window"]
    items[0].save()
    items[1].status = "rejected"
    items[1].save()
    added = ItemFactory(change=items[0].change, question="What is now closest to the desk in the room?")
    second = life.export_release(benchmark, "1.1.0", None, inline=True)
    assert second.previous == first
    assert second.diff == {"added": [str(added.pk)], "removed": [str(items[1].pk)], "changed": [str(items[0].pk)]}


def add_assets(benchmark) -> dict[str, bytes]:
    """A top view and a metadata file on the first scene, as release paths -> bytes."""
    scene = benchmark.scenes.order_by("pk").first()
    files = {"topview_semantic": (b"\x89PNG not really", {"bounds": [0, 0, 4, 3]}), "scene_meta": (b'{"ops": []}', {})}
    for role, (content, meta) in files.items():
        benchmark_services.store_asset(scene, role, f"{role}.bin", content, meta)
    return {f"{scene.external_id}/{role}/{role}.bin": content for role, (content, _) in files.items()}


def test_export_import_export_is_byte_identical(benchmark, tmp_path):
    assets = add_assets(benchmark)
    call_command("export_release", benchmark.slug, "1.0.0", out=str(tmp_path / "first"))
    names = ["items.jsonl", "manifest.json", "items.json", "items.csv", "items.parquet", "card.json"]
    first = {name: (tmp_path / "first" / name).read_bytes() for name in names}
    assert {path: (tmp_path / "first" / "assets" / path).read_bytes() for path in assets} == assets
    slug = benchmark.slug
    Benchmark.objects.filter(pk=benchmark.pk).delete()

    call_command("import_release", str(tmp_path / "first"))
    imported = Benchmark.objects.get(slug=slug)
    assert imported.items.count() == 4 and imported.scenes.count() == 2
    assert WorldFrame.objects.filter(scene__benchmark=imported).count() == 1
    copies = Asset.objects.filter(scene__benchmark=imported)
    assert sorted((a.role, read(a), a.meta) for a in copies) == [
        ("scene_meta", b'{"ops": []}', {}), ("topview_semantic", b"\x89PNG not really", {"bounds": [0, 0, 4, 3]})]
    release = Release.objects.get(benchmark=imported)  # exported again by the import, every file
    assert release.status == "ready" and release.job.status == "done"
    files = life.release_files(release)
    again = {"items.jsonl": read(files["jsonl"]), "manifest.json": read(files["manifest"]),
             "items.json": read(files["json"]), "items.csv": read(files["csv"]),
             "items.parquet": read(files["parquet"]), "card.json": read(files["card"])}
    assert again == first


def test_export_command_writes_a_datasets_folder_with_named_splits(benchmark, tmp_path):
    call_command("export_release", benchmark.slug, "1.0.0", out=str(tmp_path))
    real = pq.read_table(tmp_path / "data" / "real-00000-of-00001.parquet").to_pylist()
    test = pq.read_table(tmp_path / "data" / "test-00000-of-00001.parquet").to_pylist()
    assert len(real) == 1 and real[0]["question"] == "How many objects are now next to the window?"
    assert len(test) == 3
    readme = (tmp_path / "README.md").read_text()
    assert "  - split: real\n    path: data/real-*.parquet" in readme and "path: data/test-*.parquet" in readme


def test_import_into_a_new_slug_keeps_the_items_file_identical(benchmark):
    release = life.export_release(benchmark, "2.0.0", None, inline=True)
    copy = life.import_release(read(release.items_file), read(release.manifest_file), None,
                                             slug="copy-of-bench")
    assert copy.benchmark.slug == "copy-of-bench" and copy.version == "2.0.0"
    assert read(copy.items_file) == read(release.items_file)


def test_import_refuses_an_existing_slug_or_a_broken_file(benchmark):
    release = life.export_release(benchmark, "1.0.0", None, inline=True)
    items, manifest = read(release.items_file), read(release.manifest_file)
    before = Benchmark.objects.count()
    with pytest.raises(life.Conflict) as conflict:
        life.import_release(items, manifest, None)
    assert conflict.value.field == "slug"
    with pytest.raises(life.DomainError) as broken:
        life.import_release(items[: len(items) // 2], manifest, None, slug="half")
    assert broken.value.field == "file"
    assert Benchmark.objects.count() == before


@pytest.mark.parametrize("damage", ["changed", "missing"])
def test_import_refuses_a_changed_or_missing_asset_and_writes_nothing(benchmark, tmp_path, damage):
    path = next(iter(add_assets(benchmark)))
    call_command("export_release", benchmark.slug, "1.0.0", out=str(tmp_path))
    asset_file = tmp_path / "assets" / path
    if damage == "changed":
        asset_file.write_bytes(b"other bytes")
    else:
        asset_file.unlink()
    counts = (Benchmark.objects.count(), Asset.objects.count())
    stored = sorted(p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file())

    def read_asset(release_path):
        file = tmp_path / "assets" / release_path
        return file.read_bytes() if file.exists() else None

    with pytest.raises(life.DomainError) as refused:
        life.import_release((tmp_path / "items.jsonl").read_bytes(),
                                          (tmp_path / "manifest.json").read_bytes(), None, slug="copy",
                                          read_asset=read_asset)
    assert refused.value.field == "assets" and path in refused.value.message
    assert (Benchmark.objects.count(), Asset.objects.count()) == counts
    assert sorted(p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()) == stored
    with pytest.raises(CommandError, match=path):
        call_command("import_release", str(tmp_path), slug="copy")


def test_release_detail_api_shows_progress_files_and_diff(benchmark, client, django_capture_on_commit_callbacks):
    client.force_login(UserFactory(role=roles.ADMIN))
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post("/api/v1/releases/", {"benchmark": benchmark.slug, "version": "1.0.0"},
                              content_type="application/json")
    assert created.status_code == 201, created.json()
    detail = client.get(f"/api/v1/releases/{created.json()['id']}/").json()
    assert detail["status"] == "ready" and detail["progress"] == 100 and detail["job"]
    job = client.get(f"/api/v1/jobs/{detail['job']}/").json()  # the one job API shows it
    assert job["status"] == "done" and job["kind"] == "release_export"
    assert set(detail["files"]) == {"jsonl", "manifest", "json", "csv", "parquet", "published", "vlmevalkit", "lmms_eval", "card"}
    assert detail["files"]["lmms_eval"]["label"] == "lmms-eval"  # the page's name for it, not its key
    assert detail["card"]["n_items"] == 4 and detail["previous"] is None


def test_release_page_shows_files_diff_and_card(benchmark, client, django_capture_on_commit_callbacks):
    client.force_login(UserFactory(role=roles.ADMIN))
    life.export_release(benchmark, "1.0.0", None, inline=True)
    with django_capture_on_commit_callbacks(execute=True):
        release = life.export_release(benchmark, "1.0.1", None)
    page = client.get(f"/releases/{release.pk}/").content.decode()
    assert 'id="release-files"' in page and ">csv</a>" in page and "Ready" in page
    assert "since v1.0.0" in page and "0 added · 0 removed · 0 changed" in page
    manage = client.get(f"/manage/{benchmark.slug}/").content.decode()
    assert f'href="/releases/{release.pk}/"' in manage and 'id="dedup-form"' in manage
