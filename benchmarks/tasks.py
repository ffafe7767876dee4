"""Benchmark tasks on the default queue."""

from celery import shared_task
from django.conf import settings

from benchmarks.material.processing import build_large_scene_assets, build_viewer_assets, scenes_to_reprocess
from benchmarks.material.scans import load_scene_points

from . import dispatch, services
from .models import Scene


@shared_task
def write_release_formats(release_id: int) -> int:
    """Idempotent: formats already written are skipped (see services.write_release_formats)."""
    try:
        return services.write_release_formats(release_id).pk
    except Exception:
        # The page shows 'failed'; running the task again resumes from the formats not yet written.
        services.mark_release_failed(release_id)
        raise


@shared_task(bind=True)
def process_scene(self, scene_id: int) -> int:
    """Viewer points and top views from the scene's canonical PLY. Idempotent: a re-run replaces
    the derived assets (see processing.build_viewer_assets). Progress meta: {done, total} steps."""
    scene = Scene.objects.get(pk=scene_id)
    self.update_state(state="PROGRESS", meta={"done": 0, "total": 2})
    if build_large_scene_assets(scene) is not None:  # over OUT_OF_CORE_POINTS: built from the file
        return scene.pk
    xyz, rgb, instance, objects = load_scene_points(scene)
    self.update_state(state="PROGRESS", meta={"done": 1, "total": 2})
    build_viewer_assets(scene, xyz, rgb, instance, objects)
    return scene.pk


@shared_task
def reprocess_stalled_scenes() -> list[int]:
    """Beat: send again the scenes whose processing died (processing.scenes_to_reprocess)."""
    due = scenes_to_reprocess(settings.SCENE_PROCESSING_STALE_S)
    for scene_id in due:
        dispatch.send_scene_processing(scene_id)
    return due
