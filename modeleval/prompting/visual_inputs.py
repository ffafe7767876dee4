"""What a model is shown for an item: its visual input, named as Hypo3D's tables name them.

`caption_only` (the scene caption in the prompt, no image), `top_view_plain` and `top_view_semantic`
(the scene's latest top-view map), `multi_view:N` and `egocentric:N` (N of the scene's posed colour
frames from its RGB-D capture, scenes/rgbd_frames.py, where it has at least N; else N
camera views rendered from the scan, scenes/renders.py; the run records which,
`view_sources`), `point_cloud` (the scan's points, for 3D-input models), `image` (every image of the
scene) and `video_frames` (frames sampled from each of the scene's videos).

A model's modality is its runs' input unless a run chooses another. Renders are made on the default
queue before a run infers (modeleval.services); the GPU worker only reads the stored PNGs."""

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from django.db.models import Q

from benchmarks import overlays, protocols
from benchmarks.edit_digest import edit_digest
from benchmarks.models import Asset, AssetRole, Family, Item, Scene
from benchmarks.services import scene_asset, shown_to_people
from scenes.frames import frame_set
from scenes.renders import MAX_VIEWS, SET_KINDS, stored_view_set
from scenes.rgbd_frames import posed_view_set, scenes_with_frames
from scenes.scans import load_scene_points

from ..models import ModelSpec

Kind = ModelSpec.Modality
VIEW_SET_KINDS = frozenset(SET_KINDS)  # multi_view, egocentric: the ones that take a view count
DEFAULT_VIEWS = 4
# Inputs made from a 3D scan: only families whose scenes are scans can be shown them.
SCAN_KINDS = frozenset({Kind.TOP_VIEW_PLAIN, Kind.TOP_VIEW_SEMANTIC, Kind.MULTI_VIEW, Kind.EGOCENTRIC,
                        Kind.POINT_CLOUD})
SCAN_FAMILIES = frozenset({Family.HYPO3D})
# Inputs an image-taking model is given as pictures (a mirrored variant mirrors each).
IMAGE_KINDS = frozenset(Kind) - {Kind.CAPTION_ONLY, Kind.POINT_CLOUD}
TOP_VIEW_ROLES = {Kind.TOP_VIEW_PLAIN: AssetRole.TOPVIEW_PLAIN, Kind.TOP_VIEW_SEMANTIC: AssetRole.TOPVIEW_SEMANTIC}


class VisualInput(NamedTuple):
    kind: str
    views: int = 0  # for multi_view and egocentric

    @classmethod
    def parse(cls, name: str) -> "VisualInput":
        """`multi_view:4` -> VisualInput("multi_view", 4); ValueError saying what is accepted."""
        kind, colon, count = str(name).partition(":")
        if kind not in Kind.values:
            raise ValueError(f"{name!r} is not a visual input; choose one of {', '.join(names())}.")
        if kind not in VIEW_SET_KINDS:
            if colon:
                raise ValueError(f"{kind} takes no view count.")
            return cls(kind)
        if not count.isdigit() or not 1 <= int(count) <= MAX_VIEWS:
            raise ValueError(f"{kind} takes a view count from 1 to {MAX_VIEWS}, e.g. {kind}:{DEFAULT_VIEWS}.")
        return cls(kind, int(count))

    def __str__(self) -> str:
        return f"{self.kind}:{self.views}" if self.kind in VIEW_SET_KINDS else self.kind

    @property
    def is_rendered(self) -> bool:
        return self.kind in VIEW_SET_KINDS


def names() -> list[str]:
    return [f"{kind}:N" if kind in VIEW_SET_KINDS else kind for kind in Kind.values]


def posed_scenes(visual_input: VisualInput, scene_ids) -> set[int]:
    """Those of the scenes a view-set input shows as posed frames (the others as renders)."""
    return scenes_with_frames(scene_ids, visual_input.views) if visual_input.is_rendered else set()


def view_sources(visual_input: VisualInput, scene_ids) -> dict:
    """What a view-set input shows of each scene, as a run records it (Run.inputs `views`):
    {"posed_frames": [external ids], "renders": [external ids]}, empty lists left out."""
    posed = posed_scenes(visual_input, scene_ids)
    sources = {"posed_frames": [], "renders": []}
    for pk, external_id in Scene.objects.filter(pk__in=scene_ids).order_by("external_id").values_list(
            "pk", "external_id"):
        sources["posed_frames" if pk in posed else "renders"].append(external_id)
    return {source: scenes for source, scenes in sources.items() if scenes}


def model_default(model: ModelSpec) -> str:
    """The model's modality as a visual input (a view set's count from config `n_views`)."""
    if model.modality in VIEW_SET_KINDS:
        return f"{model.modality}:{(model.config or {}).get('n_views', DEFAULT_VIEWS)}"
    return model.modality


@dataclass(frozen=True)
class PointCloudInput:
    """A scene's scan for a 3D-input model, in the scene's aligned frame (metres, z up): one row per
    point of `xyz` (float32, N x 3), `rgb` (uint8, N x 3) and `instance` (uint16, N; 0 = no object,
    else a SceneObject's instance_id)."""

    scene: str  # the scene's external id
    xyz: np.ndarray
    rgb: np.ndarray
    instance: np.ndarray


