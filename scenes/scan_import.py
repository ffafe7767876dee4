"""3D scans as scenes: a ScanNet-style PLY with its objects (aggregation and segments, or boxes), a LAS/LAZ
survey cloud with boxes, a 3RScan folder, or a scan folder told apart by its file names; aligned, stored as the canonical PLY
with objects and world frames, and processed for the viewer once committed."""

import hashlib
import re
from pathlib import PurePosixPath

import numpy as np
from django.db import transaction

from benchmarks.models import AssetRole, Benchmark, Scene, SceneObject, Side, WorldFrame
from core.errors import DomainError

from . import dispatch
from .alignment import IDENTITY, box_through, estimate_alignment, transform
from .files import MaterialError, NamedFile, all_or_nothing, read_json
from .las import LAS_SUFFIXES, read_las
from .obj import read_obj
from .scans import (
    ScanError,
    axis_alignment,
    box_objects,
    read_ply,
    read_ply_faces,
    rscan_objects,
    scannet_meta,
    scannet_objects,
    write_points_ply,
)

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


def _scene_ids_match(parsed: dict, files: dict[str, NamedFile], scene_id: str, errors: list[str]) -> None:
    """Each parsed segmentation file that names its scene names this one."""
    for key, file in files.items():
        data = parsed.get(key)
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


def _aligned(raw, faces, given, align: bool) -> tuple[dict, np.ndarray, np.ndarray]:
    """The alignment record, its matrix, and the points in the aligned frame."""
    alignment = _alignment(raw, faces, given, align)
    matrix = np.asarray(alignment["matrix"], dtype=np.float64)
    return alignment, matrix, raw if np.array_equal(matrix, IDENTITY) else transform(matrix, raw)


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
    """A scan as a scene (`ply` a PLY, or a LAS/LAZ file told by its name, whose survey coordinates move to
    a local origin kept in the scene's meta as `origin`): the canonical PLY (points, colours, instance ids) as its POINT_CLOUD
    asset, its objects with boxes, optional world frames; viewer assets follow in `process_scene`.
    Objects come from a ScanNet aggregation + segments pair, or from a JSON list of boxes.

    The stored cloud and boxes are in the aligned frame (floor on XY, Z up, walls on the axes):
    ScanNet's `axisAlignment` from the scene's .txt (`meta`) when it has one, else an estimate from
    the scan itself (scenes/alignment.py); `align=False` keeps the scan's own frame. How it
    was aligned goes into the scene's meta and the point cloud's meta as `alignment`."""
    scene_id = _check_scene_id(scene_id)
    if boxes is not None and (aggregation or segments) or boxes is None and not (aggregation and segments):
        raise DomainError("Give objects either as a ScanNet aggregation and segments file pair or as a boxes file.",
                          field="objects")
    errors = []
    points = faces = given = None
    scene_info, origin = {}, None
    try:
        if ply.name.lower().endswith(LAS_SUFFIXES):
            *points, origin = read_las(ply.content)
        else:
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
    parsed = {key: read_json(file, errors) for key, file in inputs.items() if file is not None and key != "meta"}
    _scene_ids_match(parsed, {"aggregation": aggregation, "segments": segments}, scene_id, errors)
    if errors:
        raise MaterialError(errors)
    raw, rgb, _ = points
    alignment, matrix, xyz = _aligned(raw, faces, given, align)
    try:
        if boxes is not None:
            instance, objects = box_objects(raw, _to_local(parsed["boxes"], origin))
            for obj in objects:
                obj["center"], obj["size"], obj["yaw"] = box_through(matrix, obj["center"], obj["size"], obj["yaw"])
        else:
            instance, objects = scannet_objects(xyz, parsed["aggregation"], parsed["segments"])
    except ScanError as exc:
        raise MaterialError([f"{(inputs.get(exc.source) or ply).name}: {exc}"]) from None
    extra = {"scene_type": scene_info["sceneType"]} if scene_info.get("sceneType") else {}
    if origin is not None:
        extra["origin"] = origin
    source_format = "las" if origin is not None else "scannet" if boxes is None else "ply"
    return _store_scan(benchmark, scene_id, [ply], xyz, rgb, instance, objects, alignment,
                       objects_from="boxes" if boxes is not None else "scannet", source_format=source_format,
                       caption=caption, world_frame=world_frame, extra=extra)


def _to_local(boxes, origin: list[float] | None):
    """Boxes written in a survey cloud's own coordinates, moved with its points to the local origin."""
    if origin is None or not isinstance(boxes, list):
        return boxes
    def moved(value):
        if isinstance(value, list) and len(value) == 3 and all(isinstance(v, (int, float)) for v in value):
            return [v - o for v, o in zip(value, origin, strict=True)]
        return value  # box_objects names what is wrong with it
    return [{k: moved(v) if k in ("center", "min", "max") else v for k, v in box.items()}
            if isinstance(box, dict) else box for box in boxes]


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
    with all_or_nothing() as stored:
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
        transaction.on_commit(lambda: dispatch.send_scene_processing(scene.pk))
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
    semseg*.json), "scannet" for one holding a .ply, "las" for one holding a .las or .laz, else None."""
    names = set(_by_basename(files))
    if names & set(RSCAN_MESHES) or (any(n.endswith(".obj") for n in names)
                                      and any(n.startswith("semseg") and n.endswith(".json") for n in names)):
        return "3rscan"
    if any(n.endswith(".ply") for n in names):
        return "scannet"
    if any(n.lower().endswith(LAS_SUFFIXES) for n in names):
        return "las"
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
    inputs = {"semseg": semseg, "segments": segs}
    parsed = {key: read_json(file, errors) for key, file in inputs.items()}
    _scene_ids_match(parsed, inputs, scene_id, errors)
    if errors:
        raise MaterialError(errors)
    raw, rgb, faces = points
    alignment, matrix, xyz = _aligned(raw, faces, None, align)
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
    `*.aggregation.json` and `*.segs.json` pair or a `boxes.json`, and `<scene>.txt` if present. LAS: the one
    .las or .laz with a `boxes.json`."""
    format = format or detect_scan_format(files)
    if format == "3rscan":
        return import_3rscan(benchmark, scene_id, files, align=align, caption=caption, world_frame=world_frame)
    named = _by_basename(files)
    if format == "las":
        clouds = [f for n, f in named.items() if n.lower().endswith(LAS_SUFFIXES)]
        if len(clouds) != 1:
            raise MaterialError([f"{scene_id}: a LAS scan folder holds one .las or .laz file, not {len(clouds)}"])
        return import_scan(benchmark, scene_id, clouds[0], boxes=_first(named, ("boxes.json",)), align=align,
                           caption=caption, world_frame=world_frame)
    if format != "scannet":
        raise MaterialError([f"{scene_id}: neither a 3RScan folder (mesh.refined.v2.obj, semseg.v2.json), a "
                             "ScanNet one (a .ply with its aggregation and segments) nor a LAS one (a .las or .laz "
                             "with boxes.json)"])
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
