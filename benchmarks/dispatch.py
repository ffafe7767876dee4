"""Sending benchmarks' Celery tasks (default queue). Imports point one way: tasks.py imports services
and the material pipeline (tasks call the verbs); the verbs send tasks through these functions,
which reach tasks.py only when they send."""


def send_release_formats(release_id: int) -> None:
    """The other formats of a release, written by a task that reports through the release's job."""
    from .tasks import write_release_formats

    write_release_formats.delay(release_id, release_export_job(release_id))


def release_export_job(release_id: int) -> int:
    """The release's core.Job (one per release; a failed one is queued again by exporting again)."""
    from core.jobs import request_job

    from .models import Release

    release = Release.objects.select_related("benchmark").get(pk=release_id)
    job = request_job("release_export", f"release-export:{release_id}", total=len(release_outputs()),
                      subject=f"{release.benchmark.name} v{release.version}: the other formats").job
    if release.job_id != job.pk:
        Release.objects.filter(pk=release_id).update(job=job)
    return job.pk


def release_outputs() -> list[str]:
    """What the formats task writes, in order: the formats, the harness files, the card."""
    from .harness import HARNESS_FORMATS
    from .services import FORMATS

    return [*FORMATS, *HARNESS_FORMATS, "card"]


def send_scene_processing(scene_id: int) -> None:
    """Viewer files and top views for a scene whose scan was just stored (or whose processing died: each
    attempt is its own job, so a redelivered message of one attempt runs it once)."""
    from .tasks import process_scene

    process_scene.delay(scene_id, scene_processing_job(scene_id))


def scene_processing_job(scene_id: int, attempt: str | None = None) -> int:
    """The core.Job that a scene's processing reports through (pages and /api/v1/jobs/ show it)."""
    from core.jobs import request_job

    from .models import Scene

    scene = Scene.objects.get(pk=scene_id)
    attempt = attempt or str(scene.meta.get("processing_attempts", 0))
    return request_job("scene_processing", f"scene-processing:{scene_id}:{attempt}",
                       subject=f"Scene {scene.external_id}: viewer files and top views").job.pk
