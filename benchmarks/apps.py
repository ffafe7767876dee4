from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    name = "benchmarks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from core.jobs import on_cancel

        from . import releases, uploads
        from .material import processing

        # a cancelled job's domain row moves with it (core/jobs.py cancel_job)
        on_cancel("release_export", releases.cancel_release_export)
        on_cancel("upload_check", uploads.cancel_upload_check)
        on_cancel("scene_processing", processing.cancel_scene_processing)
