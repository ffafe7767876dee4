"""Gold never reaches a participant (issue #34, H1): one rule (benchmarks.media.may_read_asset) decides
for the local /media/ view, the download API and its token link. Staff read every file; an annotator
only the files of the task their live lease shows; an evaluator only the stimulus of the item on screen
and of the next one, while the session is active and before its deadline. Scene metadata (M3-Verse's
objects_after.json and operations.json state the answers), renders, the source scan, posters,
thumbnails and release files never reach a participant role."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotation import services as annotation_services
from benchmarks import media
from benchmarks.models import Asset, AssetRole
from benchmarks.services import store_asset
from humaneval.models import EvalSession, Response
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.sessions import answer_item, current_item, start_session
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db

BYTES = bytes(range(256)) * 8
SCENE_ROLES = [role for role in AssetRole.values if role != AssetRole.EXPORT]
USERS = ("anonymous", "admin", "reviewer", "annotator", "annotator_leased", "evaluator", "evaluator_in_session")
STATES = ("item_on_screen", "session_past_deadline", "session_finished", "item_timed_out")
# What the item page shows of a scene (flip off: the image, not its mirrored twin).
ITEM_SHOWS = {"viewer_points", "topview_plain", "topview_semantic", "image", "video"}
# What a context-change task shows of its scene: the viewer's files.
LEASE_SHOWS = {"viewer_points", "topview_plain", "topview_semantic"}


def scene_with_every_file(benchmark):
    change = ChangeFactory(status="approved", scene__benchmark=benchmark)
    item = ItemFactory(change=change)
    files = {role: store_asset(change.scene, role, f"{role}.bin", BYTES, {"which": "before"}) for role in SCENE_ROLES}
    return item, files


@pytest.fixture
def world():
    """An M3-Verse-like benchmark: the item on screen (scene `shown`), the next item (`following`) and
    one not reached (`later`), each scene with a file of every role; a release file; a user per role."""
    benchmark = BenchmarkFactory(family="m3verse")
    scenes = {name: scene_with_every_file(benchmark) for name in ("shown", "following", "later")}
    export = store_asset(None, AssetRole.EXPORT, "release.jsonl", b'{"answers": ["add Book"]}\n')
    users = {name: UserFactory(role=name.split("_")[0]) for name in USERS if name != "anonymous"}
    users["anonymous"] = None
    campaign = annotation_services.create_campaign(benchmark, "Moves", "movement", [scenes["shown"][0].scene])
    annotation_services.lease_assignment(campaign, users["annotator_leased"])
    study = create_study(benchmark, StudyDesign("Pilot", [scenes[n][0].pk for n in ("shown", "following", "later")],
                                                60, 600), UserFactory(role="admin"))
    session = start_session(study, users["evaluator_in_session"])
    on_screen = current_item(session.pk, users["evaluator_in_session"]).on_screen
    assert on_screen.entry.item_id == scenes["shown"][0].pk
    return {"scenes": scenes, "export": export, "users": users, "session": session}


def put_in_state(world, state: str) -> None:
    session = world["session"]
    if state == "session_past_deadline":  # abandoned: still active, its time is up
        EvalSession.objects.filter(pk=session.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    elif state == "session_finished":
        EvalSession.objects.filter(pk=session.pk).update(status="finished")
    elif state == "item_timed_out":
        Response.objects.filter(session=session).update(deadline=timezone.now() - timedelta(seconds=1))


def allowed(user: str, role: str, state: str) -> bool:
    """The table: a file of the scene on screen, of `role`, for `user`, in session `state`."""
    if user in ("admin", "reviewer"):
        return True
    if user == "annotator_leased":
        return role in LEASE_SHOWS
    if user == "evaluator_in_session":
        return state == "item_on_screen" and role in ITEM_SHOWS
    return False


@pytest.mark.parametrize("state", STATES)
def test_every_asset_role_for_every_user_in_every_session_state(world, state):
    put_in_state(world, state)
    files = world["scenes"]["shown"][1]
    for user_name in USERS:
        user = world["users"][user_name]
        for role, asset in files.items():
            expected = allowed(user_name, role, state)
            found = media.may_read_asset(user, asset) if user else False
            assert found == expected, (user_name, role, state)
        # release files: staff only, whatever the session
        assert (media.may_read_asset(user, world["export"]) if user else False) == (user_name in ("admin", "reviewer"))


def test_the_next_item_is_fetched_ahead_and_a_later_one_is_closed(world):
    evaluator = world["users"]["evaluator_in_session"]
    for name, expected in (("following", ITEM_SHOWS), ("later", set())):
        for role, asset in world["scenes"][name][1].items():
            assert media.may_read_asset(evaluator, asset) == (role in expected), (name, role)


def test_an_answered_item_closes_unless_the_study_lets_one_go_back(world):
    evaluator = world["users"]["evaluator_in_session"]
    session, (item, files) = world["session"], world["scenes"]["shown"]
    answer_item(session.pk, evaluator, item.pk, "a window")
    assert not media.may_read_asset(evaluator, files["image"])
    session.study.allow_going_back = True
    session.study.save(update_fields=["allow_going_back"])
    assert media.may_read_asset(evaluator, files["image"])
    assert not media.may_read_asset(evaluator, files["scene_meta"])


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_walking_every_asset_id_gives_a_participant_only_the_stimulus_on_screen(world):
    """The probe: a crowd evaluator asks the download API, the token link it answers and /media/ for
    every asset id there is; only the stimulus of the item on screen and the next one opens."""
    client = Client()
    client.force_login(world["users"]["evaluator_in_session"])
    readable = {asset.pk for name in ("shown", "following") for role, asset in world["scenes"][name][1].items()
                if role in ITEM_SHOWS}
    links = {}
    for asset in Asset.objects.order_by("pk"):
        answer = client.get(f"/api/v1/assets/{asset.pk}/download/")
        page = client.get(asset.file.url)
        if asset.pk in readable:
            assert answer.status_code == 302 and page.status_code == 200, asset.role
            links[asset.pk] = answer["Location"]
            assert body(client.get(answer["Location"])) == BYTES
        else:
            assert (answer.status_code, page.status_code) == (403, 404), asset.role
            assert answer.json()["asset"] == ["You may not read this file."]  # says nothing of what it is
    # Past the session's deadline (an abandoned session stays active), nothing opens, links included.
    put_in_state(world, "session_past_deadline")
    for asset in Asset.objects.filter(pk__in=readable):
        assert client.get(f"/api/v1/assets/{asset.pk}/download/").status_code == 403
        assert client.get(asset.file.url).status_code == 404
        assert client.get(links[asset.pk]).status_code == 403
