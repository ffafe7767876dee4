"""Scene pages: any scene for reviewers and admins (3D viewer, top views, objects with their boxes,
how the scan was aligned), and an admin's page for one scene's files: the paired videos in the
locked player, every asset with its checksum and a signed download link, and the upload widget."""

import math

from django.shortcuts import get_object_or_404, render

from benchmarks import selectors as benchmark_selectors
from benchmarks.models import AssetRole
from core import roles
from scenes.viewer import scene_viewer_data

from ..access import role_required


@role_required(roles.ADMIN)
def scene_media(request, scene_id):
    scene = get_object_or_404(benchmark_selectors.scenes_with_benchmark(), pk=scene_id)
    assets = benchmark_selectors.assets_of(scene)
    videos = {a.meta.get("which"): a for a in assets if a.role == AssetRole.VIDEO}
    pair = None
    if {"before", "after"} <= videos.keys():
        pair = {"before": videos["before"].file.url, "after": videos["after"].file.url,
                "fps": videos["before"].meta.get("fps")}
    return render(request, "frontend/scene_media.html", {
        "scene": scene, "scene_list": [scene], "assets": assets, "pair": pair, "asset_roles": AssetRole.choices,
    })


ALIGNMENT_SOURCES = {
    "axisAlignment": "ScanNet's axisAlignment (from the scene's .txt), applied as given",
    "estimated": "estimated from the scan: floor plane and dominant wall directions",
    "none": "none: the scan's own frame",
}


@role_required(roles.REVIEWER)
def scene_page(request, scene_id):
    """One scene without needing an item: the viewer, both top views, the objects table (centre,
    size, yaw) and the alignment record (source and 4x4 matrix). Reviewers and admins only."""
    scene = get_object_or_404(benchmark_selectors.scenes_with_benchmark(), pk=scene_id)
    alignment = (scene.meta or {}).get("alignment") or {}
    objects = [{"instance_id": o.instance_id, "label": o.label, "center": o.center, "size": o.size,
                "yaw_deg": math.degrees(o.yaw)} for o in benchmark_selectors.objects_of(scene)]
    facts = {key: value for key, value in alignment.items() if key not in ("source", "matrix")}
    return render(request, "frontend/scene.html", {
        "scene": scene, "viewer": scene_viewer_data(scene), "objects": objects, "alignment": alignment,
        "alignment_source": ALIGNMENT_SOURCES.get(alignment.get("source"), "not recorded (imported before alignment)"),
        "alignment_facts": facts, "is_admin": roles.has_role(request.user, roles.ADMIN),
        "scene_type": (scene.meta or {}).get("scene_type"), "source_format": (scene.meta or {}).get("source_format"),
    })
