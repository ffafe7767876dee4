from django.urls import path

from . import api

urlpatterns = [
    path("runs/", api.RunList.as_view()),
    path("runs/<int:pk>/", api.RunDetail.as_view()),
]
