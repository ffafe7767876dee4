from django.urls import path

from . import api

urlpatterns = [
    path("assignments/<int:pk>/", api.AssignmentDetail.as_view()),
    path("assignments/<int:pk>/submit/", api.AssignmentSubmit.as_view()),
]
