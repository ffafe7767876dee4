"""The one loop every family's file goes through: map it to records, check them across the file,
then write items, changes, scenes and images in one transaction."""

import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

from django.db import DatabaseError, transaction
from django.dispatch import Signal

from benchmarks.models import Asset, AssetRole, Benchmark, ContextChange, Item, Scene
from benchmarks.protocols import TWIN_OF
from benchmarks.services import store_asset

from .causalspatial import causalspatial_records
from .hypo3d import hypo3d_records
from .images import decode_image
from .m3verse import m3verse_records
from .rows import RELEASED_IN, ImportFileError, ImportReport, ItemRecord, Problem, as_text
from .spatial457 import spatial457_records
from .threedsrbench import SRBENCH_QID, srbench_records

# Sent inside the import's transaction with the ids of the changes and items written (change_ids,
# item_ids); review embeds their texts for near-duplicate search once it commits (review/apps.py).
texts_imported = Signal()

MAX_ERRORS = 50

FAMILY_MAPPINGS: dict[str, Callable[[str, str], Iterator[ItemRecord | Problem]]] = {
    "hypo3d": hypo3d_records,
    "3dsrbench": srbench_records,
    "causalspatial": causalspatial_records,
    "spatial457": spatial457_records,
    "m3verse": m3verse_records,
}


# --- checks across the file --------------------------------------------------------------------

def _repeated_ids(records: list[ItemRecord]) -> list[str]:
    """A benchmark id (or a VLMEvalKit index) given twice in one file, naming both places."""
    errors = []
    for attribute, label in (("external_id", None), ("source_index", "index")):
        seen: dict[str, ItemRecord] = {}
        for record in records:
            value = getattr(record, attribute)
            if not value:
                continue
            if value in seen:
                errors.append(f"{label or record.id_label} '{value}' at {seen[value].where} and {record.where}")
            else:
                seen[value] = record
    return list(dict.fromkeys(errors))


def _field_lengths(record: ItemRecord) -> list[str]:
    limits = (("external_id", record.external_id, 100), ("index", record.source_index, 40),
              ("scene id", record.scene_id or "", 100))
    return [f"{record.where}: {what} '{value[:40]}...' is longer than {limit} characters"
            for what, value, limit in limits if len(value) > limit]


# --- the one loop ------------------------------------------------------------------------------

def import_item_file(benchmark: Benchmark, name: str, text: str | bytes, author=None,
                     scene_required: bool | None = None, create_missing_scenes: bool = False) -> ImportReport:
    """Import one file into the benchmark, all of it or nothing: a published benchmark's items as
    approved (provenance source "published"), a generator's (its rows say `source: generated`) as
    drafts for review with the generator's provenance.

    Items already there (same benchmark id) are updated in place when the file differs, else left
    alone. Scenes: Hypo3D items need theirs (`scene_required`); other families' items may come
    before their scene and stay without one; `create_missing_scenes` makes bare scenes for every
    unknown scene id instead. Images carried in the file are stored once per scene."""
    report = ImportReport(file=name)
    try:
        records: list[ItemRecord] = []
        for record in FAMILY_MAPPINGS[benchmark.family](as_text(text), name):
            if isinstance(record, Problem):
                report.errors.append(f"{name}: {record}")
            else:
                records.append(record)
    except ImportFileError as exc:
        report.errors.append(f"{name}: {exc}")
    except (ValueError, AttributeError, TypeError) as exc:
        report.errors.append(f"{name}: {exc}")
    if report.errors:
        return _cap(report)
    if not records:
        report.errors.append(f"{name}: no items found")
        return report
    report.errors += [f"{name}: {e}" for e in _repeated_ids(records)]
    report.errors += [f"{name}: {e}" for r in records for e in _field_lengths(r)]
    scenes = {s.external_id: s for s in Scene.objects.filter(benchmark=benchmark)}
    # Hypo3D items rest on a scene; other families may arrive before their images or videos.
    scene_required = benchmark.family == "hypo3d" if scene_required is None else scene_required
    to_create: dict[str, None] = {}
    for record in records:
        if not record.scene_id or record.scene_id in scenes:
            continue
        if create_missing_scenes or record.image is not None:
            to_create[record.scene_id] = None
        elif scene_required or record.change_text:
            report.errors.append(f"{name}: {record.where}: unknown scene id '{record.scene_id}'")
    if report.errors:
        return _cap(report)
    stored: list[Asset] = []
    try:
        with transaction.atomic():
            _write(benchmark, name, records, scenes, list(to_create), author, report, stored)
    except (ValueError, DatabaseError) as exc:
        for asset in stored:  # the rows rolled back with the transaction; the bytes go too
            asset.file.storage.delete(asset.file.name)
        return ImportReport(file=name, errors=[f"{name}: {exc}"])
    except BaseException:
        for asset in stored:
            asset.file.storage.delete(asset.file.name)
        raise
    return report


