from django.urls import path

from . import api

urlpatterns = [
    path("benchmarks/<slug:slug>/stages/", api.BenchmarkStages.as_view()),
    path("benchmarks/<slug:slug>/pipeline/run/", api.RunPipeline.as_view()),
    path("stages/<int:pk>/", api.StageDetail.as_view()),
    path("stages/<int:pk>/run/", api.RunStage.as_view()),
]
