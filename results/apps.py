from django.apps import AppConfig


class ResultsConfig(AppConfig):
    name = "results"
    verbose_name = "Results: the paper tables"
    default_auto_field = "django.db.models.BigAutoField"
