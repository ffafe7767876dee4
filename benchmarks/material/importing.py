"""Importing benchmark material: 3D scans, image sets and paired before/after videos.

Each import checks every file first and reports each problem as `file: reason`; only when all of
them are usable does it write, in one transaction. Files written to storage before a failure are
deleted again, so a failed import leaves neither rows nor bytes behind. Layouts and worked
examples: docs/IMPORT.md. Item files go through the family mappings of `benchmarks/importers/`."""

import csv
import hashlib
import io
import json
import re
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import numpy as np
from django.db import transaction
from PIL import Image, ImageOps, UnidentifiedImageError

from benchmarks.importers import ImportFileError, as_rows, import_item_file, read_json_or_jsonl
from benchmarks.models import Asset, AssetRole, Benchmark, Family, Scene, SceneObject, Side, WorldFrame
from benchmarks.protocols import TWIN_OF, mirror_overlays
from benchmarks.services import store_asset
from benchmarks.tasks import process_scene
from core.errors import DomainError

from .alignment import IDENTITY, box_through, estimate_alignment, transform
from .scans import (
    ScanError,
    axis_alignment,
    box_objects,
    read_obj,
    read_ply,
    read_ply_faces,
    rscan_objects,
    scannet_meta,
    scannet_objects,
    write_points_ply,
)
from .video import VideoError, probe, sample_frames


@dataclass(frozen=True)
class NamedFile:
    """An input file: its name (a relative path inside a folder or archive) and its bytes."""

    name: str
    content: bytes


class MaterialError(DomainError):
    """One or more input files are unusable; `errors` holds one 'file: reason' per problem."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors), field="files")
        self.errors = errors

    def as_dict(self) -> dict:
        return {"files": self.errors}


class _StoredFiles:
    """Assets written during one import. A rolled-back transaction removes their rows but not
    their bytes on storage, so on failure the files are deleted here."""

    def __init__(self):
        self.assets: list[Asset] = []

    def store(self, scene: Scene, role: str, filename: str, content: bytes, meta: dict) -> Asset:
        asset = store_asset(scene, role, filename, content, meta)
        self.assets.append(asset)
        return asset

    def delete_files(self) -> None:
        for asset in self.assets:
            asset.file.storage.delete(asset.file.name)


@contextmanager
def _all_or_nothing():
    stored = _StoredFiles()
    try:
        with transaction.atomic():
            yield stored
    except BaseException:
        stored.delete_files()
        raise


def _json(file: NamedFile, errors: list[str]):
    try:
        return json.loads(file.content)
    except (ValueError, UnicodeDecodeError) as exc:
        errors.append(f"{file.name}: not valid JSON ({exc})")
        return None


# --- input folders and archives ------------------------------------------------------------------


def files_from_folder(folder: Path) -> list[NamedFile]:
    """Every non-hidden file under the folder, named by its path relative to it."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MaterialError([f"{folder}: not a folder"])
    return [
        NamedFile(path.relative_to(folder).as_posix(), path.read_bytes())
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    ]


def files_from_zip(name: str, content: bytes) -> list[NamedFile]:
    """The files of a .zip archive; a single top folder that holds everything is dropped."""
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            entries = [
                (PurePosixPath(info.filename), archive.read(info))
                for info in archive.infolist()
                if not info.is_dir() and not info.filename.startswith("__MACOSX/")
            ]
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise MaterialError([f"{name}: not a readable .zip archive ({exc})"]) from None
    unsafe = [str(path) for path, _ in entries if path.is_absolute() or ".." in path.parts]
    if unsafe:
        raise MaterialError([f"{name}: entries outside the archive folder: {', '.join(unsafe[:3])}"])
    entries = [(path, data) for path, data in entries if not any(p.startswith(".") for p in path.parts)]
    tops = {path.parts[0] for path, _ in entries if len(path.parts) > 1}
    strip = len(tops) == 1 and all(len(path.parts) > 1 for path, _ in entries)
    return [NamedFile(PurePosixPath(*path.parts[strip:]).as_posix(), data) for path, data in entries]