def _cap(report: ImportReport) -> ImportReport:
    if len(report.errors) > MAX_ERRORS:
        more = len(report.errors) - MAX_ERRORS
        report.errors = [*report.errors[:MAX_ERRORS], f"{report.file}: ... and {more} more problem(s)"]
    return report


def _write(benchmark: Benchmark, name: str, records: list[ItemRecord], scenes: dict[str, Scene],
           new_scene_ids: list[str], author, report: ImportReport, stored: list[Asset]) -> None:
    if new_scene_ids:
        Scene.objects.bulk_create([Scene(benchmark=benchmark, external_id=s) for s in new_scene_ids])
        scenes.update({s.external_id: s for s in Scene.objects.filter(benchmark=benchmark,
                                                                       external_id__in=new_scene_ids)})
        report.scenes_created = len(new_scene_ids)
    _store_images(name, records, scenes, report, stored)
    changes = _changes(benchmark, name, records, scenes, author)
    report.changes = len(changes)
    existing = _existing_items(benchmark, records)
    new_items, updated = [], []
    for record in records:
        scene = scenes.get(record.scene_id) if record.scene_id else None
        change = changes.get((record.scene_id, record.change_text)) if record.change_text else None
        # a published benchmark's items arrive approved; generated ones wait in the review queue
        provenance = ({"source": "generated", **record.generated} if record.generated else {"source": "published"})
        provenance.update(file=name, where=record.where)
        # an item read back from a HypoLab release was reviewed there: approved, its provenance kept
        draft = bool(record.generated) and not record.generated.get(RELEASED_IN)
        status = Item.Status.DRAFT if draft else Item.Status.APPROVED
        item = existing.get(record.external_id) if record.external_id else None
        if item is None:
            new_items.append(Item(
                benchmark=benchmark, scene=scene, change=change, external_id=record.external_id,
                source_index=record.source_index, question=record.question, answer_format=record.answer_format,
                choices=record.choices, answers=record.answers, tags=record.tags, status=status,
                unchanged_answers=record.unchanged_answers, author=author, provenance=provenance,
            ))
            continue
        wanted = {
            "question": record.question, "answer_format": record.answer_format, "choices": record.choices,
            "answers": record.answers, "tags": record.tags, "source_index": record.source_index,
            "unchanged_answers": record.unchanged_answers,
            # an item keeps the scene or change it has when the file names none that exists (yet)
            "scene_id": scene.pk if scene else item.scene_id, "change_id": change.pk if change else item.change_id,
        }
        if all(getattr(item, key) == value for key, value in wanted.items()):
            report.unchanged += 1
            continue
        for key, value in wanted.items():
            setattr(item, key, value)
        if draft:  # a generator's new text is reviewed again
            item.status = Item.Status.DRAFT
        item.provenance = {**(item.provenance or {}), **provenance}
        item.version += 1
        updated.append(item)
    Item.objects.bulk_create(new_items, batch_size=500)
    Item.objects.bulk_update(updated, [*UPDATED_FIELDS], batch_size=500)
    report.items, report.created, report.updated = len(records), len(new_items), len(updated)
    texts_imported.send(sender=Benchmark, change_ids=[c.pk for c in changes.values()],
                        item_ids=[i.pk for i in [*new_items, *updated] if i.pk is not None])


UPDATED_FIELDS = ("question", "answer_format", "choices", "answers", "tags", "source_index", "scene", "change",
                  "provenance", "version", "status", "unchanged_answers")


def _existing_items(benchmark: Benchmark, records: list[ItemRecord]) -> dict[str, Item]:
    ids = [r.external_id for r in records if r.external_id]
    found: dict[str, Item] = {}
    for start in range(0, len(ids), 1000):
        found.update({i.external_id: i for i in Item.objects.select_for_update().filter(
            benchmark=benchmark, external_id__in=ids[start:start + 1000])})
    return found


