"""#33: release files written as a stream give the bytes the in-memory export gave for the same release
(JSONL, manifest, JSON, CSV, Parquet; the diff and the card), through a server-side cursor or keyset pages
(PgBouncer), in chunks smaller than the release; on S3 as a multipart upload; hashes computed as bytes go."""

import hashlib
import io
import json

import pyarrow.parquet as pq
import pytest
from django.db import connection

from benchmarks import services as benchmark_services
from benchmarks.models import Asset, AssetRole, Item, Release, Scene, WorldFrame
from benchmarks.releases import life, lines, stream
from tests.benchmarks import release_copies
from tests.benchmarks.test_storage_s3 import KEYS, bucket, s3_endpoint, s3_server  # noqa: F401 -- fixtures
from tests.factories import ChangeFactory, ItemFactory, SceneFactory

pytestmark = pytest.mark.django_db


def read(asset) -> bytes:
    with asset.file.open("rb") as handle:
        return handle.read()


def todays_freeze(benchmark, version: str, previous_lines: list[dict] | None) -> dict:
    """The in-memory export as it was before #33 (tests/benchmarks/release_copies.py), kept here as the
    reference the streamed bytes are compared with."""
    s = release_copies
    items = list(life.releasable_items(benchmark))
    without = {"require_consensus": False, "n_left_out_without_consensus": (
        Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).count() - len(items))}
    scene_ids = {i.scene_id for i in items if i.scene_id}
    frames_by_scene = {}
    for frame in WorldFrame.objects.filter(scene_id__in=scene_ids).select_related("anchor").order_by("pk"):
        frames_by_scene.setdefault(frame.scene_id, []).append(frame)
    released = [s.release_item_line(i, [f.text for f in frames_by_scene.get(i.scene_id, [])]) for i in items]
    scenes = Scene.objects.filter(pk__in=scene_ids).prefetch_related("scene_objects").order_by("external_id")
    assets = Asset.objects.filter(scene_id__in=scene_ids).exclude(role=AssetRole.EXPORT).select_related("scene")
    manifest = {
        "benchmark": benchmark.slug, "family": benchmark.family, "version": version, "n_items": len(items), **without,
        "assets": sorted(
            ({"scene_id": a.scene.external_id, "role": a.role, "path": lines.release_asset_path(a), "size": a.size,
              "sha256": a.sha256, "meta": a.meta} for a in assets),
            key=lambda entry: (entry["scene_id"], entry["role"], entry["path"])),
        "scenes": [life.scene_entry(sc, frames_by_scene.get(sc.pk, [])) for sc in scenes],
    }
    jsonl = "".join(lines.dumps(line) + "\n" for line in released).encode()
    read_back = [json.loads(line) for line in jsonl.split(b"\n") if line]  # the formats task read the JSONL
    return {
        "jsonl": jsonl,
        "manifest": json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=True).encode(),
        "json": s.format_bytes("json", read_back), "csv": s.format_bytes("csv", read_back),
        "parquet": s.format_bytes("parquet", read_back),
        "diff": s.release_diff(previous_lines, released) if previous_lines is not None else {},
        "card": s.dataset_card(released, [i.agreement for i in items if i.agreement is not None]) | without,
    }