# --- 3D scans --------------------------------------------------------------------------------------

FRAME_SENTENCE = re.compile(
    r"The (?P<label>[^.]+?) was located at the (?P<side>front|back|left|right) of the scene\.?", re.IGNORECASE
)


def _world_frames(text: str, objects: list[dict]) -> list[tuple[int, str, str]]:
    """(instance id, side, sentence) per Hypo3D orientation sentence in the text."""
    frames = []
    for match in FRAME_SENTENCE.finditer(text):
        label = match["label"].strip().lower()
        anchors = [o for o in objects if o["label"].lower() == label]
        if len(anchors) != 1:
            raise DomainError(
                f"The world frame names '{match['label']}', which is {'not an object' if not anchors else 'not unique'} "
                "in this scan; anchor it on an object whose label occurs once.", field="world_frame")
        frames.append((anchors[0]["instance_id"], match["side"].lower(), match.group(0).strip()))
    if not frames:
        raise DomainError("Write the world frame as 'The {object} was located at the {front|back|left|right} "
                          "of the scene.' (one sentence per side).", field="world_frame")
    return frames


def _scene_id_matches(data: dict, scene_id: str, file: NamedFile, errors: list[str]) -> None:
    named = (data.get("sceneId") or data.get("scan_id")) if isinstance(data, dict) else None
    if named and named != scene_id:
        errors.append(f"{file.name}: it is for scene '{named}', not '{scene_id}'")


def _check_scene_id(scene_id: str) -> str:
    scene_id = (scene_id or "").strip()
    if not scene_id or len(scene_id) > 100:
        raise DomainError("Give the scene id (at most 100 characters), e.g. scene0000_00.", field="scene_id")
    return scene_id


def _alignment(xyz, faces, given, align: bool) -> dict:
    """The record of how the scan was brought into the aligned frame: {"source", "matrix"} and,
    for an estimate, what it found (alignment.estimate_alignment)."""
    if not align:
        return {"source": "none", "matrix": IDENTITY.tolist(), "reason": "kept in the scan's own frame on request"}
    if given is not None:
        return {"source": "axisAlignment", "matrix": given.tolist()}
    matrix, details = estimate_alignment(xyz, faces)
    return {**details, "matrix": [[round(float(v), 9) for v in row] for row in matrix]}


