from django.urls import path

from . import api

urlpatterns = [
    path("review/queue/", api.ReviewQueue.as_view()),
    path("changes/<int:pk>/", api.ChangeDetail.as_view()),
    path("changes/<int:pk>/refine/", api.RefineChange.as_view()),
    path("changes/<int:pk>/approve/", api.ApproveChange.as_view()),
    path("changes/<int:pk>/reject/", api.RejectChange.as_view()),
    path("changes/<int:pk>/questions/", api.AuthorQuestion.as_view()),
]
