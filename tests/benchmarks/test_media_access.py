"""Files are served only to those who may see them (local storage; S3 in tests/test_storage_s3.py).

Every stored file — a scene's point cloud, viewer file, top views, image, videos, an uploaded file,
a pending upload, and a release's files in every format — requested anonymously and as each role:
only the allowed get the bytes, everyone else 404 (the answer a missing file gets). Release files
(gold answers) only for reviewers and admins. The pages that embed these URLs still load them for
those allowed, byte ranges included.
"""

import hashlib
import re
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from annotation import services as annotation_services
from annotation.models import Assignment
from benchmarks import media
from benchmarks.models import Asset, Upload
from benchmarks.releases import life
from benchmarks.services import store_asset
from humaneval.models import EvalSession
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.sessions import start_session
from tests.factories import ChangeFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
VIDEO = bytes(range(256)) * 400
UPLOADED = b"ply\nformat binary_little_endian 1.0\n" + bytes(range(256)) * 40
RANDOM_FOLDER = re.compile(r"/[0-9a-f]{32}/[^/]+$")
ROLES = ("anonymous", "admin", "reviewer", "annotator", "annotator_leased", "annotator_elsewhere",
         "evaluator", "evaluator_in_session")


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    """One scene with every kind of file, a second scene, a release exported with all its formats,
    an uploaded file on the scene and a pending upload, and a user for each role."""
    change = ChangeFactory(status="approved")
    scene = change.scene
    benchmark = scene.benchmark
    item = ItemFactory(change=change)
    other_scene = SceneFactory(benchmark=benchmark)
    ItemFactory(change__scene=other_scene, change__status="approved")
    files = {
        "point_cloud": store_asset(scene, "point_cloud", "scan.ply", b"ply\n" + VIDEO[:999]),
        "viewer_points": store_asset(scene, "viewer_points", "scene.hlpc", VIDEO[:5000]),
        "topview_plain": store_asset(scene, "topview_plain", "topview.png", PNG, {"bounds": [0, 0, 1, 1]}),
        "topview_semantic": store_asset(scene, "topview_semantic", "topview_semantic.png", PNG),
        "image": store_asset(scene, "image", "view.png", PNG, {"overlays": []}),
        "video_before": store_asset(scene, "video", "before.mp4", VIDEO, {"which": "before", "fps": 25}),
        "video_after": store_asset(scene, "video", "after.mp4", VIDEO[::-1], {"which": "after", "fps": 25}),
    }
    other_file = store_asset(other_scene, "image", "elsewhere.png", PNG)

    users = {name: UserFactory(role=role) for name, role in [
        ("admin", "admin"), ("reviewer", "reviewer"), ("annotator", "annotator"),
        ("annotator_leased", "annotator"), ("annotator_elsewhere", "annotator"), ("evaluator", "evaluator"),
        ("evaluator_in_session", "evaluator")]}
    users["anonymous"] = None

    # A browser upload by the admin: one completed (now an asset of the scene), one still pending.
    admin_api = APIClient()
    admin_api.force_login(users["admin"])
    uploads = {}
    for which in ("done", "pending"):
        announced = admin_api.post("/api/v1/uploads/", {
            "role": "point_cloud", "filename": "scan.ply", "size": len(UPLOADED), "scene": scene.pk,
            "sha256": hashlib.sha256(UPLOADED).hexdigest()}, format="json").json()
        assert APIClient().put(announced["upload"]["url"], UPLOADED,
                               content_type="application/octet-stream").status_code == 204
        uploads[which] = announced
    done = admin_api.post(f"/api/v1/uploads/{uploads['done']['id']}/complete/")
    assert done.status_code == 201, done.json()
    files["upload"] = Asset.objects.get(pk=done.json()["id"])

    with django_capture_on_commit_callbacks(execute=True):
        release = life.export_release(benchmark, "1.0.0", users["admin"])
    release.refresh_from_db()
    release_files = life.release_files(release)
    assert set(release_files) >= {"jsonl", "manifest", "json", "csv", "parquet", "card"}

    # Leases: one on the scene, one on the other scene only.
    leased = annotation_services.lease_assignment(
        annotation_services.create_campaign(benchmark, "Moves", "movement", [scene]), users["annotator_leased"])
    elsewhere = annotation_services.lease_assignment(
        annotation_services.create_campaign(benchmark, "Other moves", "movement", [other_scene]),
        users["annotator_elsewhere"])
    assert (leased.scene_id, elsewhere.scene_id) == (scene.pk, other_scene.pk)
    # A session whose plan shows the scene's item.
    study = create_study(benchmark, StudyDesign("Pilot", [item.pk], 30, 600), UserFactory())
    session = start_session(study, users["evaluator_in_session"])

    return {
        "scene": scene, "other_scene": other_scene, "change": change, "files": files, "other_file": other_file,
        "release": release, "release_files": release_files, "users": users, "assignment": leased,
        "session": session, "pending_key": uploads["pending"]["key"], "benchmark": benchmark,
    }


