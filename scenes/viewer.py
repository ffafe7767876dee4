"""What the scene viewer needs, as plain data for templates and the API."""

from django.core.cache import cache

from benchmarks.models import AssetRole, Scene
from benchmarks.selectors import after_state_assets
from benchmarks.services import shown_to_people
from benchmarks.uploads import lasting_url
from benchmarks.world_frames import approved

from .after_state import boxes_after


def _object_box(obj) -> dict:
    return {
        "instance_id": obj.instance_id,
        "label": obj.label,
        "center": [obj.center_x, obj.center_y, obj.center_z],
        "size": [obj.size_x, obj.size_y, obj.size_z],
        "yaw": obj.yaw,
    }


def _viewer_assets(scene: Scene) -> dict:
    """The viewer's files in one query: per role, what scene_asset gives (the newest shown to people)."""
    roles = (AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC)
    newest = {}
    for asset in shown_to_people(scene.assets.filter(role__in=roles)).order_by("-id"):
        newest.setdefault(asset.role, asset)
    return newest


def scene_viewer_data(scene: Scene) -> dict:
    """URLs of the point cloud and both top-view maps, the plain map's data for hover, world frames
    (texts, and the latest as anchor + side for the compass) and the scene's objects with their
    boxes; a missing asset gives None for its URL (and for the map)."""
    assets = _viewer_assets(scene)
    plain, points, semantic = (assets.get(role) for role in (
        AssetRole.TOPVIEW_PLAIN, AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_SEMANTIC))
    # the approved frames only, oldest first: crowd frames waiting for review are not shown
    # (benchmarks/world_frames.py); their texts, and the newest as the compass's anchor and side
    frames = approved(scene.world_frames.select_related("anchor"))
    frame = frames[-1] if frames else None
    return {
        "scene_id": scene.pk,
        "external_id": scene.external_id,
        "caption": scene.caption,
        # read by range for as long as the page is open: a URL that does not expire (uploads.lasting_url)
        "points_url": lasting_url(points) if points else None,
        "topview_plain_url": plain.file.url if plain else None,
        "topview_semantic_url": semantic.file.url if semantic else None,
        "map": plain.meta if plain else None,
        "world_frames": [f.text for f in frames],
        "world_frame": {"anchor_instance_id": frame.anchor.instance_id, "side": frame.side} if frame else None,
        "objects": [_object_box(obj) for obj in scene.scene_objects.order_by("instance_id")],
    }


def after_state_viewer_data(change) -> dict | None:
    """The scene as the change's edit leaves it, for the reviewer's before/after toggle: its after-state's
    files (after_state.py) in scene_viewer_data's shape, the boxes where the edit puts them; None
    until the after-state of the change's current edit is made."""
    made = after_state_assets(change)
    points = made.get(AssetRole.VIEWER_POINTS)
    if points is None:
        return None
    plain, semantic = made.get(AssetRole.TOPVIEW_PLAIN), made.get(AssetRole.TOPVIEW_SEMANTIC)
    objects = [_object_box(obj) for obj in change.scene.scene_objects.order_by("instance_id")]
    return {"scene_id": change.scene_id, "external_id": change.scene.external_id, "points_url": lasting_url(points),
            "topview_plain_url": plain.file.url if plain else None,
            "topview_semantic_url": semantic.file.url if semantic else None,
            "map": plain.meta if plain else None, "objects": boxes_after(objects, change.edit)}


# A crowd opens the same scenes again and again while a scene's files and objects rarely change:
# cache for minutes (well inside the hour a signed storage URL lives).
VIEWER_CACHE_S = 300


def cached_scene_viewer_data(scene: Scene) -> dict:
    """scene_viewer_data, at most VIEWER_CACHE_S old."""
    key = f"viewer:{scene.pk}:{scene.created_at.timestamp()}"  # ids are reused after a database reset
    data = cache.get(key)
    if data is None:
        data = scene_viewer_data(scene)
        cache.set(key, data, VIEWER_CACHE_S)
    return data