def import_scan(
    benchmark: Benchmark,
    scene_id: str,
    ply: NamedFile,
    *,
    aggregation: NamedFile | None = None,
    segments: NamedFile | None = None,
    boxes: NamedFile | None = None,
    meta: NamedFile | None = None,
    align: bool = True,
    caption: str = "",
    world_frame: str = "",
) -> Scene:
    """A scan as a scene: the canonical PLY (points, colours, instance ids) as its POINT_CLOUD
    asset, its objects with boxes, optional world frames; viewer assets follow in `process_scene`.
    Objects come from a ScanNet aggregation + segments pair, or from a JSON list of boxes.

    The stored cloud and boxes are in the aligned frame (floor on XY, Z up, walls on the axes):
    ScanNet's `axisAlignment` from the scene's .txt (`meta`) when it has one, else an estimate from
    the scan itself (benchmarks/material/alignment.py); `align=False` keeps the scan's own frame. How it
    was aligned goes into the scene's meta and the point cloud's meta as `alignment`."""
    scene_id = _check_scene_id(scene_id)
    if boxes is not None and (aggregation or segments) or boxes is None and not (aggregation and segments):
        raise DomainError("Give objects either as a ScanNet aggregation and segments file pair or as a boxes file.",
                          field="objects")
    errors = []
    points = faces = given = None
    scene_info = {}
    try:
        points = read_ply(ply.content)
        faces = read_ply_faces(ply.content)
    except ScanError as exc:
        errors.append(f"{ply.name}: {exc}")
    if meta is not None:
        try:
            scene_info = scannet_meta(meta.content.decode("utf-8", errors="replace"))
            given = axis_alignment(scene_info) if align else None
        except ScanError as exc:
            errors.append(f"{meta.name}: {exc}")
    inputs = {"aggregation": aggregation, "segments": segments, "boxes": boxes, "meta": meta}
    parsed = {key: _json(file, errors) for key, file in inputs.items() if file is not None and key != "meta"}
    for key in ("aggregation", "segments"):
        if parsed.get(key) is not None:
            _scene_id_matches(parsed[key], scene_id, inputs[key], errors)
    if errors:
        raise MaterialError(errors)
    raw, rgb, _ = points
    alignment = _alignment(raw, faces, given, align)
    matrix = np.asarray(alignment["matrix"], dtype=np.float64)
    xyz = raw if np.array_equal(matrix, IDENTITY) else transform(matrix, raw)
    try:
        if boxes is not None:
            instance, objects = box_objects(raw, parsed["boxes"])
            for obj in objects:
                obj["center"], obj["size"], obj["yaw"] = box_through(matrix, obj["center"], obj["size"], obj["yaw"])
        else:
            instance, objects = scannet_objects(xyz, parsed["aggregation"], parsed["segments"])
    except ScanError as exc:
        raise MaterialError([f"{(inputs.get(exc.source) or ply).name}: {exc}"]) from None
    extra = {"scene_type": scene_info["sceneType"]} if scene_info.get("sceneType") else {}
    return _store_scan(benchmark, scene_id, [ply], xyz, rgb, instance, objects, alignment,
                       objects_from="boxes" if boxes is not None else "scannet", source_format="scannet"
                       if boxes is None else "ply", caption=caption, world_frame=world_frame, extra=extra)


def _store_scan(benchmark, scene_id, sources: list[NamedFile], xyz, rgb, instance, objects, alignment, *,
                objects_from: str, source_format: str, caption: str, world_frame: str, extra: dict) -> Scene:
    """Write a parsed, aligned scan: the canonical PLY, its objects and world frames, the scene's
    meta; refused when the scene already has a scan. process_scene is enqueued on commit."""
    frames = _world_frames(world_frame, objects) if world_frame.strip() else []
    canonical = write_points_ply(xyz, rgb, instance)
    main = sources[0]
    meta = {"source_file": main.name, "source_sha256": hashlib.sha256(main.content).hexdigest(), "points": len(xyz),
            "objects_from": objects_from, "source_format": source_format, "alignment": alignment}
    if len(sources) > 1:
        meta["source_files"] = {f.name: hashlib.sha256(f.content).hexdigest() for f in sources}
    with _all_or_nothing() as stored:
        scene, created = Scene.objects.select_for_update().get_or_create(
            benchmark=benchmark, external_id=scene_id, defaults={"caption": caption.strip()})
        if not created:
            if scene.assets.filter(role=AssetRole.POINT_CLOUD).exists() or scene.scene_objects.exists():
                raise MaterialError([f"{main.name}: scene '{scene_id}' already has a scan"])
            if caption.strip():
                scene.caption = caption.strip()
        scene.meta = {**(scene.meta or {}), "alignment": alignment, "source_format": source_format, **extra}
        scene.save(update_fields=["caption", "meta"])
        stored.store(scene, AssetRole.POINT_CLOUD, f"{scene_id}.ply", canonical, meta)
        SceneObject.objects.bulk_create(
            SceneObject(scene=scene, instance_id=o["instance_id"], label=o["label"][:100], yaw=o.get("yaw", 0.0),
                        center_x=o["center"][0], center_y=o["center"][1], center_z=o["center"][2],
                        size_x=o["size"][0], size_y=o["size"][1], size_z=o["size"][2])
            for o in objects
        )
        anchors = {o.instance_id: o for o in scene.scene_objects.all()}
        WorldFrame.objects.bulk_create(
            WorldFrame(scene=scene, anchor=anchors[iid], side=Side(side), text=text) for iid, side, text in frames
        )
        transaction.on_commit(lambda: process_scene.delay(scene.pk))
    return scene