def point_cloud(scene: Scene) -> PointCloudInput:
    asset = scene_asset(scene, AssetRole.POINT_CLOUD)
    if asset is None:
        raise LookupError(f"scene {scene.external_id} has no point cloud")
    return _points_of(scene, asset.pk, asset.file.name)


# A batch's items mostly share a scene: its scan is read once (a 10M-point scan is 170 MB of arrays).
# Keyed by the file's (random) name too: ids are reused after a database reset.
@lru_cache(maxsize=2)
def _points_of(scene: Scene, asset_id: int, name: str) -> PointCloudInput:
    xyz, rgb, instance, _ = load_scene_points(scene)
    return PointCloudInput(scene.external_id, np.asarray(xyz, np.float32), np.asarray(rgb, np.uint8),
                           np.asarray(instance, np.uint16))


def images(visual_input: VisualInput, model: ModelSpec, item: Item, flip: bool = False) -> list[bytes]:
    """The pictures shown for this item (none for a text or point-cloud input, or a vision-blind
    model); mirrored for a flipped variant or an imported `-flip` row (the stored twin when the
    import made one); the arrows and boxes drawn on an image, the item's own marks included, are
    printed into its pixels as the human's page draws them (benchmarks/overlays.py)."""
    if item.scene is None:
        return []
    return scene_images(visual_input, model, item.scene, flip, item)


def scene_images(visual_input: VisualInput, model: ModelSpec, scene: Scene, flip: bool = False,
                 item: Item | None = None) -> list[bytes]:
    """A scene's pictures for this input (what a run shows for its items, what drafting sends), with
    the images' overlays (and `item`'s marks) drawn in."""
    if model.withhold_stimulus or visual_input.kind not in IMAGE_KINDS:
        return []
    if visual_input.kind == Kind.VIDEO_FRAMES:
        n = int(model.config.get("n_frames", 8))
        size = tuple(model.config.get("frame_size", (448, 448)))
        videos = scene.assets.filter(role=AssetRole.VIDEO).order_by("id")  # before, then after
        if not videos:
            raise LookupError(f"scene {scene.external_id} has no video")
        frames = []
        for video in videos:  # each set decoded once and stored (scenes/frames.py)
            frames += frame_set(video, n, size)
        return [protocols.mirror_image(frame) for frame in frames] if flip else frames
    if visual_input.is_rendered:
        posed = posed_view_set(scene, visual_input.views)
        if posed:  # the capture's own frames: no overlays are drawn on them
            pictures = [_file_bytes(frame.file) for frame in posed]
            return [protocols.mirror_image(picture) for picture in pictures] if flip else pictures
        assets = [a for a in stored_view_set(scene, str(visual_input)) if AFTER_STATE not in (a.meta or {})]
        if len(assets) != visual_input.views:  # rendered before inference; never rendered on a GPU worker
            raise LookupError(f"scene {scene.external_id} has no {visual_input} renders")
    elif visual_input.kind == Kind.IMAGE:
        assets = list(scene.assets.filter(role=AssetRole.IMAGE).order_by("id"))
    else:  # the latest map of a top view
        assets = [asset] if (asset := latest_top_view(scene.pk, visual_input.kind)) else []
    if not assets:
        raise LookupError(f"scene {scene.external_id} has no {visual_input} asset")
    marks = item if visual_input.kind == Kind.IMAGE else None  # an item's marks sit on the scene's images
    # each image as the evaluator sees it: mirrored where asked, its overlays and the item's marks drawn in
    return [overlays.stimulus_image(asset, index, marks, flip) for index, asset in enumerate(assets)]


def top_view_maps(scene_ids, kind: str, aligned: bool = False):
    """The scenes' top-view maps of `kind`: those people see, or (aligned=True) those rotated into the world
    frame, which only a run asking for them (Hypo3D Table 11's `top_view: aligned`) is shown; never a
    change's after-state (`scene_state: changed` alone is shown those)."""
    maps = before_state(Asset.objects.filter(scene_id__in=scene_ids, role=TOP_VIEW_ROLES[kind]))
    return maps.filter(meta__aligned=True) if aligned else shown_to_people(maps)


# An asset showing a change's after-state (the changed scene) names the change in its meta.
AFTER_STATE = "after_state"


def after_state_maps(change_ids, role: str):
    """The after-state assets of `role` (top views, viewer points, renders) of these changes: meta
    `{"after_state": <change id>, ...}`, found by a key test (`__in` on the key: portable, where JSON
    containment is PostgreSQL's alone)."""
    return Asset.objects.filter(role=role, meta__after_state__in=[int(pk) for pk in change_ids])


def of_edit(assets, edit):
    """Those of a change's after-state assets made from its edit as it is now (meta `edit_digest`,
    benchmarks.edit_digest; one without the mark, an uploaded one, is taken as it is):
    an after-state built from an earlier edit is never shown."""
    return assets.filter(Q(meta__edit_digest=edit_digest(edit)) | Q(meta__edit_digest__isnull=True))


def before_state(assets):
    """The assets less any change's after-state (a missing key: SQLite and PostgreSQL alike)."""
    return assets.filter(meta__after_state__isnull=True)


def latest_top_view(scene_id: int, kind: str, aligned: bool = False):
    return top_view_maps([scene_id], kind, aligned).order_by("-id").first()


def _file_bytes(file) -> bytes:
    with file.open("rb") as handle:
        return handle.read()
