from django.urls import path

from . import api, complements_api, frames_api

urlpatterns = [
    path("review/queue/", api.ReviewQueue.as_view()),
    path("review/returned/", api.ReturnedWork.as_view()),
    path("changes/<int:pk>/", api.ChangeDetail.as_view()),
    path("changes/<int:pk>/refine/", api.RefineChange.as_view()),
    path("changes/<int:pk>/approve/", api.ApproveChange.as_view()),
    path("changes/<int:pk>/reject/", api.RejectChange.as_view()),
    path("changes/<int:pk>/resubmit/", api.ResubmitChange.as_view()),
    path("changes/<int:pk>/history/", api.ChangeHistory.as_view()),
    path("changes/<int:pk>/questions/", api.AuthorQuestion.as_view()),
    path("items/<int:pk>/edit/", api.EditItem.as_view()),
    path("items/<int:pk>/approve/", api.ApproveItem.as_view()),
    path("items/<int:pk>/reject/", api.RejectItem.as_view()),
    path("items/<int:pk>/filter/", api.FilterQuestion.as_view()),
    path("items/<int:pk>/history/", api.ItemHistory.as_view()),
    path("items/<int:pk>/answers/", api.IndependentAnswerView.as_view()),
    path("items/<int:pk>/adjudicate/", api.AdjudicateItem.as_view()),
    path("items/<int:pk>/complement/", complements_api.ComplementaryImage.as_view()),
    path("benchmarks/<slug:slug>/agreement/", api.AgreementReport.as_view()),
    path("benchmarks/<slug:slug>/keep-rates/", api.KeepRates.as_view()),
    path("dedup/", api.StartDedup.as_view()),
    path("dedup/<int:pk>/", api.DedupRunDetail.as_view()),
    path("duplicates/<int:pk>/resolve/", api.ResolveDuplicate.as_view()),
    path("polish/", api.StartPolish.as_view()),
    path("polishes/<int:pk>/<str:action>/", api.ReviewPolish.as_view()),
    path("benchmarks/<slug:slug>/world-frames/review/", frames_api.FrameQueue.as_view()),
    path("world-frames/<int:pk>/<str:action>/", frames_api.FrameVerdict.as_view()),
]
