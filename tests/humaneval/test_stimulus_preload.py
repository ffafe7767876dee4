"""#28: the next item's files are fetched while the current one is answered (jsPsych's preload), so the next
clock starts on a stimulus already in the browser. current/ and answer/ name them; the participant may read
them; an item further ahead is neither named nor readable."""

import pytest

from benchmarks.models import AssetRole
from benchmarks.services import store_asset
from humaneval.models import EvalSession
from humaneval.services.design import StudyDesign, create_study
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    items = [ItemFactory(answers=["armchair"])]
    items += [ItemFactory(change__scene__benchmark=items[0].benchmark, answers=["desk"]) for _ in range(2)]
    for n, item in enumerate(items):
        store_asset(item.scene, AssetRole.IMAGE, f"view{n}.png", b"\x89PNG" + bytes([n]) * 64)
    return create_study(items[0].benchmark, StudyDesign("Pilot", [i.pk for i in items], 30, 600), UserFactory())


def image_url(item_id: int) -> str:
    from benchmarks.models import Item

    return Item.objects.get(pk=item_id).scene.assets.get(role=AssetRole.IMAGE).file.url


def test_the_next_items_files_are_named_and_readable_and_no_further_one(client, study):
    client.post(f"/crowd/studies/{study.pk}/", {"PROLIFIC_PID": "EVAL1", "STUDY_ID": "S", "SESSION_ID": "X"})
    session = EvalSession.objects.get()
    state = client.get(f"/api/v1/sessions/{session.pk}/current/").json()
    plan = list(session.plan.order_by("position").values_list("item_id", flat=True))
    assert state["item"]["id"] == plan[0]
    assert state["preload"] == [image_url(plan[1])]
    assert client.get(image_url(plan[1])).status_code == 200  # the next item's stimulus may be read ahead
    assert client.get(image_url(plan[2])).status_code in (403, 404)  # two ahead: not yet

    state = client.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": plan[0], "answer": "armchair"},
                        content_type="application/json").json()
    assert state["item"]["id"] == plan[1]
    assert state["preload"] == [image_url(plan[2])]
    state = client.post(f"/api/v1/sessions/{session.pk}/answer/", {"item": plan[1], "answer": "desk"},
                        content_type="application/json").json()
    assert state["item"]["id"] == plan[2] and state["preload"] == []  # the last item: nothing after it
