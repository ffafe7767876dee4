from django.apps import AppConfig


class HumanevalConfig(AppConfig):
    name = "humaneval"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.media import register_screen

        from .services import stimuli

        register_screen(stimuli.shows_asset)
