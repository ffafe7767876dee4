"""A release's life: one verb exports it (export_release), as one core.Job that freezes the approved
items and writes every file (the lines: lines.py; streamed: stream.py); a release's files and assets;
importing an exported release; marking an export failed."""

import hashlib
import json
import re
from collections.abc import Callable
from functools import partial
from pathlib import PurePosixPath

from django.db import IntegrityError, transaction
from django.dispatch import Signal

from core.errors import Conflict, DomainError, NotFound
from core.jobs import advance_job, beat_job, fail_job, finish_job, job_cancelled, request_job, running_job
from core.models import Job

from .. import dispatch
from ..models import Asset, AssetRole, Benchmark, ContextChange, Item, Release, Scene, SceneObject, WorldFrame
from ..services import store_asset
from . import geometry as geo
from .harness import HARNESS_FORMATS, harness_file
from .lines import release_asset_path
from .published import published_companions
from .stream import (
    FORMATS,
    frames_for,
    freeze_lines,
    iter_release_lines,
    store_stream,
    streamed_diff,
    write_release_format,
)

# A release freezes the approved items (minus those flagged for lack of consensus) as one JSONL
# file plus a manifest of scenes and assets, both written at once; the same job then derives JSON, CSV
# and Parquet from the JSONL (the formats the Hugging Face `datasets` json/csv/parquet loaders read), the
# published shape, the harness files and a dataset card.
# Lines are keyed by a stable release id, so exporting an imported release gives the same bytes.

VERSION_PATTERN = re.compile(r"^\d+\.\d+\.\d+$")


def releasable_items(benchmark: Benchmark, require_consensus: bool = False):
    """Approved items, minus those whose independent answerers did not agree (unless adjudicated);
    with `require_consensus`, only items whose answerers agreed or that a reviewer adjudicated (items
    not yet answered enough are left out too)."""
    items = Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED)
    if require_consensus:
        items = items.filter(consensus__in=[Item.Consensus.REACHED, Item.Consensus.ADJUDICATED])
    else:
        items = items.exclude(consensus=Item.Consensus.FLAGGED)
    return items.select_related("change", "scene").order_by("pk")


def scene_entry(scene: Scene, frames) -> dict:
    """A scene as the manifest lists it: caption, objects and its released world frames."""
    return {
        "scene_id": scene.external_id,
        "caption": scene.caption,
        "objects": [
            {"instance_id": o.instance_id, "label": o.label, "center": list(o.center), "size": list(o.size),
             "yaw": o.yaw}
            for o in scene.scene_objects.all()
        ],
        "world_frames": [{"anchor": f.anchor.instance_id, "side": f.side, "text": f.text} for f in frames],
    }


def release_assets(release: Release) -> dict[str, Asset]:
    """The asset files a release's manifest lists, by their path in the release."""
    with release.manifest_file.file.open("rb") as handle:
        listed = {entry["path"] for entry in json.loads(handle.read()).get("assets", [])}
    scene_ids = release.items.exclude(scene=None).values("scene_id")
    assets = Asset.objects.filter(scene_id__in=scene_ids).exclude(role=AssetRole.EXPORT).select_related("scene")
    return {path: a for a in assets if (path := release_asset_path(a)) in listed}


# Sent while a release is exported (release, items: its queryset); each receiver answers a dict merged
# into the dataset card: review's gives the independent answers' agreement (`release_agreement`).
release_card_extras = Signal()


