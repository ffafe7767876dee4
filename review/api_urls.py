from django.urls import path

from . import api, pipeline_api

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
    path("benchmarks/<slug:slug>/agreement/", api.AgreementReport.as_view()),
    path("benchmarks/<slug:slug>/keep-rates/", api.KeepRates.as_view()),
    path("dedup/", api.StartDedup.as_view()),
    path("dedup/<int:pk>/", api.DedupRunDetail.as_view()),
    path("duplicates/<int:pk>/resolve/", api.ResolveDuplicate.as_view()),
    path("polish/", api.StartPolish.as_view()),
    path("polishes/<int:pk>/<str:action>/", api.ReviewPolish.as_view()),
    path("benchmarks/<slug:slug>/stages/", pipeline_api.BenchmarkStages.as_view()),
    path("benchmarks/<slug:slug>/pipeline/run/", pipeline_api.RunPipeline.as_view()),
    path("stages/<int:pk>/", pipeline_api.StageDetail.as_view()),
    path("stages/<int:pk>/run/", pipeline_api.RunStage.as_view()),
]
