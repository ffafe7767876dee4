"""Assets on an S3-compatible server (moto in server mode on loopback), as in production: a private
bucket read only through presigned GETs handed out after benchmarks.media's check."""

import hashlib
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation import services as annotation_services
from benchmarks.models import Asset, Upload
from benchmarks.releases import life
from benchmarks.services import store_asset
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.sessions import start_session
from tests.factories import ChangeFactory, ItemFactory, SceneFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.services]
MOTO = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "moto_server"
KEYS = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}


@pytest.fixture(scope="session")
def s3_server():
    """One moto server per worker (its start-up is a second of CPU); each test empties it (s3_endpoint)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(MOTO), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(endpoint, timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        yield endpoint
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def s3_endpoint(s3_server):
    """The server as if new: moto's reset drops every bucket and object the last test made."""
    urllib.request.urlopen(urllib.request.Request(f"{s3_server}/moto-api/reset", method="POST"), timeout=10)
    return s3_server


@pytest.fixture
def bucket(settings, s3_endpoint):
    """The default storage on a fresh moto bucket, configured as config/settings.py does for S3_BUCKET."""
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, **KEYS)
    s3.create_bucket(Bucket="hypolab-test")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {"bucket_name": "hypolab-test", "endpoint_url": s3_endpoint, "access_key": "test",
                        "secret_key": "test", "region_name": "us-east-1", "default_acl": None,
                        "querystring_auth": True, "querystring_expire": 3600, "signature_version": "s3v4",
                        "file_overwrite": False},
        },
    }
    return s3


def test_asset_lands_in_the_bucket_with_size_sha256_and_a_presigned_url(bucket, s3_endpoint):
    content = b'{"hello": "world"}\n' * 100
    asset = store_asset(None, "export", "release.jsonl", content)
    assert asset.size == len(content) and asset.sha256 == hashlib.sha256(content).hexdigest()
    stored = bucket.get_object(Bucket="hypolab-test", Key=asset.file.name)
    assert stored["Body"].read() == content
    url = asset.file.url
    assert url.startswith(s3_endpoint) and "Signature" in url
    assert urllib.request.urlopen(url, timeout=5).read() == content


# --- browser uploads by presigned URL, checked downloads, deletion ---------------------------------------

CONTENT = b"ply\nformat binary_little_endian 1.0\n" + bytes(range(256)) * 4000  # ~1 MB: several hash chunks


def announce(client, content, **fields):
    body = {"role": "point_cloud", "filename": "scan.ply", "size": len(content),
            "sha256": hashlib.sha256(content).hexdigest(), **fields}
    return client.post("/api/v1/uploads/", body, format="json")


def put_bytes(target, content):
    """What the browser does with the answer: one PUT with the given headers, straight to the URL."""
    request = urllib.request.Request(target["url"], data=content, method="PUT", headers=target["headers"])
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def object_exists(s3, key) -> bool:
    try:
        s3.head_object(Bucket="hypolab-test", Key=key)
    except ClientError:
        return False
    return True


@pytest.fixture
def admin_client(api_client):
    api_client.force_login(UserFactory(role="admin"))
    return api_client


def test_upload_by_presigned_put_is_checked_then_becomes_an_asset(bucket, s3_endpoint, admin_client):
    scene = SceneFactory()
    answer = announce(admin_client, CONTENT, scene=scene.pk, meta={"which": "before"})
    assert answer.status_code == 201, answer.json()
    target = answer.json()["upload"]
    assert target["method"] == "PUT" and target["url"].startswith(s3_endpoint)
    assert "X-Amz-Signature" in target["url"] and "X-Amz-Expires=900" in target["url"]
    assert put_bytes(target, CONTENT) == 200

    done = admin_client.post(f"/api/v1/uploads/{answer.json()['id']}/complete/")
    assert done.status_code == 201, done.json()
    asset = Asset.objects.get(pk=done.json()["id"])
    assert (asset.scene, asset.role, asset.size) == (scene, "point_cloud", len(CONTENT))
    assert asset.meta == {"which": "before"} and asset.sha256 == hashlib.sha256(CONTENT).hexdigest()
    # The browser's object is the asset's file: nothing was copied.
    assert asset.file.name == answer.json()["key"]
    assert bucket.get_object(Bucket="hypolab-test", Key=asset.file.name)["Body"].read() == CONTENT
    # Completing twice (a retried request) gives the same asset, not a second one.
    again = admin_client.post(f"/api/v1/uploads/{answer.json()['id']}/complete/")
    assert again.json()["id"] == asset.pk and Asset.objects.count() == 1


