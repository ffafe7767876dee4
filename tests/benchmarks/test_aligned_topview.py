"""Hypo3D Table 11's aligned map is made on the platform (#45): the scene's top views turned by quarter
turns so that its approved world frame's anchor lies on the frame's side of the image (front the top),
rendered from the turned points with upright labels, stored as aligned top-view assets when a frame is
approved (once however often the task runs), superseded with the frame, chosen by a `top_view: aligned`
run and never shown to people."""

import base64
import hashlib
import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from PIL import Image

from benchmarks.models import Asset, AssetRole, WorldFrame
from benchmarks.releases.published import scene_media
from benchmarks.services import scene_asset, shown_to_people, store_asset
from core.errors import DomainError
from core.models import Job
from modeleval import recipes
from modeleval.models import ModelSpec
from modeleval.prompting import visual_inputs
from review.frames import review_frame
from scenes import dispatch, tasks
from scenes.aligned_topview import made_here, quarter_turns, render_aligned
from scenes.scans import write_points_ply
from scenes.services import import_scan
from tests.benchmarks.test_import_scans import scannet_inputs
from tests.factories import BenchmarkFactory, ItemFactory

pytestmark = pytest.mark.django_db

SIDES = ("front", "back", "left", "right")
# The factory's scene: desk, chair, window, bookshelf, 1 m boxes at x = 1..4, y = 1. The room's floor
# runs 0..5 by 0..2 (not square: an odd number of quarter turns swaps the map's width and height), so
# its centre is (2.5, 1) and the desk lies 1.5 m towards -x of it.
ROOM = (5.0, 2.0)
# The desk (towards -x) on each side: k quarter turns counter-clockwise bring -x there (front is +y).
DESK_TURNS = {"left": 0, "back": 1, "right": 2, "front": 3}


