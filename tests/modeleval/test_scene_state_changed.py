"""#47 `scene_state: changed` (HypoLab's condition, not in any paper): a run shown every visual input
from its item's change's after-state (assets with meta {"after_state": <change id>}) against the strict
loopback chat server, beside `imagined` (the paper's: the scene before the change, as today); launches
refused naming how many and which items lack a change, its geometry or an after-state; the
hypo3d-imagination-gap recipe launching both labelled; a point-cloud model given the after-state's
points."""

import base64
import io

import pytest
from PIL import Image

from benchmarks.edit_digest import edit_digest
from benchmarks.models import AssetRole
from benchmarks.services import store_asset
from core.errors import DomainError
from demo.rooms import generate_room
from modeleval import recipes, services
from modeleval.analysis.labels import run_label
from modeleval.clients.adapters import PointCloudModel
from modeleval.models import ModelSpec, Run
from scenes import processing
from scenes.after_state import build_after_state
from scenes.processing import viewer_points
from scenes.scans import load_scene_points, write_points_ply
from tests.factories import ItemFactory, SceneFactory
from tests.modeleval.test_run_inputs import endpoint_model, finished, png

pytestmark = pytest.mark.django_db

EDIT = {"objects": [{"instance_id": 2, "translation": [0.5, 0.0, 0.0]}], "added": []}
BEFORE, AFTER = (200, 0, 0), (0, 0, 200)
CHANGE_TEXT = "The chair has been moved from the desk to the window next to the bookshelf."


def sent_colours(endpoint) -> list[tuple]:
    """The first pixel of every image of every request, in order."""
    return [Image.open(io.BytesIO(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))).getpixel((0, 0))
            for request in endpoint.requests for message in request["body"]["messages"]
            if isinstance(message["content"], list) for part in message["content"] if part["type"] == "image_url"]


def after_state_map(change, role=AssetRole.TOPVIEW_PLAIN, colour=AFTER, edit=EDIT):
    return store_asset(change.scene, role, f"after-{change.pk}.png", png(colour),
                       {"after_state": change.pk, "edit_digest": edit_digest(edit)})


@pytest.fixture
def changed_items():
    """Two approved items on one scene, each with its change's geometry, before maps stored first and
    the after-state maps after them (an imagined run must still be shown the before ones)."""
    first = ItemFactory(change__edit=EDIT, external_id="q-1", answers=["window"])
    second = ItemFactory(change__scene=first.scene, change__edit=EDIT, benchmark=first.benchmark, external_id="q-2",
                         answers=["window"], tags={"change_type": "removal", "question_type": ["Semantic"]})
    for role in (AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC):
        store_asset(first.scene, role, "before.png", png(BEFORE))
    for item in (first, second):
        after_state_map(item.change)
        after_state_map(item.change, AssetRole.TOPVIEW_SEMANTIC, (0, 200, 0))
    return first, second


def test_a_changed_run_sends_the_after_state_map_and_an_imagined_run_the_before_map(
        changed_items, chat_servers, django_capture_on_commit_callbacks):
    first, _ = changed_items
    endpoint = chat_servers(reply="window")
    vlm = endpoint_model(endpoint, "Qwen2-VL-72B-Instruct", "top_view_plain")
    with django_capture_on_commit_callbacks(execute=True):
        changed = services.launch_run(vlm.pk, first.benchmark, None, inputs={"scene_state": "changed"})
    finished([changed])
    assert endpoint.refused == []
    assert sent_colours(endpoint) == [AFTER, AFTER]
    # the prompt is the template's as it is, the change's text in it: only what is shown differs
    assert all(CHANGE_TEXT in prompt for prompt in endpoint.prompts)
    assert changed.inputs == {"scene_state": "changed"} and "scene_state=changed" in run_label(changed)

    for inputs in ({"scene_state": "imagined"}, None):
        endpoint.requests.clear()
        with django_capture_on_commit_callbacks(execute=True):
            imagined = services.launch_run(vlm.pk, first.benchmark, None, inputs=inputs)
        finished([imagined])
        assert sent_colours(endpoint) == [BEFORE, BEFORE]
        assert "scene_state" not in run_label(imagined)  # the default is left unsaid
    # the semantic map of the after-state for a semantic-map run
    endpoint.requests.clear()
    with django_capture_on_commit_callbacks(execute=True):
        semantic = services.launch_run(vlm.pk, first.benchmark, None, visual_input="top_view_semantic",
                                       inputs={"scene_state": "changed"})
    finished([semantic])
    assert sent_colours(endpoint) == [(0, 200, 0), (0, 200, 0)]