def client_for(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def url_of(name: str) -> str:
    return f"/media/{name}"


RELEASE_READERS = {"admin", "reviewer"}


def readers_of(asset) -> set[str]:
    """Staff read every file; a participant only what their screen shows (benchmarks.media): the
    lease's context-change task shows the viewer's files, the session's item also its image and videos."""
    if asset.role in {"viewer_points", "topview_plain", "topview_semantic"}:
        return RELEASE_READERS | {"annotator_leased", "evaluator_in_session"}
    if asset.role in {"image", "video"}:
        return RELEASE_READERS | {"evaluator_in_session"}
    return RELEASE_READERS


@pytest.mark.parametrize("role", ROLES)
def test_every_stored_file_is_served_only_to_those_allowed(world, role):
    client = client_for(world["users"][role])
    expected = []  # (what, name, allowed)
    for what, asset in world["files"].items():
        expected.append((what, asset.file.name, role in readers_of(asset)))
    for fmt, asset in world["release_files"].items():
        expected.append((f"release {fmt}", asset.file.name, role in RELEASE_READERS))
    expected.append(("another scene's image", world["other_file"].file.name, role in RELEASE_READERS))
    expected.append(("pending upload", world["pending_key"], role == "admin"))
    for what, name, allowed in expected:
        response = client.get(url_of(name))
        if allowed:
            assert response.status_code == 200, (role, what)
            with default_storage.open(name, "rb") as stored:
                assert body(response) == stored.read(), (role, what)
            assert response["Cache-Control"].startswith("private")
        else:
            # 404 to everyone refused, signed in or not: a response never says a file exists.
            assert response.status_code == 404, (role, what, response.status_code)
            assert name.encode() not in response.content


@pytest.mark.parametrize("role", ROLES)
def test_the_download_api_applies_the_same_rules(world, role):
    api = APIClient()
    if world["users"][role] is not None:
        api.force_login(world["users"][role])
    for what, asset in [*world["files"].items(), *world["release_files"].items()]:
        allowed = role in readers_of(asset)
        answer = api.get(f"/api/v1/assets/{asset.pk}/download/")
        assert answer.status_code == (302 if allowed else 403), (role, what)
        if allowed:
            assert body(api.get(answer["Location"])) == asset.file.open("rb").read()


def test_names_are_unpredictable_and_the_old_release_paths_give_nothing(world):
    release = world["release"]
    for asset in [*world["files"].values(), *world["release_files"].values()]:
        assert RANDOM_FOLDER.search(asset.file.name), asset.file.name
    assert RANDOM_FOLDER.search(world["pending_key"])
    # Two files stored under the same name land in different folders, each keeping its name.
    again = store_asset(world["scene"], "image", "view.png", PNG)
    assert again.file.name != world["files"]["image"].file.name
    assert again.file.name.rsplit("/", 1)[-1] == "view.png"
    admin = client_for(world["users"]["admin"])
    slug = release.benchmark.slug
    for guess in (f"assets/misc/export/{slug}-{release.version}.jsonl", f"assets/misc/export/{slug}-1.0.0.csv"):
        assert client_for(None).get(url_of(guess)).status_code == 404
        assert admin.get(url_of(guess)).status_code == 404
    for path in ("../config/settings.py", "assets/scenes/1/../../../config/settings.py", "",
                 "assets/scenes/99999999999999999999999/x/y.png"):
        assert admin.get(url_of(path)).status_code == 404


def test_a_lease_or_session_that_ends_closes_the_files(world):
    viewer = world["files"]["viewer_points"].file.name
    annotator = client_for(world["users"]["annotator_leased"])
    assert annotator.get(url_of(viewer)).status_code == 200
    Assignment.objects.filter(pk=world["assignment"].pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert annotator.get(url_of(viewer)).status_code == 404
    Assignment.objects.filter(pk=world["assignment"].pk).update(
        lease_expires_at=timezone.now() + timedelta(minutes=5), status="submitted")
    assert annotator.get(url_of(viewer)).status_code == 404

    evaluator = client_for(world["users"]["evaluator_in_session"])
    assert evaluator.get(url_of(viewer)).status_code == 200
    EvalSession.objects.filter(pk=world["session"].pk).update(status="finished")
    assert evaluator.get(url_of(viewer)).status_code == 404


def test_non_get_methods_are_refused(world):
    admin = client_for(world["users"]["admin"])
    name = world["files"]["image"].file.name
    assert admin.head(url_of(name)).status_code == 200
    assert admin.put(url_of(name), b"x", content_type="application/octet-stream").status_code == 405
    assert admin.delete(url_of(name)).status_code == 405


# --- pages that embed the URLs still load them for those allowed -------------------------------------


def assert_loads(client, url: str, ranged: bool = False):
    assert url and url.startswith("/media/"), url
    whole = client.get(url)
    assert whole.status_code == 200, url
    content = body(whole)
    assert content and whole["Accept-Ranges"] == "bytes"
    if ranged:  # the video player seeks by byte ranges
        part = client.get(url, HTTP_RANGE="bytes=100-199")
        assert part.status_code == 206 and body(part) == content[100:200]
    assert client_for(None).get(url).status_code == 404
    assert client_for(UserFactory(role="annotator")).get(url).status_code == 404


def test_the_annotation_page_loads_its_scene_files_for_the_lease_holder(world):
    annotator = client_for(world["users"]["annotator_leased"])
    page = annotator.get(f"/annotate/{world['assignment'].pk}/")
    assert page.status_code == 200
    viewer = page.context["viewer"]
    assert viewer["points_url"] == world["files"]["viewer_points"].file.url
    assert viewer["points_url"].encode() in page.content
    for key in ("points_url", "topview_plain_url", "topview_semantic_url"):
        assert_loads(annotator, viewer[key])
    # The same worker's lease does not open the other scene's files.
    assert annotator.get(world["other_file"].file.url).status_code == 404


def test_the_evaluator_session_loads_its_item_files_for_the_participant(world):
    evaluator = client_for(world["users"]["evaluator_in_session"])
    session = world["session"]
    assert evaluator.get(f"/eval/sessions/{session.pk}/").status_code == 200
    item = evaluator.get(f"/api/v1/sessions/{session.pk}/current/").json()["item"]
    assert item["scene"]["scene_id"] == world["scene"].pk
    assert_loads(evaluator, item["scene"]["points_url"])
    assert_loads(evaluator, item["scene"]["topview_plain_url"])
    assert [image["url"] for image in item["images"]] == [world["files"]["image"].file.url]
    assert_loads(evaluator, item["images"][0]["url"])
    assert_loads(evaluator, item["videos"]["before"], ranged=True)
    assert_loads(evaluator, item["videos"]["after"], ranged=True)
    # Another evaluator of the same study who was not given this scene: nothing.
    assert client_for(world["users"]["evaluator"]).get(item["videos"]["before"]).status_code == 404


def test_the_scene_review_and_release_pages_load_their_files_for_staff(world):
    admin = client_for(world["users"]["admin"])
    page = admin.get(f"/manage/scenes/{world['scene'].pk}/")
    assert page.status_code == 200
    assert_loads(admin, page.context["pair"]["before"], ranged=True)
    assert_loads(admin, page.context["pair"]["after"], ranged=True)

    reviewer = client_for(world["users"]["reviewer"])
    page = reviewer.get(f"/review/changes/{world['change'].pk}/")
    assert page.status_code == 200
    assert_loads(reviewer, page.context["viewer"]["points_url"])

    page = admin.get(f"/releases/{world['release'].pk}/")
    assert page.status_code == 200
    links = re.findall(r'href="(/media/[^"]+)"', page.content.decode())
    assert len(links) == len(world["release_files"])
    for link in links:
        assert_loads(admin, link)
        assert_loads(reviewer, link)
        # Gold answers: not for those who may see the scene's files.
        assert client_for(world["users"]["annotator_leased"]).get(link).status_code == 404
        assert client_for(world["users"]["evaluator_in_session"]).get(link).status_code == 404


# --- the check command --------------------------------------------------------------------------------


def test_check_media_access_requests_every_file_anonymously(world, capsys, monkeypatch):
    call_command("check_media_access")
    last = capsys.readouterr().out.strip().splitlines()[-1]
    n = Asset.objects.values("file").distinct().count() + Upload.objects.filter(status="pending").count()
    assert last == f"files={n} public=0 refused={n} errors=0 storage=local"

    # Were /media/ public again, the command would say so and fail.
    monkeypatch.setattr(media, "may_read_name", lambda user, name: (True, True))
    with pytest.raises(CommandError):
        call_command("check_media_access")
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == f"files={n} public={n} refused=0 errors=0 storage=local"
    assert any(line.startswith("public: assets/misc/export/") for line in out)