def room_points(n: int = 6000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    floor = np.c_[rng.uniform(0, ROOM[0], n), rng.uniform(0, ROOM[1], n), np.zeros(n)]
    return floor.astype(np.float32), rng.integers(0, 256, (n, 3)).astype(np.uint8)


def objects(anchor_xy=(4.5, 1.0)) -> list[dict]:
    return [{"instance_id": 1, "label": "bookshelf", "center": [*anchor_xy, 0.5], "size": [0.6, 0.4, 1.0]},
            {"instance_id": 2, "label": "sofa", "center": [2.5, 1.0, 0.4], "size": [1.0, 0.5, 0.8]}]


def side_of(entry: dict, meta: dict) -> str:
    """Where a label's centroid lies on the map: the side of the image it is nearest."""
    dx, dy = entry["x"] - meta["width"] / 2, entry["y"] - meta["height"] / 2
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    return "back" if dy > 0 else "front"  # image rows grow downwards: the top is the front


# --- (1) the geometry ------------------------------------------------------------------------------


@pytest.mark.parametrize("side", SIDES)
def test_an_anchor_at_plus_x_ends_on_its_frames_side_of_both_maps_with_upright_labels(side):
    xyz, rgb = room_points()
    k, maps = render_aligned(xyz, rgb, objects(), [(4.5, 1.0, side)])  # the bookshelf: +x of the centre
    assert k == {"right": 0, "front": 1, "left": 2, "back": 3}[side]
    assert [role for role, _, _ in maps] == [AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC]
    for _, png, meta in maps:
        shelf, sofa = sorted(meta["labels"], key=lambda e: e["instance_id"])
        assert side_of(shelf, meta) == side
        assert abs(sofa["x"] - meta["width"] / 2) <= 2 and abs(sofa["y"] - meta["height"] / 2) <= 2  # the centre stays
        # the room (5 x 2 m) lies across the image, or upright after an odd number of quarter turns
        assert (meta["width"] > meta["height"]) == (k % 2 == 0)
        assert Image.open(io.BytesIO(png)).size[:2] == (meta["width"], meta["height"]) or meta["legend"]
        # labels are written by the renderer, upright: wider than tall on the turned map
        left, top, right, bottom = shelf["text_box"]
        assert right - left > bottom - top
        # the footprint turns with the scene: 0.6 x 0.4 m across, or upright after an odd k
        box_w, box_h = shelf["box"][2] - shelf["box"][0], shelf["box"][3] - shelf["box"][1]
        assert (box_w > box_h) == (k % 2 == 0)


def test_quarter_turns_maximise_the_anchors_dot_product_with_their_sides():
    assert [quarter_turns([(0.0, 2.0, side)]) for side in SIDES] == [0, 2, 1, 3]  # anchor at +y
    assert quarter_turns([(3.0, 1.0, "front")]) == 1  # mostly +x: a quarter turn to the top
    assert quarter_turns([(0.0, 0.0, "back")]) == 0  # on the centre: left as it is
    # a staff frame written one sentence per side: the frames agree on one turn
    assert quarter_turns([(2.0, 0.0, "front"), (0.0, 2.0, "left"), (0.0, -1.0, "right")]) == 1


# --- (2) approving a frame makes the maps, once ----------------------------------------------------


def scene_with_scan(item=None):
    """A hypo3d scene (the factory's objects) with a scanned floor as its point cloud."""
    item = item or ItemFactory(tags={"change_type": "movement", "question_type": ["Direction"]}, answers=["left"])
    xyz, rgb = room_points()
    store_asset(item.scene, AssetRole.POINT_CLOUD, "scan.ply", write_points_ply(xyz, rgb, np.zeros(len(xyz), np.int32)),
                {"points": len(xyz)})
    return item


def crowd_frame(scene, side: str, label: str = "desk") -> WorldFrame:
    return WorldFrame.objects.create(scene=scene, anchor=scene.scene_objects.get(label=label), side=side,
                                     text=f"The {label} was located at the {side} of the scene.",
                                     status=WorldFrame.Status.SUBMITTED)


def aligned_maps(scene) -> list[Asset]:
    return list(made_here(Asset.objects.filter(scene=scene)).order_by("role"))


def test_approving_a_frame_makes_aligned_plain_and_semantic_maps_once(django_capture_on_commit_callbacks):
    scene = scene_with_scan().scene
    frame = crowd_frame(scene, "front")
    assert aligned_maps(scene) == []
    with django_capture_on_commit_callbacks(execute=True):
        review_frame(frame.pk, "approve")
    made = aligned_maps(scene)
    assert [a.role for a in made] == [AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC]
    for asset in made:
        assert asset.meta["aligned"] is True and asset.meta["rotation_quarter_turns"] == DESK_TURNS["front"]
        assert asset.meta["world_frame"] == frame.pk and asset.meta["world_frames"] == [frame.pk]
        desk = next(e for e in asset.meta["labels"] if e["label"] == "desk")
        assert side_of(desk, asset.meta) == "front"
    job = Job.objects.get(kind="aligned_topviews")
    assert job.status == Job.Status.DONE and job.report["assets"] == [a.pk for a in made]

    # the same job's message again does nothing; approving the frame again keeps its maps
    tasks.make_aligned_topviews(scene.pk, job.pk)
    with django_capture_on_commit_callbacks(execute=True):
        review_frame(frame.pk, "approve")
    assert aligned_maps(scene) == made and Job.objects.filter(kind="aligned_topviews").count() == 1
    # the task sent again (twice) replaces, never adds
    with django_capture_on_commit_callbacks(execute=True):
        dispatch.send_aligned_topviews(scene.pk)
        dispatch.send_aligned_topviews(scene.pk)
    again = aligned_maps(scene)
    assert len(again) == 2 and not {a.pk for a in again} & {a.pk for a in made}
    assert [a.sha256 for a in again] == [a.sha256 for a in made]  # the same render
    assert not any(Asset.objects.filter(pk=a.pk).exists() for a in made)

    # the command for scenes approved before: nothing to do here, and --again replaces
    out = io.StringIO()
    call_command("make_aligned_topviews", stdout=out)
    assert json.loads(out.getvalue())["current"] == [scene.external_id] and aligned_maps(scene) == again
    call_command("make_aligned_topviews", "--again", stdout=io.StringIO())
    assert len(aligned_maps(scene)) == 2 and aligned_maps(scene) != again


def test_a_scene_approved_before_gets_its_maps_from_the_command(django_capture_on_commit_callbacks):
    scene = scene_with_scan().scene
    WorldFrame.objects.create(scene=scene, anchor=scene.scene_objects.get(label="desk"), side="back",
                              text="The desk was located at the back of the scene.")  # imported: approved
    out = io.StringIO()
    call_command("make_aligned_topviews", "--benchmark", scene.benchmark.slug, stdout=out)
    assert json.loads(out.getvalue())["made"] == [scene.external_id]
    assert {a.meta["rotation_quarter_turns"] for a in aligned_maps(scene)} == {DESK_TURNS["back"]}


def test_an_imported_scan_with_a_frame_gets_its_aligned_maps_with_its_top_views(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        scene = import_scan(BenchmarkFactory(family="hypo3d"), "scene0000_00",
                            world_frame="The chair was located at the right of the scene.", **scannet_inputs())
    made = aligned_maps(scene)
    assert [a.role for a in made] == [AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC]
    chair = next(e for e in made[1].meta["labels"] if e["label"] == "chair")
    assert side_of(chair, made[1].meta) == "right"
    for role in (AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC):  # people keep the scene's own map
        assert not scene_asset(scene, role).meta.get("aligned")
    tasks.process_scene(scene.pk)  # processed again: one of each still
    assert len(aligned_maps(scene)) == 2


# --- (3) a `top_view: aligned` run is shown it; people never are -----------------------------------


def test_table11_aligned_runs_are_shown_the_platform_made_map_and_people_are_not(
        chat_servers, django_capture_on_commit_callbacks):
    item = scene_with_scan()
    scene, benchmark = item.scene, item.benchmark
    plain, semantic = (store_asset(scene, role, f"{role}.png", png, {}) for role, png in (
        (AssetRole.TOPVIEW_PLAIN, b"plain people map"), (AssetRole.TOPVIEW_SEMANTIC, b"semantic people map")))
    endpoint = chat_servers(reply="left")
    vlm = ModelSpec.objects.create(name="Qwen2-VL-72B-Instruct", adapter="openai_compatible",
                                   modality="top_view_plain",
                                   config={"endpoint": endpoint.url, "model": "q", "max_retries": 0})
    with pytest.raises(DomainError, match="made when the scene's world frame is approved"):
        recipes.launch_recipe("hypo3d-table11", benchmark, [vlm.pk])

    with django_capture_on_commit_callbacks(execute=True):
        review_frame(crowd_frame(scene, "right").pk, "approve")
    aligned_plain, aligned_semantic = aligned_maps(scene)
    with django_capture_on_commit_callbacks(execute=True):
        runs = recipes.launch_recipe("hypo3d-table11", benchmark, [vlm.pk])
    for run in runs:
        run.refresh_from_db()
        assert run.status == "finished", list(run.predictions.values_list("error", flat=True))
    sent = [hashlib.sha256(base64.b64decode(part["image_url"]["url"].split(",", 1)[1])).hexdigest()
            for r in endpoint.requests for m in r["body"]["messages"] if isinstance(m["content"], list)
            for part in m["content"] if part["type"] == "image_url"]
    assert [(run.visual_input, run.inputs["top_view"]) for run in runs] == [
        ("top_view_semantic", "not_aligned"), ("top_view_semantic", "aligned"),
        ("top_view_plain", "not_aligned"), ("top_view_plain", "aligned")]
    assert sent == [semantic.sha256, aligned_semantic.sha256, plain.sha256, aligned_plain.sha256]

    assert set(shown_to_people(scene.assets.all())) & {aligned_plain, aligned_semantic} == set()
    assert scene_asset(scene, AssetRole.TOPVIEW_PLAIN) == plain
    assert scene_media([item], (AssetRole.TOPVIEW_SEMANTIC,))[(scene.pk, AssetRole.TOPVIEW_SEMANTIC)] == [semantic]


# --- (4) a newer approved frame supersedes the old map ---------------------------------------------


def test_a_newer_approved_frame_supersedes_the_old_aligned_maps(django_capture_on_commit_callbacks):
    scene = scene_with_scan().scene
    old_frame, new_frame = crowd_frame(scene, "left"), crowd_frame(scene, "back", label="bookshelf")
    with django_capture_on_commit_callbacks(execute=True):
        review_frame(old_frame.pk, "approve")
    old = aligned_maps(scene)
    assert {a.meta["world_frame"] for a in old} == {old_frame.pk}
    with django_capture_on_commit_callbacks() as callbacks:
        review_frame(new_frame.pk, "approve")
    # at once, in the approval's transaction: no map turned by a frame no longer in force is chosen
    assert aligned_maps(scene) == [] and visual_inputs.latest_top_view(scene.pk, "top_view_plain", True) is None
    for callback in callbacks:
        callback()
    new = aligned_maps(scene)
    assert {a.meta["world_frame"] for a in new} == {new_frame.pk} and len(new) == 2
    # the bookshelf (x = 4: towards +x) at the back, the bottom of the image
    assert {a.meta["rotation_quarter_turns"] for a in new} == {3}
    shelf = next(e for e in new[0].meta["labels"] if e["label"] == "bookshelf")
    assert side_of(shelf, new[0].meta) == "back"
    assert visual_inputs.latest_top_view(scene.pk, "top_view_plain", True) == new[0]
    assert not Asset.objects.filter(pk__in=[a.pk for a in old]).exists()
    # an aligned map uploaded by hand is not the platform's to remove
    uploaded = store_asset(scene, AssetRole.TOPVIEW_PLAIN, "upload.png", b"uploaded", {"aligned": True})
    with django_capture_on_commit_callbacks(execute=True):
        review_frame(old_frame.pk, "approve")
    assert Asset.objects.filter(pk=uploaded.pk).exists() and len(aligned_maps(scene)) == 2
    # rejected after its approval: the scene has no approved frame, so no platform map
    review_frame(old_frame.pk, "reject")
    assert aligned_maps(scene) == [] and visual_inputs.latest_top_view(scene.pk, "top_view_plain", True) == uploaded
