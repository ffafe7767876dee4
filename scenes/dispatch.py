"""Sending the scenes app's Celery tasks (default queue). Imports point one way: tasks.py imports the
pipeline's modules (tasks call the verbs); the verbs send tasks through these functions, which name them
(core.sending) and never import tasks.py."""

from core.sending import send


def send_scene_processing(scene_id: int) -> None:
    """Viewer files and top views for a scene whose scan was just stored (or whose processing died: each
    attempt is its own job, so a redelivered message of one attempt runs it once)."""
    send("scenes.tasks.process_scene", scene_id, scene_processing_job(scene_id))


def scene_processing_job(scene_id: int, attempt: str | None = None) -> int:
    """The core.Job that a scene's processing reports through (pages and /api/v1/jobs/ show it)."""
    from benchmarks.models import Scene
    from core.jobs import request_job

    scene = Scene.objects.get(pk=scene_id)
    attempt = attempt or str(scene.meta.get("processing_attempts", 0))
    return request_job("scene_processing", f"scene-processing:{scene_id}:{attempt}",
                       subject=f"Scene {scene.external_id}: viewer files and top views").job.pk


def send_aligned_topviews(scene_id: int) -> None:
    """The scene's top views turned into its newly approved world frame (aligned_topview.py), as
    a job of their own: each approval is one job, so a redelivered message of it renders once."""
    import uuid

    from benchmarks.models import Scene
    from core.jobs import request_job
    external_id = Scene.objects.filter(pk=scene_id).values_list("external_id", flat=True).first()
    job = request_job("aligned_topviews", f"aligned-topviews:{scene_id}:{uuid.uuid4().hex}",
                      subject=f"Scene {external_id}: top views aligned with the world frame").job
    send("scenes.tasks.make_aligned_topviews", scene_id, job.pk)


def after_state_job(change_id: int, digest: str, user=None, attempt: str = ""):
    """The core.Job of a change's after-state for one edit (after_state.py): one job per edit (and
    `attempt`), so asking again for the same edit while it is built is that job."""
    from core.jobs import request_job

    key = f"after-state:{change_id}:{digest[:16]}" + (f":{attempt}" if attempt else "")
    return request_job("after_state", key, subject=f"Change {change_id}: the scene after the change", total=1,
                       user=user).job


def send_after_state(change_id: int, user=None):
    """Build the change's after-state on the default queue (sent when a change with an edit is approved and
    on a reviewer's request); returns the job it reports through. A job queued or running for the same edit
    is that job, not sent twice; asked again after it finished, a new attempt is sent (the task keeps what
    it made for the same edit: idempotent)."""
    import uuid

    from benchmarks.edit_digest import edit_digest
    from benchmarks.models import ContextChange
    from core.models import Job
    digest = edit_digest(ContextChange.objects.filter(pk=change_id).values_list("edit", flat=True).first())
    job = after_state_job(change_id, digest, user)
    if job.status == Job.Status.DONE:
        job = after_state_job(change_id, digest, user, attempt=uuid.uuid4().hex[:12])
    if job.status == Job.Status.QUEUED:
        send("scenes.tasks.make_after_state", change_id, job.pk)
        job.refresh_from_db()  # run in line (eager): its state now
    return job
