from django.apps import AppConfig


class ScenesConfig(AppConfig):
    name = "scenes"

    def ready(self):
        from core.jobs import on_cancel

        from . import processing

        # a cancelled processing job marks its scene (core/jobs.py cancel_job)
        on_cancel("scene_processing", processing.cancel_scene_processing)
