"""Scene tasks on the default queue: a scan's processing, aligned top views, a change's after-state,
and the beat sweep that sends a died processing again."""

import uuid

from celery import shared_task
from django.conf import settings

from benchmarks.models import Scene
from core.jobs import advance_job, finish_job, job_cancelled, running_job

from . import dispatch
from .after_state import build_after_state
from .processing import (
    build_aligned_topviews,
    build_large_scene_assets,
    build_viewer_assets,
    processing_started,
    scenes_to_reprocess,
)
from .scans import load_scene_points


@shared_task
def process_scene(scene_id: int, job_id: int | None = None) -> int:
    """Viewer points and top views (the aligned ones too where the scene has an approved world frame)
    from the scene's canonical PLY, reported through its core.Job (two steps; a cancel stops it
    before the files are written). Idempotent: a re-run replaces the derived assets
    (processing.build_viewer_assets); a redelivered message of a job that ran or runs does nothing.
    Called with no job (by hand), it is a new one."""
    job_id = job_id or dispatch.scene_processing_job(scene_id, attempt=uuid.uuid4().hex)
    with running_job(job_id, total=2, message="Reading the scan") as job:
        if job is None:
            return scene_id
        scene = Scene.objects.get(pk=scene_id)
        processing_started(scene)
        if build_large_scene_assets(scene) is None:  # over OUT_OF_CORE_POINTS it is built from the file
            xyz, rgb, instance, objects = load_scene_points(scene)
            if job_cancelled(job_id):  # cancelled while reading: no viewer files
                return scene_id
            advance_job(job_id, done=1, message="Building the viewer files and top views")
            build_viewer_assets(scene, xyz, rgb, instance, objects, True)  # True: the aligned maps too
        # the new files replaced every derived one, the after-states of approved edits too: made again here
        for change_id in scene.changes.filter(status="approved", edit__isnull=False).values_list("pk", flat=True):
            build_after_state(change_id)
        finish_job(job_id, {"scene": scene.external_id, "assets": sorted(scene.assets.values_list("role", flat=True))})
    return scene_id


@shared_task
def make_aligned_topviews(scene_id: int, job_id: int) -> int:
    """The scene's plain and semantic top views turned into its approved world frame, reported through
    its core.Job (dispatch.send_aligned_topviews, sent when a frame is approved). Idempotent: a re-run
    replaces the maps made before (processing.build_aligned_topviews); a redelivered message of a
    job that ran or runs does nothing."""
    with running_job(job_id, total=1, message="Rendering the aligned top views") as job:
        if job is None:
            return scene_id
        scene = Scene.objects.filter(pk=scene_id).first()
        made = build_aligned_topviews(scene) if scene is not None else []
        finish_job(job_id, {"scene": scene.external_id if scene else None, "assets": [a.pk for a in made],
                            "rotation_quarter_turns": made[0].meta["rotation_quarter_turns"] if made else None})
    return scene_id


@shared_task
def make_after_state(change_id: int, job_id: int | None = None) -> int:
    """The scene as the change's edit leaves it (after_state.py: the viewer file and both top views),
    reported through its core.Job (dispatch.send_after_state: sent when a change with an edit is approved, and
    on a reviewer's request). Idempotent: the assets made from the same edit are kept, a changed edit's
    replace them; a redelivered message of a job that ran or runs does nothing. Called with no job (by
    hand), it is a new one."""
    job_id = job_id or dispatch.after_state_job(change_id, "by-hand", attempt=uuid.uuid4().hex).pk
    with running_job(job_id, total=1, message="Building the scene after the change") as job:
        if job is None:
            return change_id
        made = build_after_state(change_id)
        finish_job(job_id, {"change": change_id, "assets": {a.role: a.pk for a in made},
                            "edit_digest": made[0].meta["edit_digest"] if made else None,
                            **({} if made else {"reason": "no edit, no scan, or the edit changed while building"})})
    return change_id


@shared_task
def reprocess_stalled_scenes() -> list[int]:
    """Beat: send again the scenes whose processing died (processing.scenes_to_reprocess)."""
    due = scenes_to_reprocess(settings.SCENE_PROCESSING_STALE_S)
    for scene_id in due:
        dispatch.send_scene_processing(scene_id)
    return due
