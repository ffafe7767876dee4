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
        self._forget_progress_on_writes()

    @staticmethod
    def _forget_progress_on_writes():
        """The campaign dashboard's cached counts (annotation/progress.py) go when their rows change."""
        from django.db.models.signals import post_delete, post_save

        from benchmarks.models import ContextChange, Item

        from . import progress
        from .models import Assignment

        def assignment_written(sender, instance, **kwargs):
            progress.forget_progress(instance.campaign_id)

        def produced_written(sender, instance, **kwargs):
            provenance = instance.provenance if isinstance(instance.provenance, dict) else {}
            progress.forget_progress(provenance.get("campaign"))

        for signal in (post_save, post_delete):
            signal.connect(assignment_written, sender=Assignment, weak=False,
                           dispatch_uid=f"progress_assignment_{signal is post_save}")
            for model in (ContextChange, Item):
                signal.connect(produced_written, sender=model, weak=False,
                               dispatch_uid=f"progress_{model.__name__}_{signal is post_save}")
