"""Benchmark tasks on the default queue."""

from celery import shared_task

from benchmarks.material.processing import build_viewer_assets
from benchmarks.material.scans import load_scene_points

from . import services
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
    xyz, rgb, instance, objects = load_scene_points(scene)
    self.update_state(state="PROGRESS", meta={"done": 1, "total": 2})
    build_viewer_assets(scene, xyz, rgb, instance, objects)
    return scene.pk
