from django.apps import AppConfig


class ConstructionConfig(AppConfig):
    """Building a benchmark as the papers did: pipeline stages as data (generate, filter, balance,
    release), the generators and the LLM filters. What it makes enters review as drafts; it asks review
    only through review/services.py, and review does not import it."""

    name = "construction"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from core.jobs import on_cancel

        from .pipeline import cancel_later_stages

        on_cancel("stage", cancel_later_stages)  # a cancelled stage's later ones in the pipeline do not run