def test_bytes_that_do_not_match_the_announced_sha256_are_refused_and_deleted(
    bucket, admin_client, django_capture_on_commit_callbacks
):
    answer = announce(admin_client, CONTENT).json()
    put_bytes(answer["upload"], CONTENT[:-1] + b"X")  # same size, one byte changed
    with django_capture_on_commit_callbacks(execute=True):
        refused = admin_client.post(f"/api/v1/uploads/{answer['id']}/complete/")
    assert refused.status_code == 400
    assert refused.json() == {"sha256": ["Does not match the uploaded bytes."]}
    assert not object_exists(bucket, answer["key"])
    assert Upload.objects.get(pk=answer["id"]).status == "failed" and not Asset.objects.exists()
    assert admin_client.post(f"/api/v1/uploads/{answer['id']}/complete/").status_code == 409


def test_wrong_size_is_refused_before_hashing(bucket, admin_client, django_capture_on_commit_callbacks):
    answer = announce(admin_client, CONTENT).json()
    put_bytes(answer["upload"], CONTENT + b"more")
    with django_capture_on_commit_callbacks(execute=True):
        refused = admin_client.post(f"/api/v1/uploads/{answer['id']}/complete/")
    assert refused.status_code == 400 and "size" in refused.json()
    assert not object_exists(bucket, answer["key"])


def test_completing_before_sending_the_bytes_says_so(bucket, admin_client):
    answer = announce(admin_client, CONTENT).json()
    early = admin_client.post(f"/api/v1/uploads/{answer['id']}/complete/")
    assert early.status_code == 400 and "file" in early.json()
    assert Upload.objects.get(pk=answer["id"]).status == "pending"


@pytest.mark.parametrize(
    ("fields", "field"),
    [({"sha256": "abc"}, "sha256"), ({"role": "poster"}, "role"), ({"size": 0}, "size"),
     ({"filename": ""}, "filename"), ({"scene": 987654}, "scene")],
)
def test_bad_announcements_name_the_field(admin_client, fields, field):
    answer = announce(admin_client, CONTENT, **fields)
    assert answer.status_code == 400 and field in answer.json()
    assert not Upload.objects.exists()


def test_only_admins_announce_uploads(api_client):
    api_client.force_login(UserFactory(role="annotator"))
    assert announce(api_client, CONTENT).status_code == 403


def test_download_redirects_to_a_short_lived_signed_url(bucket, s3_endpoint, settings, api_client):
    asset = store_asset(SceneFactory(), "video", "before.mp4", CONTENT)
    api_client.force_login(UserFactory(role="evaluator"))  # in no session showing the scene
    assert api_client.get(f"/api/v1/assets/{asset.pk}/download/").status_code == 403
    api_client.force_login(UserFactory(role="reviewer"))
    answer = api_client.get(f"/api/v1/assets/{asset.pk}/download/")
    assert answer.status_code == 302 and answer["Location"].startswith(s3_endpoint)
    assert "X-Amz-Expires=300" in answer["Location"]
    assert urllib.request.urlopen(answer["Location"], timeout=5).read() == CONTENT
    # The lifetime is a setting. moto does not enforce X-Amz-Expires (S3 answers 403 after it), so
    # expiry itself is exercised on the local-storage link below.
    settings.DOWNLOAD_URL_EXPIRY_S = 1
    assert "X-Amz-Expires=1&" in api_client.get(f"/api/v1/assets/{asset.pk}/download/")["Location"]