def export_release(benchmark: Benchmark, version: str, created_by, notes: str = "",
                   require_consensus: bool = False, *, inline: bool = False,
                   on_step: Callable[[str], None] | None = None) -> Release:
    """The one way to export a release (API, manage page, pipeline stage, command, import): check the
    version, make the Release row and ask for its core.Job, which freezes the releasable items (items
    JSONL, manifest, diff against the previous release, dataset card saying whether consensus was
    required) and then writes the other formats (run_release_export). The job runs in a task sent when
    the transaction commits, or here with `inline` (callers outside a request: the pipeline's release
    stage, the command, an import), calling `on_step(message)` after each step (run_release_export).
    Exporting a version whose export failed runs its job again."""
    version = (version or "").strip()
    if not VERSION_PATTERN.match(version):
        raise DomainError("Use a version like 1.0.0 (three numbers).", field="version")
    with transaction.atomic():
        # One export of a benchmark at a time: a second export of the same version (a double click)
        # waits for the first and then answers 409. NO KEY: rows that only point at the benchmark
        # (new items, scenes) are not held up.
        Benchmark.objects.select_for_update(no_key=True).filter(pk=benchmark.pk).first()
        release = Release.objects.filter(benchmark=benchmark, version=version).select_related("job").first()
        # a job whose worker died (failed by the stale sweep) leaves its release exporting: resumed too
        stalled = release is not None and release.job is not None and release.job.status == Job.Status.FAILED
        if release is not None and release.status != Release.Status.FAILED and not stalled:
            raise Conflict(f"Version {version} of this benchmark already exists.", field="version")
        if release is None:
            if not releasable_items(benchmark, require_consensus).exists():
                raise DomainError("There are no approved items with consensus to release.", field="benchmark")
            try:
                with transaction.atomic():
                    # the card holds the choice until the job freezes the items (a resumed job reads it)
                    release = Release.objects.create(benchmark=benchmark, version=version, notes=notes,
                                                     created_by=created_by, card={"require_consensus": require_consensus})
            except IntegrityError:  # written around the lock (another database client): still a 409
                raise Conflict(f"Version {version} of this benchmark already exists.", field="version") from None
        elif release.status == Release.Status.FAILED:
            release.move_to(Release.Status.EXPORTING)
            release.save(update_fields=["status"])
        job_id = release_export_job(release, created_by)
        if not inline:
            transaction.on_commit(lambda: _send_release_export(release.pk, job_id))
    if inline:
        run_release_export(release.pk, job_id, on_step)
        release.refresh_from_db()
    return release


def release_outputs() -> list[str]:
    """What the job writes after the items, in order: the formats, the harness files, the card."""
    return [*FORMATS, *HARNESS_FORMATS, "card"]


def release_export_job(release: Release, user=None) -> int:
    """The release's core.Job: one step for the items, one per file after them. Keyed by benchmark,
    version and row (a version deleted and exported again is new work); a failed one is queued again."""
    job = request_job("release_export", f"release-export:{release.benchmark_id}:{release.version}:{release.pk}",
                      total=1 + len(release_outputs()), user=user,
                      subject=f"{release.benchmark.name} v{release.version}: export").job
    if release.job_id != job.pk:
        Release.objects.filter(pk=release.pk).update(job=job)
        release.job = job
    return job.pk


def run_release_export(release_id: int, job_id: int | None = None,
                       on_step: Callable[[str], None] | None = None) -> Release | None:
    """A release's export as its job (benchmarks.tasks.export_release, or inline): the items, then each
    file. Idempotent: frozen items and written files are kept, so a job run again finishes the rest; a
    redelivered message of a job that ran or runs does nothing (None). `on_step(message)` hears each
    step as the job does: the inline caller's own work (a pipeline stage) reports through it, and an
    error it raises (that work was cancelled) stops the export as any other error does: the release
    fails and its version can be exported again."""
    def step(message: str, done: int) -> None:
        advance_job(job_id, done=done, message=message)
        if on_step is not None:
            on_step(message)

    release = Release.objects.select_related("benchmark").get(pk=release_id)
    job_id = job_id or release_export_job(release)
    try:
        with running_job(job_id, message="Freezing the items") as job:
            if job is None:
                return None
            release = freeze_release(release_id)
            if job_cancelled(job_id):  # frozen items stay (a new export resumes from them); no files
                return release
            step(f"Froze {release.card.get('n_items', 0)} items", 1)
            release = write_release_formats(release_id, on_written=lambda done, fmt: step(f"Wrote {fmt}", 1 + done))
            finish_job(job_id, {"release": release.pk, "files": sorted(release_files(release)),
                                "not_written": sorted((release.card or {}).get("not_written", {}))})
    except Exception:
        # The page shows 'failed'; exporting the same version again resumes from what is not yet written.
        mark_release_failed(release_id)
        raise
    return release


def cancel_release_export(job: Job) -> None:
    """on_cancel and on_stall("release_export"): the release being exported fails (the job says who
    cancelled, or that its worker stopped), so its version can be exported again; its task, if alive,
    writes no further file (write_release_formats)."""
    for release in Release.objects.select_for_update().filter(job=job, status=Release.Status.EXPORTING):
        release.move_to(Release.Status.FAILED)
        release.save(update_fields=["status"])


