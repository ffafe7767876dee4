from django.urls import path

from . import api

urlpatterns = [
    path("benchmarks/<slug:slug>/results/", api.BenchmarkResults.as_view()),
    path("studies/<int:pk>/results/", api.StudyResults.as_view()),
    path("benchmarks/<slug:slug>/plan/", api.StudyPlan.as_view()),
]
