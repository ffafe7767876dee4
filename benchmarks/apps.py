from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    name = "benchmarks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from django.conf import settings

        from core.jobs import on_cancel, on_stall

        from . import uploads
        from .releases import life

        # a cancelled job's domain row moves with it (core/jobs.py cancel_job)
        on_cancel("release_export", life.cancel_release_export)
        on_cancel("upload_check", uploads.cancel_upload_check)
        # an export whose worker died: its release fails too, so its version can be exported again
        on_stall("release_export", life.cancel_release_export,
                 stale_after_s=lambda: settings.RELEASE_EXPORT_STALE_S)
