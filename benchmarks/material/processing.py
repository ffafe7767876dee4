"""Derived viewer assets of a scene: the HLPC point file and the plain and semantic top views.

Importers (the demo generator, PLY/ScanNet scans through `benchmarks.tasks.process_scene`) hand
the decoded cloud here; this is the one place that turns points into what pages show.
"""

import numpy as np
from django.db import transaction

from benchmarks.models import Asset, AssetRole, Scene
from benchmarks.services import store_asset

from .pointcloud import encode_viewer_points, level_split, quantisation
from .topview import render_topview

DERIVED_ROLES = (AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC)


def _points_meta(xyz: np.ndarray, content: bytes) -> dict:
    origin, step = quantisation(xyz)
    n = len(xyz)
    return {
        "format": "HLPC",
        "version": 2,
        "points": n,
        "levels": [len(indices) for indices in level_split(n)],
        "bbox": [xyz.min(axis=0).tolist(), xyz.max(axis=0).tolist()] if n else None,
        "step": step.tolist(),
        "bytes_per_point": round(len(content) / n, 3) if n else None,
    }


def build_viewer_assets(
    scene: Scene, xyz: np.ndarray, rgb: np.ndarray, instance: np.ndarray, objects: list[dict]
) -> list[Asset]:
    """Encode the cloud for the viewer and render both top views; replaces the scene's earlier ones.

    `objects` are {"instance_id", "label", "center": [x, y, z], "size": [sx, sy, sz]} with an
    optional "yaw"; the top views' meta keeps each label's centroid and box for hover. Returns
    the new assets (points, plain map, semantic map). Re-running leaves exactly one of each:
    old rows go in the same transaction, their files once it commits.
    """
    xyz = np.asarray(xyz, dtype=np.float32)
    points = encode_viewer_points(xyz, rgb, instance)
    plain_png, plain_meta = render_topview(xyz, rgb, objects)
    semantic_png, semantic_meta = render_topview(xyz, rgb, objects, semantic=True)
    name = scene.external_id
    files = [
        (AssetRole.VIEWER_POINTS, f"{name}.hlpc", points, _points_meta(xyz, points)),
        (AssetRole.TOPVIEW_PLAIN, f"{name}_topview_plain.png", plain_png, plain_meta),
        (AssetRole.TOPVIEW_SEMANTIC, f"{name}_topview_semantic.png", semantic_png, semantic_meta),
    ]
    with transaction.atomic():
        old = list(Asset.objects.select_for_update().filter(scene=scene, role__in=DERIVED_ROLES))
        Asset.objects.filter(pk__in=[asset.pk for asset in old]).delete()
        created = [store_asset(scene, role, filename, content, meta) for role, filename, content, meta in files]
        transaction.on_commit(lambda: _delete_files(old))
    return created


def _delete_files(assets: list[Asset]) -> None:
    for asset in assets:
        asset.file.delete(save=False)
