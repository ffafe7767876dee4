"""`scene_state: imagined | changed` (Run.inputs): a condition no paper has run. `imagined` (the
default, the papers' condition) shows the scene before its change and asks the model to imagine it;
`changed` shows every visual input of the item from its change's after-state (the changed scene the
platform builds from the change's geometry: assets whose meta says `{"after_state": <change id>}`):
the top-view map of the run's kind, the view set's renders (`multi_view:N`, `egocentric:N`: the
after-state rendered from the cameras the scene before its change is shown from, made in the run's render
step; never the capture's posed frames themselves, which show the scene as it was),
or the point cloud (the after-state's viewer points, for a 3D-input model). The prompt is the run's
template as it is, the change's text included: the paper's words are kept and nothing is added, so
the two conditions differ only in what is shown.

A `changed` run is refused at launch (a DomainError on `inputs`, how many and which items) when one
of its items has no change, a change without geometry (`ContextChange.edit`), or no after-state asset
of what the run shows made from the change's edit as it is now (meta `edit_digest`; for a view set, its
after-state's points, from which the views are rendered)."""

from benchmarks import overlays, protocols
from benchmarks.edit_digest import edit_digest
from benchmarks.models import AssetRole, Item
from core.errors import DomainError
from scenes.pointcloud import decode_octree_node, decode_viewer_points, read_octree

from ..models import ModelSpec
from . import visual_inputs
from .prompts import InferenceRequest
from .visual_inputs import PointCloudInput, VisualInput

Kind = ModelSpec.Modality
IMAGINED, CHANGED = "imagined", "changed"
VALUES = (IMAGINED, CHANGED)
LISTED = 10  # items named in a refusal; the count says how many in all
# What each kind of input is shown from the after-state: the asset role (renders: of the run's set).
ROLES = {**visual_inputs.TOP_VIEW_ROLES, Kind.MULTI_VIEW: AssetRole.RENDER, Kind.EGOCENTRIC: AssetRole.RENDER,
         Kind.POINT_CLOUD: AssetRole.VIEWER_POINTS}
NOT_WITH = ("camera_view", "extra_frames")  # pictures of the scene as it was


def is_changed(inputs: dict | None) -> bool:
    return (inputs or {}).get("scene_state") == CHANGED


def _name(external_id: str, pk: int) -> str:
    return external_id or f"#{pk}"


def _listed(names: list[str]) -> str:
    more = len(names) - LISTED
    return ", ".join(names[:LISTED]) + (f" and {more} more" if more > 0 else "")


def _after_state_assets(change_ids, shown: VisualInput, role: str | None = None):
    assets = visual_inputs.after_state_maps(change_ids, role or ROLES[shown.kind])
    return assets.filter(meta__set=str(shown)) if (role or ROLES[shown.kind]) == AssetRole.RENDER else assets


def _covered(edits: dict, shown: VisualInput, role: str | None = None) -> set[int]:
    """The changes ({id: edit}) with a whole after-state of what the run shows (a view set: all its views),
    made from the change's edit as it is now."""
    digests = {change: edit_digest(edit) for change, edit in edits.items()}
    counts: dict[int, set] = {}
    for change, index, digest in _after_state_assets(edits, shown, role).values_list(
            "meta__after_state", "meta__index", "meta__edit_digest"):
        if digest in (None, digests.get(int(change))):
            counts.setdefault(int(change), set()).add(index)
    need = shown.views if role is None and shown.is_rendered else 1
    return {change for change, indices in counts.items() if len(indices) >= need}


def unrendered_changes(items, shown: VisualInput) -> dict[int, list[int]]:
    """{scene id: [change ids]} of the items' changes without a whole after-state view set of `shown`
    made from their edit as it is now: the views a `changed` run renders before its inference (the default
    queue's render step, scenes.after_state.after_state_view_set)."""
    rows = list(items.exclude(change=None).values_list("change_id", "change__scene_id", "change__edit").distinct())
    found = _covered({change: edit for change, _, edit in rows}, shown)
    missing: dict[int, list[int]] = {}
    for change, scene, _ in sorted(rows):
        if change not in found:
            missing.setdefault(scene, []).append(change)
    return missing