def freeze_release(release_id: int) -> Release:
    """Freeze the releasable items as the items JSONL plus a manifest of scenes and assets, with a diff
    against the previous frozen release and the dataset card. Done once: a resumed export keeps them."""
    with transaction.atomic():
        release = Release.objects.select_related("benchmark").get(pk=release_id)
        benchmark = release.benchmark
        # one freeze of a benchmark at a time (the lock order of export_release: benchmark, then release)
        Benchmark.objects.select_for_update(no_key=True).filter(pk=benchmark.pk).first()
        release = Release.objects.select_for_update().select_related("benchmark").get(pk=release_id)
        if release.items_file_id is not None:
            return release
        require_consensus = bool((release.card or {}).get("require_consensus"))
        # Streamed (stream.py): the items are read a chunk at a time and each line goes to the store as
        # it is made, so a release of millions of items needs no more memory than a few.
        items = releasable_items(benchmark, require_consensus)
        if not items.exists():
            raise DomainError("There are no approved items with consensus to release.", field="benchmark")
        scene_ids = items.exclude(scene=None).order_by().values("scene_id")
        frames_by_scene = frames_for(scene_ids)
        release.previous = Release.objects.filter(benchmark=benchmark, pk__lt=release.pk, items_file__isnull=False
                                                  ).order_by("-created_at", "-pk").first()
        previous = release.previous
        prefix = f"{benchmark.slug}-{release.version}"
        release.items_file, counts, digests = freeze_lines(release, items, frames_by_scene, prefix,
                                                           with_digests=previous is not None)
        without_consensus = {"require_consensus": require_consensus, "n_left_out_without_consensus": (
            Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).count() - counts.n)}
        release.diff = streamed_diff(iter_release_lines(previous), digests) if previous else {}
        beat_job(release.job_id)  # the diff read the previous release's lines
        release.card = counts.card() | without_consensus
        # agreement statistics review computes (Krippendorff's alpha; benchmarks does not import review)
        for _, extra in release_card_extras.send(sender=Release, release=release, items=items):
            release.card |= extra or {}
        del digests
        scenes = Scene.objects.filter(pk__in=scene_ids).prefetch_related("scene_objects").order_by("external_id")
        assets = Asset.objects.filter(scene_id__in=scene_ids).exclude(role=AssetRole.EXPORT).select_related("scene")
        assets = geo.manifest_assets(assets, *geo.released_changes(items))  # after-states: current, their change by key
        manifest = {
            "benchmark": benchmark.slug,
            "family": benchmark.family,
            "version": release.version,
            "n_items": counts.n,
            **without_consensus,
            "assets": sorted(
                ({"scene_id": a.scene.external_id, "role": a.role, "path": release_asset_path(a), "size": a.size,
                  "sha256": a.sha256, "meta": meta} for a, meta in assets),
                key=lambda entry: (entry["scene_id"], entry["role"], entry["path"]),
            ),
            "scenes": [scene_entry(s, frames_by_scene.get(s.pk, [])) for s in scenes],
        }
        release.manifest_file = store_asset(
            None, AssetRole.EXPORT, f"{prefix}-manifest.json",
            json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=True).encode(),
        )
        release.save(update_fields=["items_file", "manifest_file", "previous", "diff", "card"])
    return release


def _send_release_export(release_id: int, job_id: int) -> None:
    """Enqueue the export; with the broker down the release and its job are marked failed (exporting the
    same version again runs it) and the caller answers 503 (core/api.py)."""
    from kombu.exceptions import OperationalError

    try:
        dispatch.send_release_export(release_id, job_id)
    except OperationalError as exc:
        mark_release_failed(release_id)
        fail_job(job_id, f"Not queued: {exc}")
        raise


