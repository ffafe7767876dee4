"""An admin's page for one scene's files: the paired videos in the locked player, every asset with
its checksum and a signed download link, and the upload widget."""

from django.shortcuts import get_object_or_404, render

from benchmarks import roles
from benchmarks.models import AssetRole, Scene

from ..access import role_required


@role_required(roles.ADMIN)
def scene_media(request, scene_id):
    scene = get_object_or_404(Scene.objects.select_related("benchmark"), pk=scene_id)
    assets = list(scene.assets.order_by("role", "id"))
    videos = {a.meta.get("which"): a for a in assets if a.role == AssetRole.VIDEO}
    pair = None
    if {"before", "after"} <= videos.keys():
        pair = {"before": videos["before"].file.url, "after": videos["after"].file.url,
                "fps": videos["before"].meta.get("fps")}
    return render(request, "frontend/scene_media.html", {
        "scene": scene, "scene_list": [scene], "assets": assets, "pair": pair, "asset_roles": AssetRole.choices,
    })
