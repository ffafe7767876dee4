from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.media import register_screen
        from crowd.prolific_services import register_target
        from crowd.signals import participant_left

        from . import crowd_platform, screens

        participant_left.connect(crowd_platform.release_leases_of, dispatch_uid="annotation_release_leases_of")
        register_target("campaign", crowd_platform.prolific_target)
        register_screen(screens.shows_asset)
