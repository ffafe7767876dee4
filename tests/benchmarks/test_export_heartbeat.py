"""A release export whose worker is killed mid-way: the stall sweep fails its job within a minute of its
last heartbeat, its release is back to exportable, and exporting the version again writes every file."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from benchmarks.releases import life, stream
from config.celery import app
from core import jobs
from core.errors import Conflict
from core.models import Job
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db


class WorkerKilled(BaseException):
    """What SIGKILL leaves behind, in-process: no `except Exception` of the task runs (its job stays
    running, its release exporting) and the open transaction is rolled back, as the database does for a
    connection that drops. A real kill needs a worker process on a shared database; this runs on both."""


@pytest.fixture
def benchmark():
    first = ItemFactory()
    ItemFactory(change=first.change, question="What is now closest to the window?")
    return first.benchmark


def killed_at(monkeypatch, where: str):
    """Kill the worker while it freezes the items, or halfway through writing the CSV."""
    if where == "freezing":
        def die(release, item_ids):
            raise WorkerKilled
        monkeypatch.setattr(stream, "add_release_items", die)
    else:
        def die(lines, out):
            out.write(b"id,external_id\n")
            raise WorkerKilled
        monkeypatch.setitem(stream.WRITERS, "csv", die)


def silent_for(job_id: int, seconds: float) -> None:
    Job.objects.filter(pk=job_id).update(updated_at=timezone.now() - timedelta(seconds=seconds))


@pytest.mark.parametrize("where", ["freezing", "writing csv"])
def test_a_killed_export_is_failed_by_the_sweep_and_exported_again(benchmark, monkeypatch, where):
    killed_at(monkeypatch, where)
    with pytest.raises(WorkerKilled):
        life.export_release(benchmark, "1.0.0", None, inline=True)
    monkeypatch.undo()
    release = benchmark.releases.get(version="1.0.0")
    assert release.status == "exporting" and release.job.status == "running"
    with pytest.raises(Conflict):  # what the probe saw: the version answers 409 while the job looks alive
        life.export_release(benchmark, "1.0.0", None, inline=True)

    other = jobs.request_job("stage", "stage:slow").job  # a kind without a limit of its own: 900 s
    jobs.start_job(other.pk)
    limit = settings.RELEASE_EXPORT_STALE_S
    silent_for(release.job_id, limit - 5)
    assert jobs.fail_stalled_jobs(settings.JOB_STALE_S) == []  # beaten less than the limit ago: alive
    silent_for(release.job_id, limit + 1)
    silent_for(other.pk, limit + 1)
    assert jobs.fail_stalled_jobs(settings.JOB_STALE_S) == [release.job_id]

    release.refresh_from_db()
    release.job.refresh_from_db()
    assert release.job.status == "failed" and "worker stopped" in release.job.message
    assert release.status == "failed"  # on_stall: the page shows it exportable, not exporting
    assert Job.objects.get(pk=other.pk).status == "running"

    again = life.export_release(benchmark, "1.0.0", None, inline=True)
    again.refresh_from_db()
    assert again.pk == release.pk and again.status == "ready" and again.job.status == "done"
    files = life.release_files(again)
    assert {"jsonl", "manifest", "json", "csv", "parquet", "card"} <= set(files)
    assert again.items.count() == 2
    with files["csv"].file.open("rb") as handle:
        assert len(handle.read().decode().splitlines()) == 3  # the header and both items, not the killed half


@pytest.mark.django_db(transaction=True)
def test_a_slow_export_that_beats_is_not_failed(benchmark, monkeypatch):
    """The CSV write starts past the limit after the last progress report (the job's clock moved on),
    then writes: its beat, stamped from inside the format step's transaction (on a connection of its own
    on PostgreSQL, so the sweep sees it before the commit), keeps the job alive."""
    monkeypatch.setattr(jobs, "BEAT_EVERY_S", 0)
    write_csv, swept = stream.WRITERS["csv"], []

    class Later:
        offset = timedelta(0)

        @classmethod
        def now(cls):
            return timezone.now() + cls.offset

    def slow(lines, out):
        Later.offset = timedelta(seconds=settings.RELEASE_EXPORT_STALE_S + 1)
        write_csv(lines, out)  # its bytes go through the beating writer
        swept.append(jobs.fail_stalled_jobs(settings.JOB_STALE_S))

    monkeypatch.setattr(jobs, "timezone", Later)
    monkeypatch.setitem(stream.WRITERS, "csv", slow)
    release = life.export_release(benchmark, "1.0.0", None, inline=True)
    assert swept == [[]] and release.status == "ready" and release.job.status == "done"


def test_a_killed_export_is_detected_within_a_minute():
    """Kill right after a beat: the sweep sees the job silent past RELEASE_EXPORT_STALE_S at its next
    run; a live export beats several times within the limit."""
    sweep_every_s = app.conf.beat_schedule["fail-stalled-jobs"]["schedule"]
    assert settings.RELEASE_EXPORT_STALE_S + sweep_every_s <= 60
    assert jobs.BEAT_EVERY_S * 3 <= settings.RELEASE_EXPORT_STALE_S


@pytest.mark.django_db(transaction=True)
def test_a_slow_harness_file_beats_between_its_stages(benchmark, monkeypatch):
    """The lmms-eval task is built in memory, not streamed: its Parquet step starting past the limit
    (the job's clock moved on) is followed by a beat, so the sweep right after it leaves the job alone."""
    from benchmarks.releases import harness

    monkeypatch.setattr(jobs, "BEAT_EVERY_S", 0)
    build_parquet, swept = harness.dataset_parquet, []

    class Later:
        offset = timedelta(0)

        @classmethod
        def now(cls):
            return timezone.now() + cls.offset

    def slow(*args, **kwargs):
        Later.offset = timedelta(seconds=settings.RELEASE_EXPORT_STALE_S + 1)
        return build_parquet(*args, **kwargs)

    def then_sweep(*args, **kwargs):
        archive = lmms_eval_zip(*args, **kwargs)
        swept.append(jobs.fail_stalled_jobs(settings.JOB_STALE_S))
        return archive

    lmms_eval_zip = harness.lmms_eval_zip
    monkeypatch.setattr(jobs, "timezone", Later)
    monkeypatch.setattr(harness, "dataset_parquet", slow)
    monkeypatch.setattr(harness, "lmms_eval_zip", then_sweep)
    release = life.export_release(benchmark, "1.0.0", None, inline=True)
    assert swept == [[]] and release.status == "ready" and release.job.status == "done"