def _changes(benchmark: Benchmark, name: str, records: list[ItemRecord], scenes: dict[str, Scene],
             author) -> dict[tuple, ContextChange]:
    """One ContextChange per (scene, text): the one already there, or a new approved one."""
    keys = {(r.scene_id, r.change_text): r.change_type for r in records if r.change_text}
    if not keys:
        return {}
    by_pk = {scenes[scene_id].pk: scene_id for scene_id, _ in keys}
    found: dict[tuple, ContextChange] = {}
    for change in ContextChange.objects.filter(scene_id__in=list(by_pk)).order_by("pk"):
        found.setdefault((by_pk[change.scene_id], change.raw_text), change)
    changes = {}
    for (scene_id, text), change_type in keys.items():
        change = found.get((scene_id, text))
        if change is None:
            change = ContextChange.objects.create(
                scene=scenes[scene_id], change_type=change_type or "", raw_text=text,
                status=ContextChange.Status.APPROVED, author=author, provenance={"source": "published", "file": name},
            )
        elif change_type and change.change_type != change_type:
            change.change_type = change_type
            change.version += 1
            change.save(update_fields=["change_type", "version", "updated_at"])
        changes[(scene_id, text)] = change
    return changes


IMAGE_SUFFIXES = {"jpeg": "jpg", "png": "png", "webp": "webp", "gif": "gif", "bmp": "bmp"}


def _store_images(name: str, records: list[ItemRecord], scenes: dict[str, Scene], report: ImportReport,
                  stored: list[Asset]) -> None:
    """Each distinct image once per scene (found again by sha256 on a re-import); a mirrored image
    (3DSRBench `-flip` rows) as the scene's `image_flipped` twin of the original it mirrors."""
    with_images = [r for r in records if r.image is not None and r.scene_id in scenes]
    if not with_images:
        return
    scene_pks = {scenes[r.scene_id].pk for r in with_images}
    known: dict[tuple, Asset] = {}
    for asset in Asset.objects.filter(scene_id__in=scene_pks, role__in=[AssetRole.IMAGE, AssetRole.IMAGE_FLIPPED]):
        known.setdefault((asset.scene_id, asset.role, asset.sha256), asset)
    decoded: dict[int, tuple[bytes, dict]] = {}
    by_key: dict[tuple, Asset] = {}  # (scene pk, row key) -> original image asset

    def asset_for(record: ItemRecord, role: str, meta: dict) -> Asset:
        source = record.image.data
        if id(source) not in decoded:
            try:
                decoded[id(source)] = decode_image(record.image)
            except ValueError as exc:
                raise ValueError(f"{record.where}: {exc}") from None
        content, facts = decoded[id(source)]
        scene = scenes[record.scene_id]
        digest = hashlib.sha256(content).hexdigest()
        if (scene.pk, role, digest) not in known:
            suffix = IMAGE_SUFFIXES.get(facts["format"], "img")
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", PurePosixPath(record.scene_id).stem)[:60] or "image"
            filename = f"{stem}{'_flip' if role == AssetRole.IMAGE_FLIPPED else ''}.{suffix}"
            asset = store_asset(scene, role, filename, content,
                                {"width": facts["width"], "height": facts["height"], "source_file": name, **meta})
            stored.append(asset)
            known[(scene.pk, role, digest)] = asset
            report.images += 1
        return known[(scene.pk, role, digest)]

    for record in (r for r in with_images if not r.image.flipped):
        by_key.setdefault((scenes[record.scene_id].pk, record.image.key or record.external_id),
                          asset_for(record, AssetRole.IMAGE, {}))
    for record in (r for r in with_images if r.image.flipped):
        scene = scenes[record.scene_id]
        base = SRBENCH_QID.match(record.image.key)["base"] if record.image.key else ""
        original = (by_key.get((scene.pk, record.image.key)) or by_key.get((scene.pk, base))
                    or next((a for (pk, role, _), a in known.items() if pk == scene.pk and role == AssetRole.IMAGE),
                            None))
        twin = asset_for(record, AssetRole.IMAGE_FLIPPED, {TWIN_OF: original.pk} if original else {})
        if original is not None and "flipped" not in original.meta:
            original.meta["flipped"] = twin.pk
            original.save(update_fields=["meta"])
