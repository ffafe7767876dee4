from django.contrib import admin

from .models import ModelSpec, Prediction, PromptTemplate, RecordedOutput, Run


@admin.register(ModelSpec)
class ModelSpecAdmin(admin.ModelAdmin):
    list_display = ["name", "adapter", "modality", "withhold_stimulus", "seed", "max_new_tokens", "temperature"]
    list_filter = ["adapter", "modality"]


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = ["family", "condition", "version", "created_at"]
    list_filter = ["family"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "model", "benchmark", "status", "total", "repeats", "created_at", "finished_at"]
    list_filter = ["status"]


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = ["run", "item", "variant", "repeat", "output", "error", "latency_ms"]
    search_fields = ["output", "error"]


@admin.register(RecordedOutput)
class RecordedOutputAdmin(admin.ModelAdmin):
    list_display = ["model", "item_key", "variant", "repeat", "output"]
    list_filter = ["model"]
    search_fields = ["item_key", "output"]
