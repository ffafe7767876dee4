from django.urls import path

from . import api

urlpatterns = [
    path("benchmarks/<slug:slug>/scans/", api.ScanImport.as_view()),
    path("benchmarks/<slug:slug>/image-sets/", api.ImageSetImport.as_view()),
    path("benchmarks/<slug:slug>/paired-videos/", api.PairedVideoImport.as_view()),
]
