from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.media import register_screen
        from crowd.signals import participant_left

        from . import screens, services

        participant_left.connect(services.release_leases_of, dispatch_uid="annotation_release_leases_of")
        register_screen(screens.shows_asset)
