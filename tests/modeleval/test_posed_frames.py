"""A 3D-VLM run's `multi_view` / `egocentric` input (modeleval/prompting/visual_inputs.py): a scene with posed
colour frames imported from its RGB-D capture (a .sens made here) is shown those frames, evenly spaced,
with no render made; a scene without them (or with fewer than asked) is shown renders of its scan; the
run records which in `inputs.views` and its label says so."""

import base64

import pytest

from benchmarks.models import Asset, AssetRole
from benchmarks.protocols import mirror_image
from benchmarks.services import store_asset
from demo.rooms import generate_room
from modeleval import services
from modeleval.analysis import labels
from modeleval.models import ModelSpec, Prediction, Run
from modeleval.prompting import visual_inputs
from modeleval.prompting.visual_inputs import VisualInput
from scenes.rgbd_frames import import_sens
from scenes.scans import write_points_ply
from tests.factories import ItemFactory, SceneFactory
from tests.modeleval.test_visual_inputs import rendered
from tests.rgbd_files import frames, write_sens

pytestmark = pytest.mark.django_db

POINTS = 20_000


def scanned_item(benchmark=None, seed: int = 0):
    """An approved Hypo3D item on a demo room stored as its scan."""
    room = generate_room(seed, points_per_room=POINTS)
    scene = SceneFactory(external_id=room.external_id, caption=room.caption, object_labels=[],
                         **({"benchmark": benchmark} if benchmark else {}))
    store_asset(scene, AssetRole.POINT_CLOUD, "scan.ply", write_points_ply(room.xyz, room.rgb, room.instance))
    return ItemFactory(change__scene=scene, question="What is left of the bed?", answers=["nightstand"])


def sent_pictures(request: dict) -> list[bytes]:
    _, *images = request["body"]["messages"][0]["content"]
    return [base64.b64decode(part["image_url"]["url"].split(",", 1)[1]) for part in images]


def hosted_3d_vlm(server, modality="multi_view", n_views=2) -> ModelSpec:
    return ModelSpec.objects.create(name="hosted-3d-vlm", adapter="openai_compatible", modality=modality,
                                    config={"endpoint": server.url, "model": "served", "n_views": n_views})


def run_to_the_end(model, item, capture, visual_input="") -> Run:
    with capture(execute=True):
        run = services.launch_run(model.pk, item.benchmark, None, visual_input=visual_input)
    run.refresh_from_db()
    assert run.status == Run.Status.FINISHED
    return run


def test_a_scene_with_posed_frames_is_shown_them_and_nothing_is_rendered(
        chat_servers, tmp_path, django_capture_on_commit_callbacks):
    item = scanned_item()
    captured = frames(5)
    import_sens(item.benchmark, item.scene.external_id, write_sens(tmp_path / "capture.sens", captured))
    server = chat_servers(reply="nightstand")

    run = run_to_the_end(hosted_3d_vlm(server), item, django_capture_on_commit_callbacks, "multi_view:2")

    [request] = server.requests
    # 2 of the 5 frames, at the centres of 2 equal slices of the capture: frames 1 and 3, their JPEGs as stored
    assert sent_pictures(request) == [captured[1]["image"], captured[3]["image"]]
    assert not Asset.objects.filter(role=AssetRole.RENDER).exists()
    assert run.inputs == {"views": {"posed_frames": [item.scene.external_id]}}
    assert "views=posed frames" in labels.run_label(run)
    assert Prediction.objects.get(run=run).error == ""


def test_a_scene_without_posed_frames_is_shown_renders_and_the_run_says_so(
        chat_servers, django_capture_on_commit_callbacks):
    item = scanned_item()
    server = chat_servers(reply="nightstand")

    run = run_to_the_end(hosted_3d_vlm(server, "egocentric", 2), item, django_capture_on_commit_callbacks)

    [request] = server.requests
    assert sent_pictures(request) == rendered(item, "egocentric:2")
    assert run.visual_input == "egocentric:2" and run.inputs == {"views": {"renders": [item.scene.external_id]}}
    assert "views" not in labels.run_label(run)  # renders are the default view set


def test_each_scene_is_shown_what_it_has_and_fewer_frames_than_asked_fall_back_to_renders(
        chat_servers, tmp_path, django_capture_on_commit_callbacks):
    posed = scanned_item(seed=0)
    short = scanned_item(posed.benchmark, seed=1)
    captured = frames(4)
    import_sens(posed.benchmark, posed.scene.external_id, write_sens(tmp_path / "a.sens", captured))
    import_sens(posed.benchmark, short.scene.external_id, write_sens(tmp_path / "b.sens", frames(2)))
    server = chat_servers(reply="nightstand")

    run = run_to_the_end(hosted_3d_vlm(server, n_views=3), posed, django_capture_on_commit_callbacks)

    shown = {tuple(sent_pictures(request)) for request in server.requests}
    assert shown == {tuple(captured[k]["image"] for k in (0, 2, 3)), tuple(rendered(short, "multi_view:3"))}
    assert rendered(posed, "multi_view:3") == []
    assert run.inputs == {"views": {"posed_frames": [posed.scene.external_id],
                                    "renders": [short.scene.external_id]}}
    assert "views=posed frames for 1 of 2 scenes" in labels.run_label(run)


def test_a_mirrored_variant_mirrors_the_posed_frames(tmp_path):
    item = scanned_item()
    captured = frames(2)
    import_sens(item.benchmark, item.scene.external_id, write_sens(tmp_path / "capture.sens", captured))
    model = ModelSpec.objects.create(name="vlm", adapter="openai_compatible", config={"endpoint": "http://127.0.0.1:9"})
    shown = visual_inputs.scene_images(VisualInput.parse("multi_view:2"), model, item.scene, flip=True)
    assert shown == [mirror_image(frame["image"]) for frame in captured]