def checked(value, model: ModelSpec, shown: VisualInput, items, inputs: dict) -> str:
    """The run's scene state, checked against the model, what it is shown, its other inputs and items."""
    if value not in VALUES:
        raise DomainError("scene_state is imagined or changed.", field="inputs")
    if value == IMAGINED:
        return value
    if model.withhold_stimulus or shown.kind not in ROLES:
        raise DomainError(f"scene_state changed shows the changed scene's top view, views or point cloud; "
                          f"{model.name} is shown {shown}.", field="inputs")
    clash = [name for name in NOT_WITH if name in inputs] + (["top_view aligned"] if inputs.get("top_view") ==
                                                              "aligned" else [])
    if clash:
        raise DomainError(f"scene_state changed shows the after-state only; {', '.join(clash)} show the scene "
                          "before its change.", field="inputs")
    rows = list(items.order_by("pk").values_list("pk", "external_id", "change_id", "change__edit"))
    without = [_name(e, pk) for pk, e, change, edit in rows if change is None]
    if without:
        raise DomainError(f"scene_state changed needs each item's change: {len(without)} of the run's {len(rows)} "
                          f"items have none: {_listed(without)}.", field="inputs")
    no_edit = [_name(e, pk) for pk, e, change, edit in rows if edit is None]
    if no_edit:
        raise DomainError(f"scene_state changed needs each change's geometry (its edit): {len(no_edit)} of the "
                          f"run's {len(rows)} items have a change without one: {_listed(no_edit)}.", field="inputs")
    edits = {change: edit for _, _, change, edit in rows}
    wanted = [(None, f"points (its {shown} views are rendered from them)" if shown.is_rendered else str(shown))]
    if inputs.get("map_first") in visual_inputs.TOP_VIEW_ROLES:
        wanted.append((visual_inputs.TOP_VIEW_ROLES[inputs["map_first"]], f"{inputs['map_first']} map"))
    for role, what in wanted:
        # a view set is rendered from the after-state at launch: its points are what must be there
        found = _covered(edits, shown, AssetRole.VIEWER_POINTS if role is None and shown.is_rendered else role)
        lacking = [_name(e, pk) for pk, e, change, _ in rows if change not in found]
        if lacking:
            raise DomainError(f"scene_state changed: {len(lacking)} of the run's {len(rows)} items have no after-state "
                              f"{what} (their change's changed scene is built from its geometry): {_listed(lacking)}.",
                              field="inputs")
    return value


def _current(item: Item, shown: VisualInput, role: str | None = None):
    return visual_inputs.of_edit(_after_state_assets([item.change_id], shown, role), item.change.edit)


def _latest(item: Item, shown: VisualInput, role: str | None = None):
    return _current(item, shown, role).order_by("-id").first()


def after_state_images(item: Item, shown: VisualInput, mirrored: bool = False) -> list[bytes]:
    """The item's pictures from its change's after-state: the map, or the view set in its order."""
    if shown.is_rendered:
        latest: dict = {}
        for asset in _current(item, shown).order_by("id"):
            latest[(asset.meta or {}).get("index", 0)] = asset  # a view rebuilt later replaces the earlier one
        assets = [latest[index] for index in sorted(latest)]
        if len(assets) != shown.views:
            raise LookupError(f"item {item.scoring_id} has no after-state {shown} renders")
    else:
        assets = [asset] if (asset := _latest(item, shown)) else []
        if not assets:
            raise LookupError(f"item {item.scoring_id} has no after-state {shown}")
    return [overlays.stimulus_image(asset, index, None, mirrored) for index, asset in enumerate(assets)]


def after_state_map(item: Item, kind: str) -> bytes:
    """The after-state's top-view map of `kind` (map_first's, sent before the after-state's views)."""
    asset = _latest(item, VisualInput(kind), visual_inputs.TOP_VIEW_ROLES[kind])
    if asset is None:
        raise LookupError(f"item {item.scoring_id} has no after-state {kind} map")
    return overlays.stimulus_image(asset, 0)


def after_state_points(item: Item) -> PointCloudInput:
    """The after-state's points (its viewer file: the levels file, or every node of the octree)."""
    asset = _latest(item, VisualInput(Kind.POINT_CLOUD))
    if asset is None:
        raise LookupError(f"item {item.scoring_id} has no after-state point cloud")
    with asset.file.open("rb") as handle:
        data = handle.read()
    if (asset.meta or {}).get("version", 2) == 2:
        xyz, rgb, instance = decode_viewer_points(data)
    else:
        import numpy as np

        tree = read_octree(data)
        parts = [decode_octree_node(data[node["offset"]:node["offset"] + node["bytes"]], node, tree)
                 for node in tree["nodes"]]
        xyz, rgb, instance = (np.concatenate([part[i] for part in parts]) for i in range(3))
    return PointCloudInput(item.scene.external_id if item.scene else "", xyz, rgb, instance)


def apply(built: InferenceRequest, run, item: Item, variant) -> None:
    """The request's pictures or points replaced by the after-state's (a `changed` run; nothing else)."""
    shown = VisualInput.parse(run.visual_input)
    if shown.kind == Kind.POINT_CLOUD:
        if built.point_cloud is not None:
            built.point_cloud = after_state_points(item)
        return
    if built.images:
        built.images = after_state_images(item, shown, protocols.shows_mirrored(item.tags, variant))