def write_release_formats(release_id: int, on_written=None) -> Release:
    """Write the JSON, CSV and Parquet files, the family's published shape and the harness files
    (harness.py) and the dataset card beside the JSONL, calling `on_written(done, format)`
    after each. Idempotent: each format is written under a row lock and skipped when already there, so
    a retried task finishes the rest."""
    release = Release.objects.filter(pk=release_id).select_related("benchmark").first()
    if release is None:
        raise NotFound("No such release.", field="release")
    if release.status == Release.Status.READY:
        return release
    if release.status == Release.Status.FAILED:
        release.move_to(Release.Status.EXPORTING)
        release.save(update_fields=["status"])
    prefix = f"{release.benchmark.slug}-{release.version}"
    for done, fmt in enumerate(release_outputs(), start=1):
        with transaction.atomic():
            locked = Release.objects.select_for_update().get(pk=release.pk)
            if locked.status != Release.Status.EXPORTING:  # its export was cancelled: write nothing more
                return locked
            if not locked.files.filter(meta__format=fmt).exists():
                try:
                    if fmt in FORMATS:  # streamed from the JSONL to the store (stream.py)
                        locked.files.add(store_stream(
                            f"{prefix}.{fmt}", lambda out, fmt=fmt, r=locked: write_release_format(r, fmt, out),
                            meta={"format": fmt}, beat=partial(beat_job, locked.job_id)))
                        name = content = None
                    elif fmt in HARNESS_FORMATS:
                        _harness_fits(locked)
                        name, content = harness_file(locked, fmt)
                        if fmt == "published":  # Spatial457's per-level question files beside it
                            _store_companions(locked, prefix)
                    else:
                        name = f"{prefix}-card.json"
                        content = json.dumps(locked.card, indent=2, sort_keys=True).encode()
                except DomainError as exc:  # items a shape cannot hold: the card says so, the rest is written
                    if fmt not in HARNESS_FORMATS:
                        raise
                    locked.card = {**locked.card, "not_written": {**locked.card.get("not_written", {}), fmt: exc.message}}
                    locked.save(update_fields=["card"])
                else:
                    if content is not None:
                        locked.files.add(store_asset(None, AssetRole.EXPORT, name, content, meta={"format": fmt}))
        if on_written is not None:
            on_written(done, fmt)
    with transaction.atomic():
        release = Release.objects.select_for_update().get(pk=release.pk)
        if release.status == Release.Status.EXPORTING:  # not cancelled after the last file
            release.move_to(Release.Status.READY)
            release.save(update_fields=["status"])
    return release


def _store_companions(release: Release, prefix: str) -> None:
    """The published shape's companion files (published.published_companions), each a release file
    of format `published:<path>` whose meta names its path in an exported folder."""
    for path, content in published_companions(release).items():
        name = f"{prefix}-{PurePosixPath(path).name}"
        release.files.add(store_asset(None, AssetRole.EXPORT, name, content,
                                      meta={"format": f"published:{path}", "path": path}))


def _harness_fits(release: Release) -> None:
    """The harness files hold images and are built in memory: a release above RELEASE_HARNESS_MAX_ITEMS
    items is left without them (the card says why) so that its formats task stays in bounded memory."""
    from django.conf import settings

    limit = settings.RELEASE_HARNESS_MAX_ITEMS
    n_items = (release.card or {}).get("n_items") or 0
    if limit and n_items > limit:
        raise DomainError(f"Not written: {n_items} items is more than RELEASE_HARNESS_MAX_ITEMS ({limit}); "
                          "the harness files are built in memory.", field="format")


def mark_release_failed(release_id: int) -> None:
    Release.move_all(Release.objects.filter(pk=release_id), Release.Status.FAILED)


def release_files(release: Release) -> dict[str, Asset]:
    """Every file of a release by format: jsonl, manifest, and those the task has written."""
    files = {"jsonl": release.items_file, "manifest": release.manifest_file}
    files.update({a.meta.get("format"): a for a in release.files.all()})
    return {k: v for k, v in files.items() if v is not None}


