"""The changed scene's camera views: a `scene_state: changed` run shown a `multi_view`/`egocentric` set is
rendered the after-state from the cameras the scene before its change is shown from (the scene's own render
poses, or its posed frames' cameras in the aligned frame), in the run's render step, once per edit; the
imagined run beside it is shown the scene as it was from the same cameras."""

import io

import numpy as np
import pytest
from PIL import Image

from benchmarks.models import Asset, AssetRole
from core.errors import DomainError
from modeleval import services
from modeleval.models import Run
from scenes import renders
from scenes.after_state import after_state_view_set, build_after_state
from scenes.rgbd_frames import import_sens
from tests.benchmarks.after_state_rooms import moved_chair, scanned_room
from tests.factories import ItemFactory
from tests.modeleval.test_posed_frames import hosted_3d_vlm, sent_pictures
from tests.rgbd_files import frames, write_sens

pytestmark = pytest.mark.django_db


@pytest.fixture
def chair_item():
    change = moved_chair(scanned_room(), status="approved")
    build_after_state(change.pk)
    return ItemFactory(change=change, external_id="chair-1", question="What is right of the chair now?",
                       answers=["bed"])


def after_views(change_id: int, name: str) -> list[Asset]:
    return sorted(Asset.objects.filter(role=AssetRole.RENDER, meta__set=name, meta__after_state=change_id),
                  key=lambda asset: asset.meta["index"])


def launch(model, item, state, capture) -> Run:
    with capture(execute=True):
        run = services.launch_run(model.pk, item.benchmark, None, inputs={"scene_state": state})
    run.refresh_from_db()
    assert run.status == Run.Status.FINISHED, list(run.predictions.values_list("error", flat=True))
    return run


def test_a_changed_run_is_shown_the_after_state_from_the_cameras_the_imagined_run_is_shown(
        chair_item, chat_servers, django_capture_on_commit_callbacks):
    server = chat_servers(reply="bed")
    model = hosted_3d_vlm(server, "multi_view", 2)
    launch(model, chair_item, "imagined", django_capture_on_commit_callbacks)
    launch(model, chair_item, "changed", django_capture_on_commit_callbacks)
    imagined, changed = (sent_pictures(request) for request in server.requests)

    before = renders.stored_view_set(chair_item.scene, "multi_view:2")
    before = [asset for asset in before if "after_state" not in asset.meta]
    after = after_views(chair_item.change_id, "multi_view:2")
    assert imagined == [asset.file.open("rb").read() for asset in before]
    assert changed == [asset.file.open("rb").read() for asset in after]
    assert all(b != a for b, a in zip(imagined, changed, strict=True))  # the chair moved in view
    # the same cameras: only the change differs between the two conditions
    assert [a.meta["pose"] for a in after] == [b.meta["pose"] for b in before]
    assert {a.meta["cameras_from"] for a in after} == {"renders"}
    assert {a.meta["edit_digest"] for a in after} == {build_after_state(chair_item.change_id)[0].meta["edit_digest"]}

    made = list(Asset.objects.filter(role=AssetRole.RENDER).values_list("pk", flat=True))
    launch(model, chair_item, "changed", django_capture_on_commit_callbacks)  # rendered once per edit
    assert list(Asset.objects.filter(role=AssetRole.RENDER).values_list("pk", flat=True)) == made
    assert sent_pictures(server.requests[-1]) == changed


def test_a_changed_edit_is_rendered_again_and_a_change_without_an_after_state_is_refused(
        chair_item, chat_servers, django_capture_on_commit_callbacks):
    server = chat_servers(reply="bed")
    model = hosted_3d_vlm(server, "egocentric", 2)
    launch(model, chair_item, "changed", django_capture_on_commit_callbacks)
    first = [a.pk for a in after_views(chair_item.change_id, "egocentric:2")]
    change = chair_item.change
    change.edit = {**change.edit, "objects": [{**change.edit["objects"][0], "translation": [-2.9, 2.7, 0.0]}]}
    change.save(update_fields=["edit"])
    with pytest.raises(DomainError, match=r"1 of the run's 1 items have no after-state points \(its egocentric:2 "
                                          r"views are rendered from them\).*: chair-1\."):
        services.launch_run(model.pk, chair_item.benchmark, None, inputs={"scene_state": "changed"})
    build_after_state(change.pk)  # the new edit's after-state (its old views went with the old one)
    assert not Asset.objects.filter(pk__in=first).exists()
    launch(model, chair_item, "changed", django_capture_on_commit_callbacks)
    assert len(after_views(change.pk, "egocentric:2")) == 2


def test_a_scene_with_posed_frames_has_its_after_state_rendered_from_its_cameras(chair_item, tmp_path):
    captured = frames(4)
    import_sens(chair_item.benchmark, chair_item.scene.external_id, write_sens(tmp_path / "capture.sens", captured))
    views = after_state_view_set(chair_item.change_id, "multi_view:2")
    posed = [frame for frame in chair_item.scene.posed_frames.order_by("index")][1::2]  # 2 of 4, evenly spaced
    alignment = np.asarray(chair_item.scene.meta.get("alignment", {}).get("matrix", np.eye(4)))
    expected = [alignment @ np.asarray(frame.pose) @ renders.OPENCV_TO_OPENGL for frame in posed]
    assert [v.meta["cameras_from"] for v in views] == ["posed_frames"] * 2
    assert np.allclose([v.meta["pose"] for v in views], expected, atol=1e-6)
    camera = posed[0].intrinsics
    assert Image.open(io.BytesIO(views[0].file.open("rb").read())).size == (camera["width"], camera["height"])
    assert after_state_view_set(chair_item.change_id, "multi_view:2") == views  # kept: the same edit
    with pytest.raises(renders.RenderError):
        after_state_view_set(chair_item.change_id, "panorama:2")
