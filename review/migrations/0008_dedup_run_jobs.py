"""A near-duplicate run's status, error and finish time are its core.Job's (kind `dedup`, key
`dedup:<run>`, as review.dedup.dedup_job makes it): a run without a job gets one carrying what the
run said (finished -> done, the error as the job's message, what it found as the report), then (0009)
the run's history triggers and its own columns go. The status history it recorded is kept."""

from django.db import migrations

STATUS_OF_JOB = {"queued": "queued", "running": "running", "finished": "done", "failed": "failed"}
MESSAGE_CHARS = 500


def report_of(run) -> dict:
    pairs = {kind: run.pairs.filter(kind=kind).count() for kind in ("change", "question")}
    return {"dedup_run": run.pk, "threshold": run.threshold, "texts": run.n_texts,
            "pairs": sum(pairs.values()), "pairs_by_kind": pairs}


def give_each_run_its_job(apps, schema_editor):
    DedupRun, Job = apps.get_model("review", "DedupRun"), apps.get_model("core", "Job")
    for run in DedupRun.objects.filter(job__isnull=True).select_related("benchmark").order_by("pk"):
        status = STATUS_OF_JOB.get(run.status, "failed")
        job = Job.objects.filter(key=f"dedup:{run.pk}").first() or Job.objects.create(
            kind="dedup", key=f"dedup:{run.pk}", status=status, created_by_id=run.created_by_id,
            subject=f"Near duplicates in {run.benchmark.name} (above {run.threshold})"[:200],
            message=run.error[:MESSAGE_CHARS], finished_at=run.finished_at,
            started_at=None if status == "queued" else run.created_at,
            report=report_of(run) if status == "done" else {})
        Job.objects.filter(pk=job.pk, created_at__gt=run.created_at).update(created_at=run.created_at)
        DedupRun.objects.filter(pk=run.pk).update(job=job)


def write_back_the_jobs_status(apps, schema_editor):
    DedupRun = apps.get_model("review", "DedupRun")
    for run in DedupRun.objects.filter(job__isnull=False).select_related("job"):
        job = run.job
        status = {"done": "finished", "cancelled": "failed"}.get(job.status, job.status)
        DedupRun.objects.filter(pk=run.pk).update(
            status=status, finished_at=job.finished_at if status == "finished" else None,
            error=job.message if status == "failed" else "")


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0006_job_cancelled'),
        ('review', '0007_pipeline_stage_to_construction'),
    ]

    operations = [
        migrations.RunPython(give_each_run_its_job, write_back_the_jobs_status),
    ]
