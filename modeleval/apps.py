from django.apps import AppConfig


class ModelevalConfig(AppConfig):
    name = "modeleval"
    default_auto_field = "django.db.models.BigAutoField"
