"""The changed scene (#47): a change's after-state built from the scene's scan (moved, turned and scaled
objects' points go with their box and nowhere else, removed ones are gone, added boxes are drawn inside their
box), stored as the scene's viewer file and top views marked `after_state`, once per edit (replaced when the
edit changes), sent when a change with an edit is approved and on a reviewer's request, and never shown to
people or given to a run by default."""

import math

import numpy as np
import pytest

from benchmarks.edit_digest import edit_digest
from benchmarks.models import Asset, AssetRole
from benchmarks.selectors import AFTER_STATE_ROLES as ROLES
from benchmarks.selectors import after_state_assets
from benchmarks.services import scene_asset, shown_to_people
from core import roles
from core.models import Job
from modeleval.prompting import visual_inputs
from review import services as review_services
from scenes import dispatch, processing, tasks
from scenes.after_state import apply_to_points, label_colour, to_local
from scenes.pointcloud import decode_viewer_points
from scenes.scans import load_scene_points
from scenes.viewer import scene_viewer_data
from tests.annotation.geometry_rooms import CHAIR, LAMP, OBJECTS
from tests.benchmarks.after_state_rooms import EDIT, POINTS_PER_OBJECT, moved_chair, scan_points, scanned_room
from tests.factories import ChangeFactory, UserFactory

pytestmark = pytest.mark.django_db

BOXES = {i: {"instance_id": i, "label": label, "center": list(c), "size": list(s), "yaw": yaw}
         for i, label, c, s, yaw in OBJECTS}
EPS = 0.01  # the viewer file keeps millimetres


def inside(xyz, box, eps=EPS) -> np.ndarray:
    local = to_local(xyz, box)
    half = np.array(box["size"][:2]) / 2 + eps
    return (np.abs(local[:, :2]) <= half).all(axis=1) & (local[:, 2] >= -eps) & (local[:, 2] <= box["size"][2] + eps)


def stored_points(asset):
    with asset.file.open("rb") as handle:
        return decode_viewer_points(handle.read())


@pytest.fixture
def change():
    return ChangeFactory(scene=scanned_room(), status="approved", edit=EDIT)


# --- the geometry ----------------------------------------------------------------------------------


def test_moved_points_go_with_their_box_and_nowhere_else_removed_are_gone_added_drawn_in_their_box(change):
    tasks.make_after_state(change.pk)
    assets = after_state_assets(change)
    assert sorted(assets) == sorted(ROLES)
    xyz, rgb, instance = stored_points(assets[AssetRole.VIEWER_POINTS])

    # the chair: scaled 1.5 about its bottom centre, turned a quarter, moved -3, +2.7 (change_geometry.moved)
    chair = {**BOXES[CHAIR], "center": [1.5, 3.9, 0.675], "size": [0.75, 0.75, 1.35], "yaw": math.pi / 2}
    moved = instance == CHAIR
    assert moved.sum() == POINTS_PER_OBJECT and inside(xyz[moved], chair).all()
    assert not inside(xyz[moved], BOXES[CHAIR], eps=0).any()  # none left where it stood
    # the points turned with it: a point at the box's local +x now lies at its local +x after the turn
    before_xyz, _, before_instance = scan_points()
    local_before = to_local(before_xyz[before_instance == CHAIR], BOXES[CHAIR])
    local_after = to_local(xyz[moved].astype(np.float64), chair)  # the file keeps its own order: match points
    nearest = np.linalg.norm(local_before[:, None, :] * 1.5 - local_after[None, :, :], axis=2).min(axis=1)
    assert (nearest < EPS).all()

    assert not (instance == LAMP).any()  # removed
    for i in set(BOXES) - {CHAIR, LAMP}:  # the rest as they were
        assert (instance == i).sum() == POINTS_PER_OBJECT and inside(xyz[instance == i], BOXES[i]).all()

    plant, copy = (dict(a, instance_id=n) for n, a in ((9, EDIT["added"][0]), (10, EDIT["added"][1])))
    drawn = instance == 9  # no plant in the room: its box's surface, in the label's colour
    assert drawn.sum() >= 400 and inside(xyz[drawn], plant).all()
    assert (rgb[drawn] == label_colour("plant")).all()
    local = to_local(xyz[drawn].astype(np.float64), plant)
    on_face = np.isclose(np.abs(local[:, :2]), np.array(plant["size"][:2]) / 2, atol=EPS).any(axis=1) | \
        np.isclose(local[:, 2], 0, atol=EPS) | np.isclose(local[:, 2], plant["size"][2], atol=EPS)
    assert on_face.all()
    copied = instance == 10  # a chair of the room fitted into the new box
    assert copied.sum() == POINTS_PER_OBJECT and inside(xyz[copied], copy).all()
    assert len(xyz) == len(before_xyz) - POINTS_PER_OBJECT + drawn.sum() + copied.sum()

    # the top views are drawn from the after-state with the changed boxes
    for role in (AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC):
        meta = assets[role].meta
        labels = [entry["label"] for entry in meta["labels"]]
        assert "plant" in labels and "lamp" not in labels and labels.count("chair") == 3
        assert meta["after_state"] == change.pk and meta["edit_digest"] == edit_digest(EDIT)
        assert sorted(meta["changed"]) == [CHAIR, LAMP, 9, 10]


