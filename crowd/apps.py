from django.apps import AppConfig


class CrowdConfig(AppConfig):
    name = "crowd"
    default_auto_field = "django.db.models.BigAutoField"