def test_files_with_gold_answers_download_for_reviewers_only(bucket, api_client):
    export = store_asset(None, "export", "release.jsonl", b'{"answer": "A"}\n')
    api_client.force_login(UserFactory(role="annotator"))
    refused = api_client.get(f"/api/v1/assets/{export.pk}/download/")
    assert refused.status_code == 403 and "asset" in refused.json()
    api_client.force_login(UserFactory(role="reviewer"))
    assert api_client.get(f"/api/v1/assets/{export.pk}/download/").status_code == 302
    api_client.logout()
    assert api_client.get(f"/api/v1/assets/{export.pk}/download/").status_code == 403


def test_deleting_an_asset_removes_its_object_from_the_bucket(
    bucket, admin_client, django_capture_on_commit_callbacks
):
    asset = store_asset(SceneFactory(), "image", "view.png", CONTENT)
    key = asset.file.name
    assert object_exists(bucket, key)
    with django_capture_on_commit_callbacks(execute=True):
        assert admin_client.delete(f"/api/v1/assets/{asset.pk}/").status_code == 204
    assert not Asset.objects.filter(pk=asset.pk).exists() and not object_exists(bucket, key)


# --- the embedded default: local folder, Django-signed same-origin URLs ------------------------------


def test_local_storage_upload_download_expiry_and_delete(settings, admin_client, django_capture_on_commit_callbacks):
    answer = announce(admin_client, CONTENT, scene=SceneFactory().pk).json()
    target = answer["upload"]
    assert target["url"].startswith(f"/api/v1/uploads/{answer['id']}/content/?token=")
    browser = APIClient()  # the signed URL is the credential, as a presigned S3 URL is
    assert browser.put(target["url"], CONTENT, content_type=target["headers"]["Content-Type"]).status_code == 204
    forged = target["url"].replace("token=", "token=x")
    assert browser.put(forged, CONTENT, content_type="application/octet-stream").status_code == 403
    done = admin_client.post(f"/api/v1/uploads/{answer['id']}/complete/")
    assert done.status_code == 201, done.json()
    asset = Asset.objects.get(pk=done.json()["id"])
    path = Path(settings.MEDIA_ROOT) / asset.file.name
    assert path.read_bytes() == CONTENT
    assert browser.put(target["url"], b"late", content_type="application/octet-stream").status_code == 409

    settings.DOWNLOAD_URL_EXPIRY_S = 1
    link = admin_client.get(f"/api/v1/assets/{asset.pk}/download/")["Location"]
    assert link.startswith(f"/api/v1/assets/{asset.pk}/file/?token=")
    assert b"".join(browser.get(link).streaming_content) == CONTENT
    time.sleep(2.1)
    expired = browser.get(link)
    assert expired.status_code == 403 and "token" in expired.json()

    with django_capture_on_commit_callbacks(execute=True):
        assert admin_client.delete(f"/api/v1/assets/{asset.pk}/").status_code == 204
    assert not path.exists()


def test_local_storage_mismatch_deletes_the_file(settings, admin_client, django_capture_on_commit_callbacks):
    answer = announce(admin_client, CONTENT).json()
    APIClient().put(answer["upload"]["url"], CONTENT[::-1], content_type="application/octet-stream")
    assert (Path(settings.MEDIA_ROOT) / answer["key"]).exists()
    with django_capture_on_commit_callbacks(execute=True):
        refused = admin_client.post(f"/api/v1/uploads/{answer['id']}/complete/")
    assert refused.json() == {"sha256": ["Does not match the uploaded bytes."]}
    assert not (Path(settings.MEDIA_ROOT) / answer["key"]).exists()


