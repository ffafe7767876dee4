"""Image sets: one scene per image, with its thumbnail, an optional mirrored twin for FlipEval and
overlays kept as data, and the set's items file imported through the family mapping."""

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from PIL import Image, ImageOps, UnidentifiedImageError

from benchmarks.importers import ImportFileError, as_rows, import_item_file, read_json_or_jsonl
from benchmarks.models import AssetRole, Benchmark, Family, Scene
from benchmarks.protocols import TWIN_OF, mirror_overlays
from core.errors import DomainError

from .files import MaterialError, NamedFile, StoredFiles, all_or_nothing, read_json

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".bmp"}
ITEMS_NAMES = ("items.json", "items.jsonl", "items.tsv")
OVERLAYS_NAME = "overlays.json"
IMAGE_FAMILIES = (Family.SRBENCH3D, Family.CAUSALSPATIAL, Family.SPATIAL457)
# Fields an item row may name its image by, in order of preference.
IMAGE_FIELDS = ("scene_id", "image_filename", "image", "image_path")
THUMBNAIL_PX = 320
SAVE_FORMATS = {"PNG": ("PNG", {}), "JPEG": ("JPEG", {"quality": 92}), "WEBP": ("WEBP", {"quality": 92})}


@dataclass
class ImageSetReport:
    images: int = 0
    flipped: int = 0
    items: int = 0
    changes: int = 0
    skipped: list[str] = field(default_factory=list)


@dataclass
class _Picture:
    file: NamedFile
    image: Image.Image
    overlays: list = field(default_factory=list)


def _image_bytes(image: Image.Image, source_format: str | None) -> tuple[bytes, str]:
    fmt, options = SAVE_FORMATS.get(source_format or "", ("PNG", {}))
    if fmt == "JPEG" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue(), fmt.lower().replace("jpeg", "jpg")


def _thumbnail(image: Image.Image) -> bytes:
    small = image.convert("RGB")
    small.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX))
    out = io.BytesIO()
    small.save(out, format="JPEG", quality=85)
    return out.getvalue()


def _check_overlay(overlay) -> bool:
    if not isinstance(overlay, dict):
        return False
    numbers = (int, float)
    if overlay.get("type") == "box":
        return all(isinstance(overlay.get(k), numbers) for k in ("x", "y", "width", "height"))
    if overlay.get("type") == "arrow":
        return all(isinstance(overlay.get(k), list) and len(overlay[k]) == 2
                   and all(isinstance(v, numbers) for v in overlay[k]) for k in ("from", "to"))
    return False


def _resolve_image(ref, names: set[str], by_basename: dict[str, list[str]]) -> str | None:
    if not isinstance(ref, str) or not ref.strip():
        return None
    ref = ref.strip()
    if ref in names:
        return ref
    matches = by_basename.get(PurePosixPath(ref).name, [])
    return matches[0] if len(matches) == 1 else None


def _items_with_scene_ids(items: NamedFile, names: set[str], errors: list[str]) -> str | None:
    """The items file with each row's `scene_id` set to the image it names, so the family
    mapping attaches every item to its image's scene."""
    by_basename: dict[str, list[str]] = {}
    for name in names:
        by_basename.setdefault(PurePosixPath(name).name, []).append(name)
    try:
        text = items.content.decode("utf-8")
        if items.name.endswith(".tsv"):
            reader = csv.DictReader(io.StringIO(text), delimiter="\t")
            rows, where = list(reader), "row {}"
            first = 2
        else:
            data = read_json_or_jsonl(text)
            rows = data.get("questions", []) if isinstance(data, dict) and "questions" in data else as_rows(data)
            where, first = "record {}", 1
    except (UnicodeDecodeError, ImportFileError) as exc:
        errors.append(f"{items.name}: {exc}")
        return None
    for number, row in enumerate(rows, start=first):
        if not isinstance(row, dict):
            errors.append(f"{items.name}: {where.format(number)}: not an object")
            continue
        ref = next((row[k] for k in IMAGE_FIELDS if row.get(k)), None)
        image = _resolve_image(ref, names, by_basename)
        if image is None:
            reason = f"image '{ref}' is not in the set" if ref else f"names no image ({', '.join(IMAGE_FIELDS[1:])})"
            errors.append(f"{items.name}: {where.format(number)}: {reason}")
        row["scene_id"] = image
    if items.name.endswith(".tsv"):
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=[*reader.fieldnames, "scene_id"], delimiter="\t",
                                extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()
    return json.dumps(data)