def test_a_large_scan_after_the_change_is_an_octree_as_its_viewer_file(change, monkeypatch):
    monkeypatch.setattr(processing, "VIEWER_BUDGET_POINTS", 1000)
    tasks.make_after_state(change.pk)
    meta = after_state_assets(change)[AssetRole.VIEWER_POINTS].meta
    assert meta["version"] == 3 and meta["nodes"] >= 1 and meta["after_state"] == change.pk


def test_apply_to_points_leaves_the_scene_as_it_was_for_an_untouched_object():
    xyz, rgb, instance = scan_points()
    out_xyz, _, out_instance, after, changed = apply_to_points(
        xyz, rgb, instance, list(BOXES.values()), {"objects": [{"instance_id": LAMP, "removed": True}], "added": []})
    assert changed == [LAMP] and len(after) == len(BOXES) - 1
    keep = instance != LAMP
    assert np.array_equal(out_xyz, xyz[keep]) and np.array_equal(out_instance, instance[keep])


# --- stored once per edit ----------------------------------------------------------------------------


def test_built_again_for_the_same_edit_it_is_kept_and_a_changed_edit_replaces_it(change, django_capture_on_commit_callbacks):
    tasks.make_after_state(change.pk)
    first = {role: a.pk for role, a in after_state_assets(change).items()}
    tasks.make_after_state(change.pk)
    with django_capture_on_commit_callbacks(execute=True):
        dispatch.send_after_state(change.pk)
        dispatch.send_after_state(change.pk)
    assert {role: a.pk for role, a in after_state_assets(change).items()} == first
    assert Asset.objects.filter(meta__after_state=change.pk).count() == 3
    assert Job.objects.filter(kind="after_state", status=Job.Status.DONE).count() == 4

    files = [a.file.name for a in Asset.objects.filter(pk__in=first.values())]
    change.edit = {**EDIT, "added": []}
    change.save(update_fields=["edit"])
    assert after_state_assets(change) == {}  # the older edit's files are not the change's after-state
    with django_capture_on_commit_callbacks(execute=True):
        job = dispatch.send_after_state(change.pk)
    assert job.status == Job.Status.DONE and job.report["edit_digest"] == edit_digest(change.edit)
    now = after_state_assets(change)
    assert sorted(now) == sorted(ROLES) and not set(first.values()) & {a.pk for a in now.values()}
    assert Asset.objects.filter(meta__after_state=change.pk).count() == 3
    _, _, instance = stored_points(now[AssetRole.VIEWER_POINTS])
    assert not (instance >= 9).any()  # no added boxes now
    storage = now[AssetRole.VIEWER_POINTS].file.storage
    assert not any(storage.exists(name) for name in files)

    change.edit = None  # the edit cleared: its after-state goes
    change.save(update_fields=["edit"])
    with django_capture_on_commit_callbacks(execute=True):
        tasks.make_after_state(change.pk)
    assert not Asset.objects.filter(meta__after_state=change.pk).exists()


# --- never shown by accident ---------------------------------------------------------------------------


def test_people_and_default_run_inputs_never_get_the_after_state(change):
    scene = change.scene
    xyz, rgb, instance, objects = load_scene_points(scene)
    before = {a.role: a for a in processing.build_viewer_assets(scene, xyz, rgb, instance, objects)}
    tasks.make_after_state(change.pk)
    after = after_state_assets(change)
    assert all(a.pk > before[role].pk for role, a in after.items())  # the newest of each role
    assert not set(shown_to_people(scene.assets.all())) & set(after.values())
    for role in ROLES:
        assert scene_asset(scene, role) == before[role]
    assert scene_viewer_data(scene)["map"] == before[AssetRole.TOPVIEW_PLAIN].meta
    assert visual_inputs.latest_top_view(scene.pk, "top_view_plain") == before[AssetRole.TOPVIEW_PLAIN]
    assert visual_inputs.latest_top_view(scene.pk, "top_view_semantic") == before[AssetRole.TOPVIEW_SEMANTIC]


# --- sent on approval and on a reviewer's request ---------------------------------------------------------


def test_approving_a_change_with_an_edit_builds_its_after_state(django_capture_on_commit_callbacks):
    change = moved_chair(scanned_room())
    without = ChangeFactory(scene=change.scene)
    reviewer = UserFactory(role=roles.REVIEWER)
    with django_capture_on_commit_callbacks(execute=True):
        review_services.approve_change(change.pk, reviewer, change.version)
        review_services.approve_change(without.pk, reviewer, without.version)
    change.refresh_from_db()
    assert sorted(after_state_assets(change)) == sorted(ROLES)
    job = Job.objects.get(kind="after_state")
    assert job.status == Job.Status.DONE and job.created_by == reviewer
    assert job.report["assets"] == {role: a.pk for role, a in after_state_assets(change).items()}


