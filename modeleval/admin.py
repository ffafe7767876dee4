from django.contrib import admin

from .models import ModelSpec, Prediction, Run


@admin.register(ModelSpec)
class ModelSpecAdmin(admin.ModelAdmin):
    list_display = ["name", "adapter", "seed"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "model", "benchmark", "status", "total", "created_at", "finished_at"]
    list_filter = ["status"]


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = ["run", "item", "variant", "repeat", "output", "error"]