# --- 3RScan scans and scan folders -----------------------------------------------------------------

RSCAN_MESHES = ("mesh.refined.v2.obj", "mesh.refined.obj")
RSCAN_SEMSEG = ("semseg.v2.json", "semseg.json")
RSCAN_SEGS = ("mesh.refined.0.010000.segs.v2.json", "mesh.refined.0.010000.segs.json")
TEXTURE_SUFFIXES = (".png", ".jpg", ".jpeg")


def _by_basename(files: list[NamedFile]) -> dict[str, NamedFile]:
    return {PurePosixPath(f.name).name: f for f in files}


def _first(named: dict[str, NamedFile], names: tuple[str, ...], suffix: str | None = None) -> NamedFile | None:
    found = next((named[n] for n in names if n in named), None)
    if found is None and suffix:
        matches = [f for n, f in named.items() if n.endswith(suffix)]
        found = matches[0] if len(matches) == 1 else None
    return found


def detect_scan_format(files: list[NamedFile]) -> str | None:
    """"3rscan" for a folder holding a 3RScan mesh (mesh.refined[.v2].obj or any .obj with a
    semseg*.json), "scannet" for one holding a .ply, else None."""
    names = set(_by_basename(files))
    if names & set(RSCAN_MESHES) or (any(n.endswith(".obj") for n in names)
                                      and any(n.startswith("semseg") and n.endswith(".json") for n in names)):
        return "3rscan"
    if any(n.endswith(".ply") for n in names):
        return "scannet"
    return None


def import_3rscan(benchmark: Benchmark, scene_id: str, files: list[NamedFile], *, align: bool = True,
                  caption: str = "", world_frame: str = "") -> Scene:
    """A 3RScan scan folder (`mesh.refined.v2.obj` with vertex colours or a texture through its
    .mtl and `mesh.refined_0.png`, `semseg.v2.json`, `mesh.refined.0.010000.segs.v2.json`) stored
    as a ScanNet scan is: canonical PLY with instance ids, SceneObjects whose boxes are the
    annotated OBBs in the aligned frame (estimated, as 3RScan has no alignment file, unless
    `align=False`)."""
    scene_id = _check_scene_id(scene_id)
    named = _by_basename(files)
    mesh = _first(named, RSCAN_MESHES, ".obj")
    semseg = _first(named, RSCAN_SEMSEG) or next((f for n, f in named.items() if n.startswith("semseg")
                                                  and n.endswith(".json")), None)
    segs = _first(named, RSCAN_SEGS, ".segs.v2.json") or _first(named, (), ".segs.json")
    missing = [what for what, file in (("the mesh (mesh.refined.v2.obj)", mesh), ("semseg.v2.json", semseg),
                                       ("the segments (mesh.refined.0.010000.segs.v2.json)", segs)) if file is None]
    if missing:
        raise MaterialError([f"{scene_id}: missing {what}" for what in missing])
    mtl = _first(named, (), ".mtl")
    images = {n: f.content for n, f in named.items() if n.lower().endswith(TEXTURE_SUFFIXES)}
    errors = []
    points = None
    try:
        points = read_obj(mesh.content, mtl.content if mtl else None, images)
    except ScanError as exc:
        errors.append(f"{mesh.name}: {exc}")
    parsed = {key: _json(file, errors) for key, file in (("semseg", semseg), ("segments", segs))}
    for key, file in (("semseg", semseg), ("segments", segs)):
        if parsed.get(key) is not None:
            _scene_id_matches(parsed[key], scene_id, file, errors)
    if errors:
        raise MaterialError(errors)
    raw, rgb, faces = points
    alignment = _alignment(raw, faces, None, align)
    matrix = np.asarray(alignment["matrix"], dtype=np.float64)
    xyz = raw if np.array_equal(matrix, IDENTITY) else transform(matrix, raw)
    try:
        instance, objects = rscan_objects(xyz, parsed["semseg"], parsed["segments"], matrix)
    except ScanError as exc:
        raise MaterialError([f"{(segs if exc.source == 'segments' else semseg).name}: {exc}"]) from None
    sources = [mesh, semseg, segs, *[f for f in (mtl,) if f], *[named[n] for n in sorted(images)]]
    return _store_scan(benchmark, scene_id, sources, xyz, rgb, instance, objects, alignment, objects_from="3rscan",
                       source_format="3rscan", caption=caption, world_frame=world_frame, extra={})