def test_a_changed_run_is_refused_naming_the_items_without_an_after_state(changed_items, chat_servers):
    first, second = changed_items
    endpoint = chat_servers(reply="window")
    vlm = endpoint_model(endpoint, "Qwen2-VL-72B-Instruct", "top_view_plain")
    lacking = [ItemFactory(change__scene=first.scene, change__edit=EDIT, benchmark=first.benchmark,
                           external_id=f"bare-{n}") for n in range(2)]
    with pytest.raises(DomainError) as refused:
        services.launch_run(vlm.pk, first.benchmark, None, inputs={"scene_state": "changed"})
    assert refused.value.field == "inputs"
    assert "2 of the run's 4 items have no after-state top_view_plain" in str(refused.value)
    assert "bare-0, bare-1." in str(refused.value) and "q-1" not in str(refused.value)
    after_state_map(lacking[0].change)
    after_state_map(lacking[1].change, edit={"objects": [], "added": []})  # built from an earlier edit: stale
    with pytest.raises(DomainError, match=r"1 of the run's 4 items have no after-state top_view_plain .*: bare-1\."):
        services.launch_run(vlm.pk, first.benchmark, None, inputs={"scene_state": "changed"})
    after_state_map(lacking[1].change)
    no_edit = ItemFactory(change__scene=first.scene, benchmark=first.benchmark, external_id="no-edit")
    with pytest.raises(DomainError, match=r"1 of the run's 5 items have a change without one: no-edit\."):
        services.launch_run(vlm.pk, first.benchmark, None, inputs={"scene_state": "changed"})
    no_edit.delete()
    ItemFactory(change=None, scene=first.scene, benchmark=first.benchmark, external_id="no-change")
    with pytest.raises(DomainError, match=r"1 of the run's 5 items have none: no-change\."):
        services.launch_run(vlm.pk, first.benchmark, None, inputs={"scene_state": "changed"})
    with pytest.raises(DomainError, match="scene_state is imagined or changed"):
        services.launch_run(vlm.pk, first.benchmark, None, inputs={"scene_state": "after"})
    llm = endpoint_model(endpoint, "Llama-3.2-3B-Instruct", "caption_only")
    with pytest.raises(DomainError, match="is shown caption_only"):
        services.launch_run(llm.pk, first.benchmark, None, inputs={"scene_state": "changed"})
    assert not Run.objects.exists()


def test_the_imagination_gap_recipe_launches_both_conditions_labelled(
        changed_items, chat_servers, django_capture_on_commit_callbacks):
    first, _ = changed_items
    endpoint = chat_servers(reply="window")
    vlm = endpoint_model(endpoint, "Qwen2-VL-72B-Instruct", "top_view_plain")
    with django_capture_on_commit_callbacks(execute=True):
        runs = recipes.launch_recipe("hypo3d-imagination-gap", first.benchmark, [vlm.pk])
    finished(runs)
    assert [run.inputs for run in runs] == [{"scene_state": "imagined"}, {"scene_state": "changed"}]
    assert [run.recipe["entry"] for run in runs] == ["imagined", "changed"]
    assert sent_colours(endpoint) == [BEFORE, BEFORE, AFTER, AFTER]
    assert run_label(runs[0]) == f"Qwen2-VL-72B-Instruct · paper-fig11 (run {runs[0].pk})"
    assert run_label(runs[1]) == f"Qwen2-VL-72B-Instruct · paper-fig11 · scene_state=changed (run {runs[1].pk})"
    assert all(prompt.count(CHANGE_TEXT) == 1 for prompt in endpoint.prompts)
    assert recipes.find("hypo3d-imagination-gap")["source"].startswith("HypoLab, not in the paper")


