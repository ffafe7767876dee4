"""Cancelling benchmarks' jobs (#32): a release export's release fails (its version can be exported
again), an upload check's upload is refused as not checked, a scene's processing writes no viewer
files; each task then stops without writing more or raising."""

import pytest

from benchmarks import uploads
from benchmarks.models import Asset, AssetRole, Release, Scene, Upload
from benchmarks.releases import life
from core import jobs, roles
from core.models import Job
from scenes import dispatch, tasks
from scenes.services import import_scan
from tests.benchmarks.test_import_scans import scannet_inputs
from tests.benchmarks.test_upload_check_job import CONTENT, admin_api, large, sent  # noqa: F401 -- fixtures
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return UserFactory(role=roles.ADMIN, username="ada")


# --- release exports ------------------------------------------------------------------------------------


def test_a_queued_export_cancelled_through_the_api_fails_its_release(api_client, admin,
                                                                     django_capture_on_commit_callbacks):
    bench = ItemFactory().benchmark
    with django_capture_on_commit_callbacks() as sent_tasks:
        release = life.export_release(bench, "1.0.0", admin)
    api_client.force_authenticate(admin)
    assert api_client.post(f"/api/v1/jobs/{release.job_id}/cancel/").status_code == 200
    release.refresh_from_db()
    assert release.status == Release.Status.FAILED

    for send in sent_tasks:  # the message arrives after all: nothing is frozen or written
        send()
    release.refresh_from_db()
    assert release.status == Release.Status.FAILED and release.items_file_id is None and not release.files.exists()
    assert Job.objects.get(pk=release.job_id).message == "Cancelled by ada."

    again = life.export_release(bench, "1.0.0", admin, inline=True)  # the version can be exported again
    assert again.pk == release.pk and again.status == Release.Status.READY
    assert Job.objects.get(pk=again.job_id).status == Job.Status.DONE


def test_an_export_cancelled_between_files_writes_no_further_file(monkeypatch, admin):
    bench = ItemFactory().benchmark
    advance = life.advance_job

    def cancelled_after_the_first_file(job_id, **progress):
        advance(job_id, **progress)
        if progress.get("done") == 2:
            jobs.cancel_job(job_id, admin)

    monkeypatch.setattr(life, "advance_job", cancelled_after_the_first_file)
    release = life.export_release(bench, "1.0.0", admin, inline=True)  # does not raise
    job = Job.objects.get(pk=release.job_id)
    assert release.status == Release.Status.FAILED and release.items_file_id is not None
    assert release.files.count() == 1 and (job.status, job.done, job.report) == (Job.Status.CANCELLED, 2, {})

    monkeypatch.setattr(life, "advance_job", advance)
    again = life.export_release(bench, "1.0.0", admin, inline=True)  # resumes from what is written
    assert again.status == Release.Status.READY and again.files.count() == len(life.release_outputs())


# --- upload checks ---------------------------------------------------------------------------------------


def test_a_queued_upload_check_cancelled_leaves_the_upload_not_checked(admin_api, large, admin,  # noqa: F811
                                                                       django_capture_on_commit_callbacks):
    upload_id = sent(admin_api, CONTENT)
    with django_capture_on_commit_callbacks() as sent_tasks:
        job_id = admin_api.post(f"/api/v1/uploads/{upload_id}/complete/").json()["id"]
    assert admin_api.post(f"/api/v1/jobs/{job_id}/cancel/").status_code == 200
    upload = Upload.objects.get(pk=upload_id)
    assert upload.status == Upload.Status.FAILED and upload.error.startswith("Not checked: Cancelled by")

    for send in sent_tasks:
        send()
    assert not Asset.objects.exists() and Job.objects.get(pk=job_id).status == Job.Status.CANCELLED
    refused = admin_api.post(f"/api/v1/uploads/{upload_id}/complete/")
    assert refused.status_code == 409 and "Not checked" in str(refused.json())


def test_an_upload_check_cancelled_while_hashing_stops_and_records_no_asset(admin_api, large, admin,  # noqa: F811
                                                                            monkeypatch,
                                                                            django_capture_on_commit_callbacks):
    hashed = []
    advance = uploads.advance_job

    def cancelled_after_two_chunks(job_id, **progress):
        hashed.append(progress["done"])
        advance(job_id, **progress)
        if progress["done"] == 2:
            jobs.cancel_job(job_id, admin)

    monkeypatch.setattr(uploads, "advance_job", cancelled_after_two_chunks)
    upload_id = sent(admin_api, CONTENT)
    with django_capture_on_commit_callbacks(execute=True):  # the check runs in-process, raising nothing
        job_id = admin_api.post(f"/api/v1/uploads/{upload_id}/complete/").json()["id"]
    job, upload = Job.objects.get(pk=job_id), Upload.objects.get(pk=upload_id)
    assert hashed == [1, 2] and (job.status, job.done) == (Job.Status.CANCELLED, 2)
    assert upload.status == Upload.Status.FAILED and upload.asset_id is None and not Asset.objects.exists()


# --- scene processing ------------------------------------------------------------------------------------


def viewer_files(scene) -> int:
    return scene.assets.filter(role__in=(AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_PLAIN)).count()


def test_a_queued_processing_cancelled_writes_no_viewer_files_and_is_not_sent_again(admin, settings):
    scene = import_scan(BenchmarkFactory(family="hypo3d"), "scene0000_00", **scannet_inputs())
    job_id = dispatch.scene_processing_job(scene.pk)
    jobs.cancel_job(job_id, admin)
    tasks.process_scene(scene.pk, job_id)
    scene.refresh_from_db()
    assert viewer_files(scene) == 0 and scene.meta["processing_cancelled"] == "Cancelled by ada."
    settings.SCENE_PROCESSING_STALE_S = 0
    assert tasks.reprocess_stalled_scenes() == []  # the reaper leaves a cancelled processing alone

    tasks.process_scene(scene.pk)  # processing asked for again (by hand): it runs and lifts the mark
    scene.refresh_from_db()
    assert viewer_files(scene) == 2 and "processing_cancelled" not in scene.meta


def test_a_processing_cancelled_while_reading_the_scan_stops_before_the_files(monkeypatch, admin):
    scene = import_scan(BenchmarkFactory(family="hypo3d"), "scene0000_00", **scannet_inputs())
    job_id = dispatch.scene_processing_job(scene.pk)
    load = tasks.load_scene_points

    def cancelled_while_reading(scene):
        jobs.cancel_job(job_id, admin)
        return load(scene)

    monkeypatch.setattr(tasks, "load_scene_points", cancelled_while_reading)
    tasks.process_scene(scene.pk, job_id)  # does not raise
    job = Job.objects.get(pk=job_id)
    assert viewer_files(Scene.objects.get(pk=scene.pk)) == 0
    assert (job.status, job.done, job.report) == (Job.Status.CANCELLED, 0, {})