def import_scan_files(benchmark: Benchmark, scene_id: str, files: list[NamedFile], *, format: str | None = None,
                      align: bool = True, caption: str = "", world_frame: str = "") -> Scene:
    """A scan given as the files of its folder (or archive): 3RScan or ScanNet, named by `format`
    or told from the file names. ScanNet: the `*_vh_clean_2.ply` (or the only .ply), the
    `*.aggregation.json` and `*.segs.json` pair or a `boxes.json`, and `<scene>.txt` if present."""
    format = format or detect_scan_format(files)
    if format == "3rscan":
        return import_3rscan(benchmark, scene_id, files, align=align, caption=caption, world_frame=world_frame)
    if format != "scannet":
        raise MaterialError([f"{scene_id}: neither a 3RScan folder (mesh.refined.v2.obj, semseg.v2.json) nor a "
                             "ScanNet one (a .ply with its aggregation and segments)"])
    named = _by_basename(files)
    ply = _first(named, (f"{scene_id}_vh_clean_2.ply",), "_vh_clean_2.ply") or _first(named, (), ".ply")
    if ply is None:
        raise MaterialError([f"{scene_id}: no .ply in the folder (or more than one, none named "
                             "<scene>_vh_clean_2.ply)"])
    aggregation = (_first(named, (f"{scene_id}.aggregation.json", f"{scene_id}_vh_clean.aggregation.json"))
                   or _first(named, (), ".aggregation.json"))
    segments = (_first(named, (f"{scene_id}_vh_clean_2.0.010000.segs.json",), "_vh_clean_2.0.010000.segs.json")
                or _first(named, (), ".segs.json"))
    boxes = _first(named, ("boxes.json",)) if not (aggregation and segments) else None
    meta = _first(named, (f"{scene_id}.txt",), ".txt")
    return import_scan(benchmark, scene_id, ply, aggregation=aggregation, segments=segments, boxes=boxes, meta=meta,
                       align=align, caption=caption, world_frame=world_frame)


# --- image sets ------------------------------------------------------------------------------------

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
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
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
        overlays = _json(overlay_file, errors) or {}
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
    with _all_or_nothing() as stored:
        for picture in pictures:
            _store_picture(benchmark, picture, flip, stored, report)
        result = import_item_file(benchmark, items[0].name, text, author=author, scene_required=True)
        if not result.ok:
            raise MaterialError(result.errors)
        report.items, report.changes = result.items, result.changes
    return report


