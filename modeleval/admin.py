from django import forms
from django.contrib import admin

from core.errors import DomainError

from .clients import secrets as model_secrets
from .models import ModelSpec, Prediction, PromptTemplate, RecordedOutput, Run


class ModelSpecForm(forms.ModelForm):
    """Refuses an api_key_env or endpoint the secrets rule does not allow (modeleval/clients/secrets.py)."""

    class Meta:
        model = ModelSpec
        fields = "__all__"

    def clean(self):
        data = super().clean()
        try:
            model_secrets.check_model_config(data.get("adapter", ""), data.get("config"))
        except DomainError as exc:
            # The endpoint lives in config, so both refusals are shown on the config field, named.
            self.add_error("config", f"{exc.field}: {exc.message}" if exc.field != "config" else exc.message)
        return data


@admin.register(ModelSpec)
class ModelSpecAdmin(admin.ModelAdmin):
    form = ModelSpecForm
    list_display = ["name", "adapter", "modality", "withhold_stimulus", "seed", "max_new_tokens", "temperature"]
    list_filter = ["adapter", "modality"]


admin.site.register(
    PromptTemplate, list_display=["family", "condition", "version", "created_at"],
    list_filter=["family"],
)

admin.site.register(
    Run, list_display=["id", "model", "benchmark", "status", "total", "repeats", "created_at", "finished_at"],
    list_filter=["status"],
)

admin.site.register(
    Prediction, list_display=["run", "item", "variant", "repeat", "output", "error", "latency_ms"],
    search_fields=["output", "error"],
)

admin.site.register(
    RecordedOutput, list_display=["model", "item_key", "variant", "repeat", "output"],
    list_filter=["model"],
    search_fields=["item_key", "output"],
)
