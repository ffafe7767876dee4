"""A point-cloud viewer left open past its signed URL's life still loads octree nodes (issue #33).

On a bucket the page names the download API for the viewer's file (uploads.lasting_url), not a
presigned URL: each node's range request goes there, is checked by benchmarks.media's rules and
redirected to a freshly signed URL, so an expired signature never reaches the viewer. The moto
server is the one tests/benchmarks/test_storage_s3.py starts."""

import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from rest_framework.test import APIClient

from tests.benchmarks import test_storage_s3 as s3
from tests.factories import UserFactory

CONTENT, is_presigned = s3.CONTENT, s3.is_presigned
# test_storage_s3's moto fixtures: a private bucket as the default storage, and a scene's files on it
# with an annotator leasing it and an evaluator in a session on its item.
bucket, s3_endpoint, s3_server, s3_world = s3.bucket, s3.s3_endpoint, s3.s3_server, s3.s3_world

pytestmark = [pytest.mark.django_db, pytest.mark.services]


def expired(url: str) -> bool:
    """What S3 checks before anything else (moto 5 does not): the signature's date plus its life."""
    query = parse_qs(urlsplit(url).query)
    signed_at = datetime.strptime(query["X-Amz-Date"][0], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    return datetime.now(UTC) >= signed_at + timedelta(seconds=int(query["X-Amz-Expires"][0]))


def read_range(url: str, start: int, end: int) -> tuple[int, bytes]:
    """What the browser's fetch does with the redirect's Location: the same GET, the same Range
    header; an expired signature gets S3's 403."""
    if expired(url):
        return 403, b""
    request = urllib.request.Request(url, headers={"Range": f"bytes={start}-{end}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def node_through(api, stable: str, start: int, end: int) -> tuple[str, int, bytes]:
    answer = api.get(stable, HTTP_RANGE=f"bytes={start}-{end}")
    assert answer.status_code == 302
    return answer["Location"], *read_range(answer["Location"], start, end)


@pytest.fixture
def short_signatures(settings, bucket):
    """Signed URLs that live three seconds, so 'past an hour' is four seconds away."""
    settings.DOWNLOAD_URL_EXPIRY_S = 3
    settings.STORAGES["default"]["OPTIONS"]["querystring_expire"] = 3


def test_a_viewer_left_open_past_the_signature_still_loads_nodes(short_signatures, s3_world, s3_endpoint, client):
    w = s3_world
    points = w["files"][0]
    client.force_login(w["annotator"])
    stable = client.get(f"/annotate/{w['assignment'].pk}/").context["viewer"]["points_url"]
    assert stable == f"/api/v1/assets/{points.pk}/download/"  # no signature in the page to expire

    api = APIClient()
    api.force_login(w["annotator"])
    first, status, body = node_through(api, stable, 1000, 4999)
    assert is_presigned(first, s3_endpoint) and status == 206 and body == CONTENT[1000:5000]

    time.sleep(4)
    assert expired(first) and read_range(first, 1000, 4999)[0] == 403  # where the page was first led
    again, status, body = node_through(api, stable, 200_000, 265_535)
    assert again != first and not expired(again) and status == 206 and body == CONTENT[200_000:265_536]
    # The browser may keep the redirect, never past the life of the URL it points at.
    answer = api.get(stable)
    assert answer["Cache-Control"] == "private, max-age=1"

    # The evaluator's item names the same stable URL and reads nodes through it too.
    api.force_login(w["evaluator"])
    item = api.get(f"/api/v1/sessions/{w['session'].pk}/current/").json()["item"]
    assert item["scene"]["points_url"] == stable
    assert node_through(api, stable, 0, 99)[1:] == (206, CONTENT[:100])


def test_the_stable_url_refuses_whoever_may_not_see_the_scene(s3_world):
    """The access rules of issue #34 hold on every node: another annotator, an evaluator not in a
    session on this item, an anonymous request get no signed URL; the lease holder does."""
    stable = f"/api/v1/assets/{s3_world['files'][0].pk}/download/"
    for user in (UserFactory(role="annotator"), UserFactory(role="evaluator"), None):
        api = APIClient()
        if user is not None:
            api.force_login(user)
        answer = api.get(stable, HTTP_RANGE="bytes=0-99")
        assert answer.status_code == 403 and "Location" not in answer
    api = APIClient()
    api.force_login(s3_world["annotator"])
    assert api.get(stable, HTTP_RANGE="bytes=0-99").status_code == 302


def test_the_redirect_may_be_kept_for_half_the_signature_life(s3_world, settings):
    settings.DOWNLOAD_URL_EXPIRY_S = 300
    api = APIClient()
    api.force_login(s3_world["annotator"])
    answer = api.get(f"/api/v1/assets/{s3_world['files'][0].pk}/download/")
    assert answer.status_code == 302 and answer["Cache-Control"] == "private, max-age=150"
    assert "X-Amz-Expires=300" in answer["Location"]