def _store_picture(benchmark: Benchmark, picture: _Picture, flip: bool, stored: _StoredFiles,
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


# --- paired videos ----------------------------------------------------------------------------------

STATES = ("before", "after")
OPERATIONS_NAME = "operations.json"


def _state_files(state: str) -> tuple[str, str]:
    return f"{state}.mp4", f"objects_{state}.json"


def _scene_groups(files: list[NamedFile], errors: list[str]) -> dict[str, dict[str, NamedFile]]:
    """Files grouped by scene folder: `scene_800/before.mp4` -> {"scene_800": {"before.mp4": ...}}."""
    groups: dict[str, dict[str, NamedFile]] = {}
    for file in files:
        path = PurePosixPath(file.name)
        if len(path.parts) != 2:
            errors.append(f"{file.name}: expected <scene id>/<file> (before.mp4, after.mp4, objects_before.json, "
                          f"objects_after.json, {OPERATIONS_NAME})")
            continue
        groups.setdefault(path.parts[0], {})[path.name] = file
    return groups


def _probe_video(file: NamedFile, errors: list[str]) -> tuple[dict, bytes] | None:
    """The video's facts and a JPEG poster (its middle frame), or None with the reason in errors."""
    with tempfile.NamedTemporaryFile(suffix=".mp4") as handle:
        handle.write(file.content)
        handle.flush()
        try:
            facts = probe(handle.name)
            if not facts["frames"]:
                raise VideoError("it has no frames")
            png = sample_frames(handle.name, 1, (facts["width"], facts["height"]))[0]
        except VideoError as exc:
            errors.append(f"{file.name}: not a readable video ({exc})")
            return None
    poster = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(poster, format="JPEG", quality=85)
    return facts, poster.getvalue()


def _check_scene_folder(scene_id: str, folder: dict[str, NamedFile], errors: list[str]):
    """The operation log and probed videos of one scene folder once every file checks out, or None."""
    before = len(errors)
    names = [name for state in STATES for name in _state_files(state)] + [OPERATIONS_NAME]
    errors += [f"{scene_id}/{name}: missing" for name in names if name not in folder]
    errors += [f"{scene_id}/{name}: unexpected file" for name in sorted(folder) if name not in names]
    if len(scene_id) > 100:
        errors.append(f"{scene_id}: a scene id has at most 100 characters")
    if len(errors) > before:
        return None
    states = {state: _json(folder[_state_files(state)[1]], errors) for state in STATES}
    for state, objects in states.items():
        if objects is not None and not isinstance(objects, list | dict):
            errors.append(f"{folder[_state_files(state)[1]].name}: expected a JSON list or object of objects")
    operations = _json(folder[OPERATIONS_NAME], errors)
    if operations is not None and (
            not isinstance(operations, list) or not all(isinstance(op, dict) and op for op in operations)):
        errors.append(f"{folder[OPERATIONS_NAME].name}: expected a JSON list of operations (objects)")
    videos = {state: _probe_video(folder[_state_files(state)[0]], errors) for state in STATES}
    return None if len(errors) > before else (operations, videos)


def import_paired_videos(benchmark: Benchmark, files: list[NamedFile]) -> list[Scene]:
    """Per scene folder: before.mp4 / after.mp4 (duration, fps, frame count and a poster each),
    the objects of each state and the operation log (kept as JSON assets). Scenes are created
    when new; a scene that already has videos is refused."""
    errors: list[str] = []
    groups = _scene_groups(files, errors)
    if not groups and not errors:
        errors.append("no scene folders given")
    checked = {scene_id: _check_scene_folder(scene_id, folder, errors) for scene_id, folder in sorted(groups.items())}
    taken = Scene.objects.filter(benchmark=benchmark, external_id__in=groups, assets__role=AssetRole.VIDEO)
    errors += [f"{name}: this scene already has videos" for name in sorted(set(taken.values_list("external_id",
                                                                                                flat=True)))]
    if errors:
        raise MaterialError(errors)
    scenes = []
    with _all_or_nothing() as stored:
        for scene_id, (operations, videos) in checked.items():
            scene, _ = Scene.objects.get_or_create(benchmark=benchmark, external_id=scene_id)
            folder = groups[scene_id]
            # Before first: model evaluation reads a scene's videos in id order.
            for state in STATES:
                facts, poster = videos[state]
                video_name, objects_name = _state_files(state)
                video = stored.store(scene, AssetRole.VIDEO, video_name, folder[video_name].content,
                                     {"which": state, **facts})
                poster_asset = stored.store(scene, AssetRole.VIDEO_POSTER, f"{state}_poster.jpg", poster,
                                            {"which": state, "video": video.pk})
                video.meta["poster"] = poster_asset.pk
                video.save(update_fields=["meta"])
                stored.store(scene, AssetRole.SCENE_META, objects_name, folder[objects_name].content,
                             {"kind": "objects", "which": state})
            stored.store(scene, AssetRole.SCENE_META, OPERATIONS_NAME, folder[OPERATIONS_NAME].content,
                         {"kind": "operations", "count": len(operations)})
            scenes.append(scene)
    return scenes