class PointCount(PointCloudModel):
    """A point-cloud model for the test: answers with how many points it was given."""

    def answer(self, request, item, repeat=0):
        return str(len(request.point_cloud.xyz))


def test_a_point_cloud_model_is_given_the_after_states_points(django_capture_on_commit_callbacks):
    room = generate_room(0, points_per_room=3000)
    scene = SceneFactory(external_id=room.external_id, caption=room.caption, object_labels=[])
    store_asset(scene, AssetRole.POINT_CLOUD, "scan.ply", write_points_ply(room.xyz, room.rgb, room.instance))
    item = ItemFactory(change__scene=scene, change__edit=EDIT, answers=["3000"])
    kept = slice(0, 1200)  # the after-state: a part of the points (an object removed, say)
    content, meta = viewer_points(room.xyz[kept], room.rgb[kept], room.instance[kept])
    store_asset(scene, AssetRole.VIEWER_POINTS, "after.hlpc", content, {**meta, "after_state": item.change_id})
    model = ModelSpec.objects.create(name="point-llm", adapter="point_cloud_python", modality="point_cloud",
                                     config={"class": f"{__name__}:PointCount"})
    outputs = []
    for state in ("imagined", "changed"):
        with django_capture_on_commit_callbacks(execute=True):
            run = services.launch_run(model.pk, item.benchmark, None, inputs={"scene_state": state})
        finished([run])
        outputs.append(run.predictions.get().output)
    assert outputs == ["3000", "1200"]


def test_the_platforms_after_state_of_a_moved_chair_is_what_a_changed_run_is_shown(
        chat_servers, django_capture_on_commit_callbacks):
    """The after-state as scenes.after_state builds it from the change's geometry (a bedroom's
    chair moved to the left of the bed), in both conditions against the loopback endpoint."""
    from tests.benchmarks.after_state_rooms import moved_chair, scanned_room

    change = moved_chair(scanned_room(), status="approved")
    scene = change.scene
    xyz, rgb, instance, objects = load_scene_points(scene)
    before = {a.role: a for a in processing.build_viewer_assets(scene, xyz, rgb, instance, objects)}
    after = {a.role: a for a in build_after_state(change.pk)}
    item = ItemFactory(change=change, external_id="chair-1", question="What is to the right of the chair now?")
    endpoint = chat_servers(reply="bed")
    vlm = endpoint_model(endpoint, "Qwen2-VL-72B-Instruct", "top_view_semantic")
    sent = {}
    for state in ("imagined", "changed"):
        endpoint.requests.clear()
        with django_capture_on_commit_callbacks(execute=True):
            run = services.launch_run(vlm.pk, item.benchmark, None, inputs={"scene_state": state})
        finished([run])
        [request] = endpoint.requests
        [part] = [p for m in request["body"]["messages"] if isinstance(m["content"], list) for p in m["content"]
                  if p["type"] == "image_url"]
        sent[state] = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
    role = AssetRole.TOPVIEW_SEMANTIC
    assert sent["imagined"] == before[role].file.open("rb").read()
    assert sent["changed"] == after[role].file.open("rb").read() != sent["imagined"]
    change.edit = {**change.edit, "objects": change.edit["objects"][:0]}  # edited again: that after-state is stale
    change.save(update_fields=["edit"])
    with pytest.raises(DomainError, match=r"1 of the run's 1 items have no after-state top_view_semantic .*: chair-1\."):
        services.launch_run(vlm.pk, item.benchmark, None, inputs={"scene_state": "changed"})