@transaction.atomic
def import_release(items_jsonl: bytes, manifest_json: bytes, created_by, slug: str = "", name: str = "",
                   read_asset: Callable[[str], bytes | None] | None = None) -> Release:
    """Rebuild a benchmark from an exported release (scenes, objects, world frames, changes,
    items, asset files) and export it again under the same version: the files come out
    byte-identical. `read_asset(path)` gives the bytes of an asset the manifest lists (None when
    missing); every asset is checked against its sha256 before anything is written."""
    try:
        manifest = json.loads(manifest_json)
        lines = [json.loads(line) for line in items_jsonl.decode().splitlines() if line.strip()]
        version, family = manifest["version"], manifest["family"]
    except (ValueError, KeyError, UnicodeDecodeError) as exc:
        raise DomainError(f"Not an exported release: {exc}", field="file") from None
    if len(lines) != manifest.get("n_items"):
        raise DomainError("The items file and the manifest disagree on the number of items.", field="file")
    asset_entries = manifest.get("assets", [])
    for entry in asset_entries:
        _checked_asset(entry, read_asset)
    slug = slug or manifest["benchmark"]
    if Benchmark.objects.filter(slug=slug).exists():
        raise Conflict(f"A benchmark '{slug}' already exists; import into a new one.", field="slug")
    benchmark = Benchmark.objects.create(slug=slug, name=name or f"{slug} (imported)", family=family)
    scenes = {}
    for entry in manifest.get("scenes", []):
        scene = Scene.objects.create(benchmark=benchmark, external_id=entry["scene_id"], caption=entry["caption"])
        objects = {
            o["instance_id"]: SceneObject.objects.create(
                scene=scene, instance_id=o["instance_id"], label=o["label"], yaw=o["yaw"],
                center_x=o["center"][0], center_y=o["center"][1], center_z=o["center"][2],
                size_x=o["size"][0], size_y=o["size"][1], size_z=o["size"][2],
            )
            for o in entry["objects"]
        }
        for f in entry["world_frames"]:
            WorldFrame.objects.create(scene=scene, anchor=objects[f["anchor"]], side=f["side"], text=f["text"])
        scenes[entry["scene_id"]] = scene
    changes, by_key = {}, {}  # by_key: a change by its release key (geometry.change_key)
    items = []
    for line in lines:
        scene = scenes.get(line["scene_id"])
        if line["scene_id"] and scene is None:
            scene = scenes[line["scene_id"]] = Scene.objects.create(benchmark=benchmark, external_id=line["scene_id"])
        change = None
        if line["context_change"] is not None:
            key = (line["scene_id"], line["change_type"], line["context_change_raw"], line["context_change"])
            if key not in changes:
                refined = line["context_change"] if line["context_change"] != line["context_change_raw"] else ""
                changes[key] = ContextChange.objects.create(
                    scene=scene, change_type=line["change_type"], raw_text=line["context_change_raw"],
                    refined_text=refined, status=ContextChange.Status.APPROVED, edit=geo.imported_edit(line),
                    provenance={"imported_from": f"{manifest['benchmark']}@{version}"},
                )
            change = changes[key]
            if geo.GEOMETRY_KEY in line:
                by_key[line[geo.GEOMETRY_KEY]["change"]] = change
        items.append(Item(
            benchmark=benchmark, scene=scene, change=change, origin_id=line["id"],
            external_id=line["external_id"] or "", question=line["question"], answer_format=line["answer_format"],
            choices=line["choices"], answers=line["answers"], tags=line["tags"], provenance=line["provenance"],
            unchanged_answers=line.get("unchanged_answers") or [], status=Item.Status.APPROVED,
        ))
    Item.objects.bulk_create(items, batch_size=1000)
    stored = []
    try:
        for entry in asset_entries:
            scene = scenes.get(entry["scene_id"])
            if scene is None:
                raise DomainError(f"Asset file {entry['path']} names an unknown scene.", field="assets")
            stored.append(store_asset(scene, entry["role"], PurePosixPath(entry["path"]).name,
                                      _checked_asset(entry, read_asset), geo.imported_meta(entry, by_key)))
        return export_release(benchmark, version, created_by, notes=f"Imported from {manifest['benchmark']}@{version}.",
                              inline=True)
    except BaseException:
        for asset in stored:  # the rows roll back with the transaction; the bytes go too
            asset.file.storage.delete(asset.file.name)
        raise


def _checked_asset(entry: dict, read_asset) -> bytes:
    """The bytes of one listed asset, refused when missing, outside the release or not matching."""
    path = entry.get("path") or ""
    parts = PurePosixPath(path).parts
    if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
        raise DomainError(f"Asset path '{path}' is not inside the release.", field="assets")
    content = read_asset(path) if read_asset else None
    if content is None:
        raise DomainError(f"Asset file {path} is missing from the release.", field="assets")
    if hashlib.sha256(content).hexdigest() != entry.get("sha256"):
        raise DomainError(f"Asset file {path} does not match its sha256 in the manifest.", field="assets")
    return content
