from django.urls import path

from . import api

urlpatterns = [
    path("crowd/prolific/webhook/", api.ProlificWebhook.as_view()),
    path("crowd/prolific/actions/", api.ProlificAction.as_view()),
]