def test_local_media_answers_byte_ranges_so_videos_can_seek(settings, client):
    asset = store_asset(None, "video", "clip.mp4", CONTENT)
    url = f"/media/{asset.file.name}"
    assert client.get(url).status_code == 404  # who may see which file: tests/test_media_access.py
    client.force_login(UserFactory(role="admin"))
    whole = client.get(url)
    assert whole.status_code == 200 and whole["Accept-Ranges"] == "bytes"
    assert b"".join(whole.streaming_content) == CONTENT
    part = client.get(url, HTTP_RANGE="bytes=100-199")
    assert part.status_code == 206 and part["Content-Range"] == f"bytes 100-199/{len(CONTENT)}"
    assert b"".join(part.streaming_content) == CONTENT[100:200]
    tail = client.get(url, HTTP_RANGE="bytes=-10")
    assert b"".join(tail.streaming_content) == CONTENT[-10:]
    assert client.get(url, HTTP_RANGE=f"bytes={len(CONTENT)}-").status_code == 416
    assert client.get("/media/../config/settings.py").status_code == 404


def test_scene_files_page_is_for_admins(client):
    scene = SceneFactory()
    for which in ("before", "after"):
        store_asset(scene, "video", f"{which}.mp4", CONTENT, {"which": which, "fps": 25})
    client.force_login(UserFactory(role="annotator"))
    assert client.get(f"/manage/scenes/{scene.pk}/").status_code == 403
    client.force_login(UserFactory(role="admin"))
    page = client.get(f"/manage/scenes/{scene.pk}/")
    assert page.status_code == 200
    assert page.context["pair"]["fps"] == 25 and len(page.context["assets"]) == 2
    assert b'id="uploader"' in page.content


def test_local_storage_keeps_at_most_one_byte_past_the_announced_size(settings, admin_client):
    answer = announce(admin_client, CONTENT).json()
    APIClient().put(answer["upload"]["url"], CONTENT * 3, content_type="application/octet-stream")
    assert (Path(settings.MEDIA_ROOT) / answer["key"]).stat().st_size == len(CONTENT) + 1
    refused = admin_client.post(f"/api/v1/uploads/{answer['id']}/complete/")
    assert refused.status_code == 400 and "size" in refused.json()


# --- a private bucket: only presigned GETs, handed out after the same check as local media ----------


