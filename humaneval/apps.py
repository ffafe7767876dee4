from django.apps import AppConfig


class HumanevalConfig(AppConfig):
    name = "humaneval"
    default_auto_field = "django.db.models.BigAutoField"
