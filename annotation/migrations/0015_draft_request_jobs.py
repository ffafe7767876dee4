"""A draft request's status and error are its core.Job's (kind `drafting`, key `draft:<request>`, as
annotation.drafting.draft_job makes it): a request without a job gets one carrying what the request
said (the same words; the error as the job's message, what it wrote as the report), then (0016)
the request's own columns go."""

from django.db import migrations

MESSAGE_CHARS = 500


def subject_of(request) -> str:
    change = request.change
    target = (change.refined_text or change.raw_text)[:80] if change is not None else request.scene.external_id
    return f"{request.template.name}: {target}"[:200]


def give_each_request_its_job(apps, schema_editor):
    DraftRequest, Job = apps.get_model("annotation", "DraftRequest"), apps.get_model("core", "Job")
    requests = DraftRequest.objects.filter(job__isnull=True).select_related("template", "scene", "change")
    for request in requests.order_by("pk"):
        status = request.status if request.status in ("queued", "done", "failed", "cancelled") else "failed"
        ended = status != "queued"
        job = Job.objects.filter(key=f"draft:{request.pk}").first() or Job.objects.create(
            kind="drafting", key=f"draft:{request.pk}", subject=subject_of(request), status=status,
            total=1, done=1 if status == "done" else 0, message=request.error[:MESSAGE_CHARS],
            report={kind: len(ids) for kind, ids in request.created.items()} if status == "done" else {},
            started_at=request.created_at if ended else None, finished_at=request.created_at if ended else None)
        Job.objects.filter(pk=job.pk, created_at__gt=request.created_at).update(created_at=request.created_at)
        DraftRequest.objects.filter(pk=request.pk).update(job=job)


def write_back_the_jobs_status(apps, schema_editor):
    DraftRequest = apps.get_model("annotation", "DraftRequest")
    for request in DraftRequest.objects.filter(job__isnull=False).select_related("job"):
        status = "queued" if request.job.status == "running" else request.job.status
        DraftRequest.objects.filter(pk=request.pk).update(
            status=status, error=request.job.message if status in ("failed", "cancelled") else "")


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0014_campaign_change_type_optional'),
        ('core', '0006_job_cancelled'),
    ]

    operations = [
        migrations.RunPython(give_each_request_its_job, write_back_the_jobs_status),
    ]