@pytest.fixture
def benchmark():
    change = ChangeFactory(status="approved", raw_text="La chaise a été déplacée près de la fenêtre.")
    scene = change.scene
    WorldFrame.objects.create(scene=scene, anchor=scene.scene_objects.get(label="desk"), side="left",
                              text="The desk is to the left of the scene.")
    other_scene = SceneFactory(benchmark=scene.benchmark)
    other = ChangeFactory(scene=other_scene, status="approved", change_type="removal",
                          raw_text="The bookshelf has been removed\u2028from the room entirely.")
    benchmark_services.store_asset(scene, "topview_plain", "top.png", b"\x89PNG fake", meta={"w": 1})
    ItemFactory(change=change, external_id="hypo-001", agreement=0.75)
    ItemFactory(change=change, question="Combien d'objets, \"cités\", sont près de la fenêtre ?", answers=["2"],
                tags={"change_type": "movement", "question_type": ["Scale"], "split": "real"}, agreement=0.5)
    ItemFactory(change=other, question="Which object is now the tallest,\nin the room?", answers=["window", ""],
                tags={"change_type": "removal", "question_type": "Semantic"}, agreement=1 / 3)
    ItemFactory(change__scene__benchmark=scene.benchmark, answer_format="single", choices=["left", "right"],
                answers=["B"], question="Is the chair left or right of the desk now?")
    ItemFactory(change=change, status="approved", consensus="flagged", question="Left out for lack of consensus?")
    return scene.benchmark


def stream_and_compare(benchmark, django_capture_on_commit_callbacks, version="1.0.0", previous_lines=None):
    expected = todays_freeze(benchmark, version, previous_lines)
    with django_capture_on_commit_callbacks(execute=True):
        release = life.export_release(benchmark, version, None)
    release.refresh_from_db()
    files = life.release_files(release)
    for fmt in ("jsonl", "manifest", "json", "csv", "parquet"):
        content = read(files[fmt])
        assert content == expected[fmt], fmt
        assert files[fmt].size == len(content) and files[fmt].sha256 == hashlib.sha256(content).hexdigest(), fmt
    released = lines.release_lines(release)
    for fmt in ("json", "csv", "parquet"):  # the in-memory writer (the Hub's Parquet) gives the same bytes
        assert stream.format_bytes(fmt, released) == expected[fmt], fmt
    assert release.diff == expected["diff"]
    assert {key: release.card[key] for key in expected["card"]} == expected["card"]  # plus review's agreement
    assert release.items.count() == expected["card"]["n_items"]
    return release


def test_streamed_release_bytes_equal_the_in_memory_export(benchmark, django_capture_on_commit_callbacks):
    assert connection.vendor != "postgresql" or stream.server_side_cursors()
    stream_and_compare(benchmark, django_capture_on_commit_callbacks)
    # a second release: its diff (added, removed, changed) as the in-memory one said it
    first = Release.objects.get(benchmark=benchmark, version="1.0.0")
    previous_lines = lines.release_lines(first)
    item = Item.objects.get(external_id="hypo-001")
    item.question = "What is directly to the left of the chair now?"
    item.save()
    Item.objects.filter(question__startswith="Is the chair").update(status="draft")
    ItemFactory(change=item.change, question="A new question?")
    stream_and_compare(benchmark, django_capture_on_commit_callbacks, "1.1.0", previous_lines)


def test_chunks_smaller_than_the_release_and_keyset_pages_give_the_same_bytes(
        benchmark, django_capture_on_commit_callbacks, monkeypatch):
    """Two rows a chunk and a row group (many of each), and no server-side cursor (PGBOUNCER=1)."""
    monkeypatch.setattr(stream, "CHUNK_ROWS", 2)
    monkeypatch.setattr(stream, "ROW_GROUP_ROWS", 2)
    monkeypatch.setitem(connection.settings_dict, "DISABLE_SERVER_SIDE_CURSORS", True)
    assert not stream.server_side_cursors()
    pages = []
    real = stream.iterate_chunked

    def spy(queryset, chunk_size=2):
        for row in real(queryset, chunk_size):
            pages.append(row["pk"])
            yield row
    monkeypatch.setattr(stream, "iterate_chunked", spy)
    expected = todays_freeze(benchmark, "1.0.0", None)
    with django_capture_on_commit_callbacks(execute=True):
        release = life.export_release(benchmark, "1.0.0", None)
    release.refresh_from_db()
    files = life.release_files(release)
    for fmt in ("jsonl", "manifest", "json", "csv"):
        assert read(files[fmt]) == expected[fmt], fmt
    # Parquet: the same table, in row groups of two rows
    streamed = pq.ParquetFile(io.BytesIO(read(files["parquet"])))
    assert streamed.num_row_groups == 2
    assert streamed.read().equals(pq.read_table(io.BytesIO(expected["parquet"])))
    assert pages == sorted(pages) and len(pages) == 4


