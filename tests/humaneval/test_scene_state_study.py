"""#47 a study's `scene_state` (HypoLab's, not in any paper): with `changed`, each item's page shows
its change's after-state (the after map, points and moved boxes) instead of the scene before it; the
default `imagined` shows the before map as every study did. Checked at design (a refusal naming how
many and which items lack an after-state), recorded in the design, and after-state files readable
only by a participant of a changed-scene study whose item's change it shows."""

import pytest

from benchmarks.edit_digest import edit_digest
from benchmarks.media import may_read_asset
from benchmarks.models import AssetRole
from benchmarks.services import store_asset
from core import roles
from core.errors import DomainError
from humaneval.models import Study
from humaneval.services.design import StudyDesign, create_study, study_design
from humaneval.services.sessions import start_session
from tests.factories import ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

EDIT = {"objects": [{"instance_id": 2, "translation": [0.5, 0.0, 0.0]}], "added": []}


@pytest.fixture
def scene_with_change():
    scene = SceneFactory()
    before = store_asset(scene, AssetRole.TOPVIEW_PLAIN, "before.png", b"before-map")
    item = ItemFactory(change__scene=scene, change__edit=EDIT, external_id="q-1")
    after = store_asset(scene, AssetRole.TOPVIEW_PLAIN, "after.png", b"after-map",
                        {"after_state": item.change_id, "edit_digest": edit_digest(EDIT)})
    return item, before, after


def item_view(client, study):
    user = UserFactory(role=roles.EVALUATOR)
    session = start_session(study, user)
    client.force_login(user)
    return user, client.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]


def test_a_changed_scene_study_shows_the_after_map_and_an_imagined_one_the_before_map(client, scene_with_change):
    item, before, after = scene_with_change
    changed = create_study(item.benchmark, StudyDesign("Changed", [item.pk], scene_state="changed"), None)
    assert study_design(changed)["scene_state"] == "changed"
    participant, shown = item_view(client, changed)
    assert shown["scene"]["topview_plain_url"] == after.file.url
    assert shown["scene"]["topview_semantic_url"] is None and shown["scene"]["points_url"] is None  # never the before
    assert shown["context_change"] == item.change.text  # the change's text is shown as in every study
    chair = next(box for box in shown["scene"]["objects"] if box["instance_id"] == 2)
    assert chair["center"][0] == pytest.approx(2.5)  # the box as the edit moved it (factory chair at x=2)
    assert may_read_asset(participant, after)

    imagined = create_study(item.benchmark, StudyDesign("Imagined", [item.pk]), None)
    assert imagined.scene_state == "imagined" and study_design(imagined)["scene_state"] == "imagined"
    other, shown = item_view(client, imagined)
    assert shown["scene"]["topview_plain_url"] == before.file.url
    assert not may_read_asset(other, after) and may_read_asset(other, before)


def test_a_changed_scene_study_is_refused_naming_the_items_without_an_after_state(scene_with_change):
    item, _, _ = scene_with_change
    bare = [ItemFactory(change__scene=item.scene, change__edit=EDIT, benchmark=item.benchmark, external_id=f"bare-{n}")
            for n in range(2)]
    no_edit = ItemFactory(change__scene=item.scene, benchmark=item.benchmark, external_id="no-edit")
    ids = [item.pk, no_edit.pk] + [b.pk for b in bare]
    with pytest.raises(DomainError) as refused:
        create_study(item.benchmark, StudyDesign("Changed", ids, scene_state="changed"), None)
    assert refused.value.field == "scene_state"
    assert "3 of its 4 items have no change with geometry and an after-state map: bare-0, bare-1, no-edit." in str(
        refused.value)
    with pytest.raises(DomainError, match="scene_state is imagined or changed") as wrong:
        StudyDesign("Changed", ids, scene_state="after")
    assert wrong.value.field == "scene_state"


def test_the_api_takes_scene_state_and_refuses_a_wrong_one_naming_the_field(client, scene_with_change):
    item, _, _ = scene_with_change
    client.force_login(UserFactory(role=roles.ADMIN))
    body = {"benchmark": item.benchmark.slug, "name": "Changed", "items": [item.pk], "scene_state": "changed"}
    made = client.post("/api/v1/studies/", body, content_type="application/json")
    assert made.status_code == 201 and made.json()["design"]["scene_state"] == "changed"
    wrong = client.post("/api/v1/studies/", {**body, "scene_state": "later"}, content_type="application/json")
    assert wrong.status_code == 400 and "scene_state" in str(wrong.json())


def test_the_design_page_offers_the_scene_shown_and_keeps_a_refused_choice(client, scene_with_change):
    item, _, after = scene_with_change
    item.benchmark.items.filter(pk=item.pk).update(status="approved")
    client.force_login(UserFactory(role=roles.ADMIN))
    url = f"/manage/{item.benchmark.slug}/studies/design/"
    page = client.get(url).content.decode()
    assert 'name="scene_state"' in page and 'value="changed"' in page
    made = client.post(url, {"name": "Changed", "items": [item.pk], "scene_state": "changed"})
    assert made.status_code == 302
    assert Study.objects.get(name="Changed").scene_state == "changed"
    after.delete()  # no after-state now: refused naming the field, the choice kept, nothing written
    refused = client.post(url, {"name": "Changed again", "items": [item.pk], "scene_state": "changed"})
    assert refused.status_code == 400 and "scene_state" in refused.content.decode()
    assert '<option value="changed" selected>' in refused.content.decode()
    assert not Study.objects.filter(name="Changed again").exists()
