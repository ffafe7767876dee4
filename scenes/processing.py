"""Derived viewer assets of a scene: the HLPC point file (levels, or an octree for a cloud over the
viewer's point budget) and the plain and semantic top views.

Importers (the demo generator, PLY/ScanNet scans through `scenes.tasks.process_scene`) hand
the decoded cloud here; this is the one place that turns points into what pages show. A processed
scene with an approved world frame also gets its top views turned into that frame from the same
points (aligned_topview.py, Hypo3D Table 11's aligned map; `topview_points` reads them again for it).
"""

import hashlib
import shutil
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from django.core.files import File
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from benchmarks.models import Asset, AssetRole, Scene
from benchmarks.services import delete_assets, scene_asset, store_asset

from .aligned_topview import aligned_files, approved_frames, is_current, made_here
from .pointcloud import (
    LEVEL_SEED,
    NODE_POINTS,
    OCTREE_VERSION,
    VERSION,
    VIEWER_BUDGET_POINTS,
    encode_octree,
    encode_viewer_points,
    level_split,
    quantisation,
    read_octree,
)
from .topview import render_topview

DERIVED_ROLES = (AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC)
# A 512-pixel top view is drawn from at most this many points (a uniform sample): ten per pixel is
# plenty, and a 10M-point scan rendered whole took most of its processing time.
TOPVIEW_POINTS = 2_000_000


def viewer_points(xyz: np.ndarray, rgb: np.ndarray, instance: np.ndarray) -> tuple[bytes, dict]:
    """The HLPC file and its meta: the levels file (v2) up to the viewer's point budget, which the
    browser reads whole, else the octree (v3), which it reads node by node within the budget."""
    n = len(xyz)
    octree = n > VIEWER_BUDGET_POINTS
    content = encode_octree(xyz, rgb, instance) if octree else encode_viewer_points(xyz, rgb, instance)
    _, step = quantisation(xyz)
    meta = {
        "format": "HLPC",
        "version": OCTREE_VERSION if octree else VERSION,
        "points": n,
        "bbox": [xyz.min(axis=0).tolist(), xyz.max(axis=0).tolist()] if n else None,
        "step": step.tolist(),
        "bytes_per_point": round(len(content) / n, 3) if n else None,
    }
    if octree:
        nodes = read_octree(content)["nodes"]
        meta.update(nodes=len(nodes), depth=max(node["depth"] for node in nodes), node_points=NODE_POINTS)
    else:
        meta["levels"] = [len(indices) for indices in level_split(n)]
    return content, meta


def build_viewer_assets(
    scene: Scene, xyz: np.ndarray, rgb: np.ndarray, instance: np.ndarray, objects: list[dict], aligned: bool = False
) -> list[Asset]:
    """Encode the cloud for the viewer and render both top views; replaces the scene's earlier ones.

    `objects` are {"instance_id", "label", "center": [x, y, z], "size": [sx, sy, sz]} with an
    optional "yaw"; the top views' meta keeps each label's centroid and box for hover. Returns
    the new assets (points, plain map, semantic map; with `aligned`, as process_scene asks, then the
    maps turned into the scene's approved world frame, when it has one: aligned_topview.py; the demo's
    rooms leave them to `manage.py make_aligned_topviews`). Re-running leaves exactly one of each: old
    rows go in the same transaction (aligned maps too: they are derived), their files once it commits.
    """
    xyz = np.asarray(xyz, dtype=np.float32)
    points, points_meta = viewer_points(xyz, rgb, instance)
    sample = _topview_sample(len(xyz))
    top_xyz, top_rgb = xyz[sample], np.asarray(rgb)[sample]
    plain_png, plain_meta = render_topview(top_xyz, top_rgb, objects)
    semantic_png, semantic_meta = render_topview(top_xyz, top_rgb, objects, semantic=True)
    name = scene.external_id
    files = [
        (AssetRole.VIEWER_POINTS, f"{name}.hlpc", points, points_meta),
        (AssetRole.TOPVIEW_PLAIN, f"{name}_topview_plain.png", plain_png, plain_meta),
        (AssetRole.TOPVIEW_SEMANTIC, f"{name}_topview_semantic.png", semantic_png, semantic_meta),
        *(aligned_files(scene, top_xyz, top_rgb, objects) if aligned else []),
    ]
    with transaction.atomic():
        old = list(Asset.objects.select_for_update().filter(scene=scene, role__in=DERIVED_ROLES))
        delete_assets(old)
        created = [store_asset(scene, role, filename, content, meta) for role, filename, content, meta in files]
    return created


