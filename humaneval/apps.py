from django.apps import AppConfig


class HumanevalConfig(AppConfig):
    name = "humaneval"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.media import register_screen
        from crowd.signals import entry_taken_over

        from .services import sessions, stimuli

        register_screen(stimuli.shows_asset)
        entry_taken_over.connect(sessions.end_taken_over_sessions, dispatch_uid="humaneval_end_taken_over_sessions")