def _pictures(files: list[NamedFile], overlays: dict, report: ImageSetReport, errors: list[str]) -> list[_Picture]:
    pictures = []
    for file in files:
        if PurePosixPath(file.name).suffix.lower() not in IMAGE_SUFFIXES:
            report.skipped.append(file.name)
            continue
        try:
            image = Image.open(io.BytesIO(file.content))
            image.load()
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
            errors.append(f"{file.name}: not a readable image ({exc})")
            continue
        if len(file.name) > 100:
            errors.append(f"{file.name}: the path is longer than 100 characters (it becomes the scene id)")
        pictures.append(_Picture(file, image, overlays.get(file.name, [])))
    return pictures


def import_image_set(benchmark: Benchmark, files: list[NamedFile], *, flip: bool = False,
                     author=None) -> ImageSetReport:
    """Images (one scene each, named by the image's path in the set) with thumbnails, an optional
    mirrored twin per image for FlipEval, overlays kept as data in the asset meta, and the set's
    items file (`items.json`, `items.jsonl` or `items.tsv`) imported through the family mapping."""
    if benchmark.family not in IMAGE_FAMILIES:
        raise DomainError(f"Image sets belong to {', '.join(IMAGE_FAMILIES)} benchmarks, not {benchmark.family}.",
                          field="benchmark")
    errors: list[str] = []
    report = ImageSetReport()
    by_name = {f.name: f for f in files}
    items = [by_name.pop(name) for name in ITEMS_NAMES if name in by_name]
    if len(items) != 1:
        raise MaterialError([f"the set needs exactly one items file ({', '.join(ITEMS_NAMES)}) at its top, "
                             f"found {len(items)}"])
    overlays = {}
    if OVERLAYS_NAME in by_name:
        overlay_file = by_name.pop(OVERLAYS_NAME)
        overlays = read_json(overlay_file, errors) or {}
        if not isinstance(overlays, dict) or any(
                not isinstance(v, list) or not all(map(_check_overlay, v)) for v in overlays.values()):
            errors.append(f"{OVERLAYS_NAME}: expected {{image path: [box or arrow overlays]}}; a box needs x, y, "
                          "width, height and an arrow from [x, y] and to [x, y]")
            overlays = {}
    pictures = _pictures(list(by_name.values()), overlays, report, errors)
    names = {p.file.name for p in pictures}
    errors += [f"{OVERLAYS_NAME}: '{name}' is not an image of the set" for name in overlays if name not in names]
    if not pictures and not errors:
        errors.append(f"the set holds no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
    text = _items_with_scene_ids(items[0], names, errors)
    taken = set(Scene.objects.filter(benchmark=benchmark, external_id__in=names, assets__role=AssetRole.IMAGE)
                .values_list("external_id", flat=True))
    errors += [f"{name}: already imported into this benchmark" for name in sorted(taken)]
    if errors:
        raise MaterialError(errors)
    with all_or_nothing() as stored:
        for picture in pictures:
            _store_picture(benchmark, picture, flip, stored, report)
        result = import_item_file(benchmark, items[0].name, text, author=author, scene_required=True)
        if not result.ok:
            raise MaterialError(result.errors)
        report.items, report.changes = result.items, result.changes
    return report


def _store_picture(benchmark: Benchmark, picture: _Picture, flip: bool, stored: StoredFiles,
                   report: ImageSetReport) -> None:
    name, image = picture.file.name, picture.image
    scene, _ = Scene.objects.get_or_create(benchmark=benchmark, external_id=name)
    size = {"width": image.width, "height": image.height}
    path = PurePosixPath(name)
    original = stored.store(scene, AssetRole.IMAGE, path.name, picture.file.content,
                            {"path": name, **size, "overlays": picture.overlays})
    stored.store(scene, AssetRole.THUMBNAIL, f"{path.stem}_thumb.jpg", _thumbnail(image), {"of": original.pk})
    report.images += 1
    if flip:
        content, suffix = _image_bytes(ImageOps.mirror(image), image.format)
        twin = stored.store(scene, AssetRole.IMAGE_FLIPPED, f"{path.stem}_flip.{suffix}", content,
                            {TWIN_OF: original.pk, **size,
                             "overlays": mirror_overlays(picture.overlays, image.width)})
        original.meta["flipped"] = twin.pk
        original.save(update_fields=["meta"])
        report.flipped += 1