def test_keyset_pages_read_each_row_once_without_a_cursor(monkeypatch):
    ItemFactory.create_batch(5)
    monkeypatch.setitem(connection.settings_dict, "DISABLE_SERVER_SIDE_CURSORS", True)
    rows = list(stream.iterate_chunked(Item.objects.all(), chunk_size=2))
    assert [r.pk for r in rows] == sorted(Item.objects.values_list("pk", flat=True))


def test_harness_files_are_left_out_above_the_limit_and_the_card_says_why(
        benchmark, settings, django_capture_on_commit_callbacks):
    settings.RELEASE_HARNESS_MAX_ITEMS = 2
    with django_capture_on_commit_callbacks(execute=True):
        release = life.export_release(benchmark, "1.0.0", None)
    release.refresh_from_db()
    assert release.status == "ready"
    files = life.release_files(release)
    assert {"json", "csv", "parquet", "card"} <= set(files) and "lmms_eval" not in files
    assert "RELEASE_HARNESS_MAX_ITEMS" in release.card["not_written"]["lmms_eval"]


@pytest.mark.services
def test_on_s3_the_file_goes_up_as_a_multipart_upload_hashed_as_it_goes(bucket, settings):  # noqa: F811
    """Three parts of 5 MiB (S3's smallest) and a last one: never the whole file in one buffer."""
    block = bytes(range(256)) * 4096  # 1 MiB
    digest, written = hashlib.sha256(), []

    def write(out):
        for i in range(17):
            chunk = block[i:] + block[:i]
            digest.update(chunk)
            written.append(len(chunk))
            out.write(chunk)
    asset = stream.store_stream("big.jsonl", write, meta={"format": "jsonl"})
    assert asset.size == sum(written) and asset.sha256 == digest.hexdigest()
    head = bucket.head_object(Bucket="hypolab-test", Key=asset.file.name)
    assert head["ContentLength"] == asset.size
    assert head["ETag"].strip('"').endswith("-4")  # a multipart object's ETag names its part count
    assert hashlib.sha256(read(asset)).hexdigest() == asset.sha256


@pytest.mark.services
def test_on_s3_a_file_under_one_part_is_one_private_put(bucket, s3_endpoint):  # noqa: F811
    import urllib.error
    import urllib.request

    asset = stream.store_stream("small.jsonl", lambda out: out.write(b'{"id": "1"}\n' * 100))
    head = bucket.head_object(Bucket="hypolab-test", Key=asset.file.name)
    assert "-" not in head["ETag"] and head["ContentLength"] == asset.size == 1200
    with pytest.raises(urllib.error.HTTPError) as refused:  # private: no signature, no bytes
        urllib.request.urlopen(f"{s3_endpoint}/hypolab-test/{asset.file.name}", timeout=5)
    assert refused.value.code == 403


@pytest.mark.services
def test_a_failed_stream_to_s3_leaves_no_object_and_no_row(bucket):  # noqa: F811
    def write(out):
        out.write(b"x" * (6 << 20))
        raise RuntimeError("the database went away")
    with pytest.raises(RuntimeError):
        stream.store_stream("broken.jsonl", write)
    assert not bucket.list_objects_v2(Bucket="hypolab-test").get("Contents")
    assert not bucket.list_multipart_uploads(Bucket="hypolab-test").get("Uploads")
    assert not Asset.objects.exists()


def test_a_failed_local_stream_leaves_no_file(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path)}}}

    def write(out):
        out.write(b"half")
        raise RuntimeError("stopped")
    with pytest.raises(RuntimeError):
        stream.store_stream("broken.jsonl", write)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]