def test_a_reviewer_asks_for_it_202_with_the_job_400_without_an_edit_403_for_an_annotator(client, change):
    client.force_login(UserFactory(role=roles.REVIEWER))
    response = client.post(f"/api/v1/changes/{change.pk}/after-state/")
    assert response.status_code == 202, response.json()
    job = response.json()["job"]
    assert job["kind"] == "after_state" and job["status"] == "done"
    assert Job.objects.get(pk=job["id"]).report["change"] == change.pk
    assert sorted(after_state_assets(change)) == sorted(ROLES)

    without = ChangeFactory(scene=change.scene)
    refused = client.post(f"/api/v1/changes/{without.pk}/after-state/")
    assert refused.status_code == 400 and "has no edit" in refused.json()["edit"][0]
    assert client.post("/api/v1/changes/999999/after-state/").status_code == 404

    client.force_login(UserFactory(role=roles.ANNOTATOR))
    assert client.post(f"/api/v1/changes/{change.pk}/after-state/").status_code == 403


def test_a_scene_without_a_scan_has_no_after_state_and_its_job_says_why(client):
    change = moved_chair(scanned_room())
    change.scene.assets.all().delete()
    client.force_login(UserFactory(role=roles.REVIEWER))
    response = client.post(f"/api/v1/changes/{change.pk}/after-state/")
    assert response.status_code == 202 and response.json()["job"]["status"] == "done"
    assert "no scan" in response.json()["job"]["report"]["reason"] and after_state_assets(change) == {}


# --- kept current ------------------------------------------------------------------------------------


def test_processing_the_scan_again_makes_the_approved_edits_after_states_again(change):
    """A re-run of the scan's processing replaces every derived file, the after-states' too (they share roles
    with the scene's own): they are made again in the same task."""
    tasks.make_after_state(change.pk)
    tasks.process_scene(change.scene_id)
    assert sorted(after_state_assets(change)) == sorted(ROLES)


def test_a_reviewer_replacing_an_approved_changes_edit_gets_its_after_state_made_again(
        django_capture_on_commit_callbacks):
    from review.geometry import edit_change_geometry
    from tests.annotation.geometry_rooms import move

    change = moved_chair(scanned_room(), status="approved")
    tasks.make_after_state(change.pk)
    before = after_state_assets(change)[AssetRole.VIEWER_POINTS].meta["edit_digest"]
    with django_capture_on_commit_callbacks(execute=True):
        change = edit_change_geometry(change.pk, UserFactory(role=roles.REVIEWER), move(CHAIR, -3.2, 2.6),
                                      change.version)
    made = after_state_assets(change)
    assert sorted(made) == sorted(ROLES)
    assert made[AssetRole.VIEWER_POINTS].meta["edit_digest"] == edit_digest(change.edit) != before


def test_the_study_pages_preload_rule_weighs_the_scenes_own_viewer_file_not_an_after_state(change):
    from humaneval.services.stimuli import viewer_points_bytes

    tasks.process_scene(change.scene_id)
    own = viewer_points_bytes(change.scene_id)
    tasks.make_after_state(change.pk)
    after = after_state_assets(change)[AssetRole.VIEWER_POINTS]
    Asset.objects.filter(pk=after.pk).update(size=own + 10_000_000)  # a changed scene far bigger than its own
    assert viewer_points_bytes(change.scene_id) == own > 0


def test_the_reviewers_after_view_has_the_after_states_files_and_the_boxes_where_the_edit_puts_them(change):
    from scenes.viewer import after_state_viewer_data

    assert after_state_viewer_data(change) is None  # not made yet
    tasks.make_after_state(change.pk)
    view = after_state_viewer_data(change)
    assert view["points_url"] and view["topview_plain_url"] and view["topview_semantic_url"]
    boxes = {box["instance_id"]: box for box in view["objects"]}
    assert LAMP not in boxes  # removed
    chair = boxes[CHAIR]
    assert chair["center"][:2] == pytest.approx([BOXES[CHAIR]["center"][0] - 3.0, BOXES[CHAIR]["center"][1] + 2.7])
    assert chair["yaw"] == pytest.approx(BOXES[CHAIR]["yaw"] + math.pi / 2)
    assert [box["label"] for box in view["objects"][-2:]] == ["plant", "chair"]  # the added ones, last


def test_an_edits_digest_is_the_same_in_memory_and_as_the_database_gives_it_back():
    """PostgreSQL's jsonb turns -0.0 (which the world-frame conversion makes) into 0.0: a digest of the edit in
    memory once missed the after-state built from the stored one."""
    change = moved_chair(scanned_room(), status="approved")
    in_memory = edit_digest(change.edit)
    change.refresh_from_db()
    assert edit_digest(change.edit) == in_memory
    assert edit_digest({"t": [-0.0, 1.0000000000001]}) == edit_digest({"t": [0.0, 1.0]})