# --- scans over the in-memory builder's reach --------------------------------------------------------

# Over this many points the octree is built out of core from the stored PLY (octree_disk.py, bounded
# memory) rather than in memory (about 60 bytes a point: 10M points peaked at 1.35 GB).
OUT_OF_CORE_POINTS = 20_000_000


def _file_asset(scene: Scene, role: str, filename: str, path: Path, meta: dict) -> Asset:
    """store_asset for a file on disk: hashed and copied to storage in blocks, never read whole."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    asset = Asset(scene=scene, role=role, size=path.stat().st_size, sha256=digest.hexdigest(), meta=meta)
    with open(path, "rb") as handle:
        asset.file.save(filename, File(handle), save=False)
    try:
        asset.save()
    except BaseException:
        asset.file.storage.delete(asset.file.name)
        raise
    return asset


def build_large_scene_assets(scene: Scene) -> list[Asset] | None:
    """The viewer assets of a scene whose canonical PLY holds over OUT_OF_CORE_POINTS points, built
    from the file chunk by chunk (the octree out of core, the top views from the same seeded sample
    as build_viewer_assets, and the aligned maps with them); None for a smaller scan, which
    build_viewer_assets handles in memory. A scan in object storage is first copied to a local
    temporary file in blocks."""
    from .octree_disk import build_octree_file
    from .scans import ply_chunks

    scan = scene_asset(scene, AssetRole.POINT_CLOUD)
    if scan is None or int((scan.meta or {}).get("points", 0)) <= OUT_OF_CORE_POINTS:
        return None
    objects = scene_objects(scene)
    with tempfile.TemporaryDirectory(prefix="scene-") as tmp:
        chunks = ply_chunks(_local_ply(scan, Path(tmp)))
        points = Path(tmp) / "points.hlpc"
        meta = build_octree_file(chunks, points)
        top_xyz, top_rgb = _sampled_chunks(chunks, meta["points"])
        plain_png, plain_meta = render_topview(top_xyz, top_rgb, objects)
        semantic_png, semantic_meta = render_topview(top_xyz, top_rgb, objects, semantic=True)
        aligned = aligned_files(scene, top_xyz, top_rgb, objects)
        name = scene.external_id
        with transaction.atomic():
            old = list(Asset.objects.select_for_update().filter(scene=scene, role__in=DERIVED_ROLES))
            delete_assets(old)
            created = [_file_asset(scene, AssetRole.VIEWER_POINTS, f"{name}.hlpc", points, meta),
                       store_asset(scene, AssetRole.TOPVIEW_PLAIN, f"{name}_topview_plain.png", plain_png, plain_meta),
                       store_asset(scene, AssetRole.TOPVIEW_SEMANTIC, f"{name}_topview_semantic.png", semantic_png,
                                   semantic_meta)]
            created += [store_asset(scene, role, filename, content, meta) for role, filename, content, meta in aligned]
    return created


def scene_objects(scene: Scene) -> list[dict]:
    return [{"instance_id": o.instance_id, "label": o.label, "center": list(o.center), "size": list(o.size),
             "yaw": o.yaw} for o in scene.scene_objects.order_by("instance_id")]


def _local_ply(scan: Asset, tmp: Path) -> Path:
    """The scan's file on local disk: its own path, or (object storage) a copy in `tmp`, made in blocks."""
    try:
        return Path(scan.file.path)
    except NotImplementedError:  # object storage: no local path
        ply = tmp / "scan.ply"
        with scan.file.open("rb") as source, open(ply, "wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
        return ply


def _sampled_chunks(chunks, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The top views' seeded sample (_topview_sample) of a cloud of `n` points read chunk by chunk."""
    sample = _topview_sample(n)
    if isinstance(sample, slice):
        sample = np.arange(n)
    picked, start = [], 0
    for xyz, rgb, _ in chunks():
        here = sample[(sample >= start) & (sample < start + len(xyz))] - start
        picked.append((xyz[here], rgb[here]))
        start += len(xyz)
    return np.concatenate([p[0] for p in picked]), np.concatenate([p[1] for p in picked])


def topview_points(scene: Scene) -> tuple[np.ndarray, np.ndarray, list[dict]] | None:
    """The points the scene's top views are drawn from (the same seeded sample of its scan) and its
    objects; None for a scene without a scan. Over OUT_OF_CORE_POINTS the scan is read chunk by chunk."""
    from .scans import load_scene_points, ply_chunks

    scan = scene_asset(scene, AssetRole.POINT_CLOUD)
    if scan is None:
        return None
    if int((scan.meta or {}).get("points", 0)) > OUT_OF_CORE_POINTS:
        with tempfile.TemporaryDirectory(prefix="scene-") as tmp:
            xyz, rgb = _sampled_chunks(ply_chunks(_local_ply(scan, Path(tmp))), int(scan.meta["points"]))
        return xyz, rgb, scene_objects(scene)
    xyz, rgb, _, objects = load_scene_points(scene)
    sample = _topview_sample(len(xyz))
    return np.asarray(xyz, dtype=np.float32)[sample], np.asarray(rgb)[sample], objects


def _topview_sample(n: int) -> slice | np.ndarray:
    if n <= TOPVIEW_POINTS:
        return slice(None)
    return np.sort(np.random.default_rng(LEVEL_SEED).choice(n, TOPVIEW_POINTS, replace=False))


# --- the reaper: scenes whose processing died ---------------------------------------------------

# A scene is sent again at most this many times (counted in its meta): a scan that fails every time
# stops being retried instead of costing a worker each period.
MAX_PROCESSING_ATTEMPTS = 3


def scenes_to_reprocess(stale_after_s: float) -> list[int]:
    """Scenes whose scan was stored more than `stale_after_s` ago and that still have no viewer files
    (they are written in one transaction with the top views): their processing died with its worker,
    or its message was lost. Each is returned once per `stale_after_s` and at most
    MAX_PROCESSING_ATTEMPTS times (scene.meta["processing_attempts"]), so sending them is idempotent;
    a scene whose processing was cancelled is not sent again."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=stale_after_s)
    viewer = Asset.objects.filter(scene=OuterRef("pk"), role=AssetRole.VIEWER_POINTS)
    scan = Asset.objects.filter(scene=OuterRef("pk"), role=AssetRole.POINT_CLOUD, created_at__lt=cutoff)
    candidates = (Scene.objects.filter(Exists(scan)).exclude(Exists(viewer))
                  .exclude(meta__has_key="processing_cancelled").values_list("pk", flat=True))
    due = []
    for scene_id in candidates:
        with transaction.atomic():
            scene = Scene.objects.select_for_update().get(pk=scene_id)
            attempts = int(scene.meta.get("processing_attempts", 0))
            sent = scene.meta.get("processing_sent_at")
            if attempts >= MAX_PROCESSING_ATTEMPTS or (sent and datetime.fromisoformat(sent) > cutoff):
                continue
            scene.meta = {**scene.meta, "processing_attempts": attempts + 1, "processing_sent_at": now.isoformat()}
            scene.save(update_fields=["meta"])
            due.append(scene_id)
    return due


def cancel_scene_processing(job) -> None:
    """on_cancel("scene_processing"): its task stops before writing viewer files, so the scene keeps
    what it had (none for a new scan); the mark says why and keeps the reaper from sending it again
    until a processing starts anew (`processing_started`)."""
    scene_id = int(job.key.split(":")[1])  # scene-processing:<scene>:<attempt> (dispatch.scene_processing_job)
    scene = Scene.objects.select_for_update().filter(pk=scene_id).first()
    if scene is not None:
        scene.meta = {**scene.meta, "processing_cancelled": job.message}
        scene.save(update_fields=["meta"])


def processing_started(scene: Scene) -> None:
    """A processing asked for again (a new scan, by hand) lifts an earlier cancel's mark."""
    if "processing_cancelled" in scene.meta:
        scene.meta = {key: value for key, value in scene.meta.items() if key != "processing_cancelled"}
        scene.save(update_fields=["meta"])


def build_aligned_topviews(scene: Scene) -> list[Asset]:
    """Render and store the scene's aligned maps from its scan, replacing the ones made before (a
    re-run for the same frame leaves one of each role). [] when the scene has no approved frame (its
    old maps go) or no scan; also [] when another frame was approved while rendering (that
    approval's task makes its maps)."""
    frames = approved_frames(scene.pk)
    loaded = topview_points(scene) if frames else None
    files = aligned_files(scene, *loaded, frames=frames) if loaded is not None else []
    frame_ids = [f.pk for f in frames]
    with transaction.atomic():
        Scene.objects.select_for_update().filter(pk=scene.pk).first()
        if [f.pk for f in approved_frames(scene.pk)] != frame_ids:
            return []
        old = list(made_here(Asset.objects.select_for_update().filter(scene=scene)))
        if not files:  # nothing to render from: only the maps of frames no longer approved go
            delete_assets([a for a in old if not is_current(a, frame_ids)])
            return []
        delete_assets(old)
        return [store_asset(scene, role, filename, content, meta) for role, filename, content, meta in files]
