"""A large browser upload is checked as its core.Job (#32): the completing request answers the job
(202), the task hashes the stored bytes reporting its progress, the asset is the job's report; a
mismatch fails the job with the reason and refuses the upload; small uploads are still checked at once."""

import hashlib

import pytest
from rest_framework.test import APIClient

from benchmarks import tasks, uploads
from benchmarks.models import Asset, Upload
from core.models import Job
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CONTENT = b"ply\nformat ascii 1.0\n" * 10


@pytest.fixture
def admin_api():
    client = APIClient()
    client.force_login(UserFactory(role="admin"))
    return client


def sent(admin_api, content: bytes, announced_sha256: str | None = None) -> int:
    announced = admin_api.post("/api/v1/uploads/", {
        "role": "point_cloud", "filename": "scan.ply", "size": len(content),
        "sha256": announced_sha256 or hashlib.sha256(content).hexdigest()}, format="json").json()
    assert APIClient().put(announced["upload"]["url"], content,
                           content_type="application/octet-stream").status_code == 204
    return announced["id"]


@pytest.fixture
def large(monkeypatch):
    """Every upload counts as large, hashed in 32-byte chunks, progress reported for each."""
    monkeypatch.setattr(uploads, "INLINE_CHECK_BYTES", 0)
    monkeypatch.setattr(uploads, "CHUNK_BYTES", 32)
    monkeypatch.setattr(uploads, "PROGRESS_EVERY_CHUNKS", 1)


def test_a_large_upload_is_checked_as_its_job(admin_api, large, django_capture_on_commit_callbacks, monkeypatch):
    reported = []
    advance = uploads.advance_job
    monkeypatch.setattr(uploads, "advance_job", lambda job_id, **kw: (reported.append(kw["done"]),
                                                                     advance(job_id, **kw)))
    upload_id = sent(admin_api, CONTENT)
    with django_capture_on_commit_callbacks(execute=True):
        answer = admin_api.post(f"/api/v1/uploads/{upload_id}/complete/")
    assert answer.status_code == 202 and answer.json()["kind"] == "upload_check"
    job = Job.objects.get(pk=answer.json()["id"])
    asset = Asset.objects.get()
    assert job.status == Job.Status.DONE and (job.done, job.total) == (7, 7) and reported == list(range(1, 8))
    assert job.report == {"asset": asset.pk, "size": len(CONTENT), "sha256": hashlib.sha256(CONTENT).hexdigest()}
    assert Upload.objects.get(pk=upload_id).job == job
    # asked again: the asset (the upload is complete); a redelivered message checks nothing again
    again = admin_api.post(f"/api/v1/uploads/{upload_id}/complete/")
    assert again.status_code == 201 and again.json()["id"] == asset.pk
    tasks.check_upload(upload_id, job.pk)
    assert Asset.objects.count() == 1


def test_a_large_upload_whose_bytes_differ_fails_its_job_and_is_refused(admin_api, large,
                                                                        django_capture_on_commit_callbacks):
    upload_id = sent(admin_api, CONTENT, announced_sha256="0" * 64)
    with django_capture_on_commit_callbacks(execute=True):
        answer = admin_api.post(f"/api/v1/uploads/{upload_id}/complete/")
    job = Job.objects.get(pk=answer.json()["id"])
    assert job.status == Job.Status.FAILED and job.message == "sha256: Does not match the uploaded bytes."
    assert Upload.objects.get(pk=upload_id).status == Upload.Status.FAILED and not Asset.objects.exists()
    assert admin_api.post(f"/api/v1/uploads/{upload_id}/complete/").status_code == 409


def test_a_small_upload_is_checked_within_the_request(admin_api):
    answer = admin_api.post(f"/api/v1/uploads/{sent(admin_api, CONTENT)}/complete/")
    assert answer.status_code == 201 and not Job.objects.exists()