def unsigned_status(url: str) -> int:
    """What anyone gets for the object's URL without its signature."""
    try:
        with urllib.request.urlopen(url.split("?", 1)[0], timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def is_presigned(url: str, endpoint: str) -> bool:
    return url.startswith(endpoint) and "X-Amz-Signature=" in url and "X-Amz-Expires=" in url


def test_objects_are_private_and_read_only_through_presigned_urls(bucket, s3_endpoint, admin_client):
    asset = store_asset(SceneFactory(), "video", "before.mp4", CONTENT)
    grants = bucket.get_object_acl(Bucket="hypolab-test", Key=asset.file.name)["Grants"]
    assert all("URI" not in g["Grantee"] for g in grants)  # no AllUsers / AuthenticatedUsers grant
    assert unsigned_status(asset.file.url) == 403
    assert urllib.request.urlopen(asset.file.url, timeout=5).read() == CONTENT
    # moto does check grants for unsigned requests: a public-read object (which we never write) is served.
    bucket.put_object(Bucket="hypolab-test", Key="control/public.txt", Body=b"open", ACL="public-read")
    assert unsigned_status(f"{s3_endpoint}/hypolab-test/control/public.txt") == 200
    # A browser upload's object is private too.
    answer = announce(admin_client, CONTENT).json()
    put_bytes(answer["upload"], CONTENT)
    assert unsigned_status(f"{s3_endpoint}/hypolab-test/{answer['key']}") == 403


@pytest.fixture
def s3_world(bucket, django_capture_on_commit_callbacks):
    change = ChangeFactory(status="approved")
    scene, benchmark = change.scene, change.scene.benchmark
    item = ItemFactory(change=change)
    files = [store_asset(scene, "viewer_points", "scene.hlpc", CONTENT),
             store_asset(scene, "topview_plain", "topview.png", CONTENT[:500]),
             store_asset(scene, "image", "view.png", CONTENT[:800], {"overlays": []}),
             store_asset(scene, "video", "before.mp4", CONTENT, {"which": "before", "fps": 25}),
             store_asset(scene, "video", "after.mp4", CONTENT[::-1], {"which": "after", "fps": 25})]
    admin = UserFactory(role="admin")
    with django_capture_on_commit_callbacks(execute=True):
        release = life.export_release(benchmark, "1.0.0", admin)
    annotator = UserFactory(role="annotator")
    assignment = annotation_services.lease_assignment(
        annotation_services.create_campaign(benchmark, "Moves", "movement", [scene]), annotator)
    evaluator = UserFactory(role="evaluator")
    study = create_study(benchmark, StudyDesign("Pilot", [item.pk], 30, 600), UserFactory())
    session = start_session(study, evaluator)
    return {"scene": scene, "files": files, "release": release, "admin": admin, "annotator": annotator,
            "assignment": assignment, "evaluator": evaluator, "session": session}


def test_pages_and_api_hand_out_presigned_urls_only_after_the_check(s3_world, s3_endpoint, client):
    w = s3_world
    client.force_login(w["annotator"])
    page = client.get(f"/annotate/{w['assignment'].pk}/")
    assert page.status_code == 200
    # The viewer's file: the download API (it may be read for hours), led to a presigned URL on each read.
    points = page.context["viewer"]["points_url"]
    assert points == f"/api/v1/assets/{w['files'][0].pk}/download/"
    points = client.get(points)["Location"]
    assert is_presigned(points, s3_endpoint) and unsigned_status(points) == 403
    assert urllib.request.urlopen(points, timeout=5).read() == CONTENT

    client.force_login(w["evaluator"])
    item = client.get(f"/api/v1/sessions/{w['session'].pk}/current/").json()["item"]
    assert item["scene"]["points_url"] == f"/api/v1/assets/{w['files'][0].pk}/download/"
    urls = [client.get(item["scene"]["points_url"])["Location"], item["images"][0]["url"],
            item["videos"]["before"], item["videos"]["after"]]
    for url in urls:
        assert is_presigned(url, s3_endpoint) and unsigned_status(url) == 403
        assert urllib.request.urlopen(url, timeout=5).read()

    client.force_login(w["admin"])
    files = client.get(f"/api/v1/releases/{w['release'].pk}/").json()["files"]
    assert set(files) >= {"jsonl", "manifest", "json", "csv", "parquet", "card"}
    for entry in files.values():
        assert is_presigned(entry["url"], s3_endpoint) and unsigned_status(entry["url"]) == 403

    # The download API: the same rules as local media (the viewer's files for the lease holder, the
    # item's files for the evaluator in session; release files for reviewers and admins; nobody else).
    export = Asset.objects.filter(role="export").first()
    for user, scene_ok, export_ok in [(w["annotator"], True, False), (w["evaluator"], True, False),
                                      (UserFactory(role="annotator"), False, False),
                                      (UserFactory(role="evaluator"), False, False),
                                      (UserFactory(role="reviewer"), True, True), (None, False, False)]:
        api = APIClient()
        if user is not None:
            api.force_login(user)
        video_ok = scene_ok and user is not w["annotator"]  # a context-change task shows no video
        for asset, ok in [(w["files"][0], scene_ok), (w["files"][3], video_ok), (export, export_ok)]:
            answer = api.get(f"/api/v1/assets/{asset.pk}/download/")
            assert answer.status_code == (302 if ok else 403), (user, asset.role)
            if ok:
                assert is_presigned(answer["Location"], s3_endpoint)


def test_check_media_access_on_the_bucket(s3_world, bucket, capsys):
    call_command("check_media_access")
    n = Asset.objects.count()
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        f"files={n} public=0 refused={n} errors=0 storage=s3")
    # Someone makes one object public by hand: the command says which and fails.
    leaked = Asset.objects.filter(role="export").first().file.name
    bucket.put_object_acl(Bucket="hypolab-test", Key=leaked, ACL="public-read")
    with pytest.raises(CommandError):
        call_command("check_media_access")
    out = capsys.readouterr().out.strip().splitlines()
    assert f"public: {leaked} (HTTP 200)" in out
    assert out[-1] == f"files={n} public=1 refused={n - 1} errors=0 storage=s3"
