from django.urls import path

from . import api

urlpatterns = [
    path("assignments/<int:pk>/", api.AssignmentDetail.as_view()),
    path("assignments/<int:pk>/draft/", api.AssignmentDraftView.as_view()),
    path("assignments/<int:pk>/descriptions/", api.AssignmentDescriptions.as_view()),
    path("assignments/<int:pk>/descriptions/<int:index>/", api.AssignmentDescriptionDetail.as_view()),
    path("assignments/<int:pk>/heartbeat/", api.AssignmentHeartbeat.as_view()),
    path("assignments/<int:pk>/release/", api.AssignmentRelease.as_view()),
    path("assignments/<int:pk>/submit/", api.AssignmentSubmit.as_view()),
    path("campaigns/", api.CampaignList.as_view()),
    path("campaigns/<int:pk>/", api.CampaignDetail.as_view()),
    path("campaigns/<int:pk>/payments.csv", api.CampaignPayments.as_view()),
    path("drafting/requests/", api.DraftRequests.as_view()),
]
