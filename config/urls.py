from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.static import serve
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from annotation import api as annotation_api
from benchmarks import api as benchmarks_api
from humaneval import api as humaneval_api
from modeleval import api as modeleval_api
from review import api as review_api

api_v1 = [
    path("assignments/<int:pk>/", annotation_api.AssignmentDetail.as_view()),
    path("assignments/<int:pk>/submit/", annotation_api.AssignmentSubmit.as_view()),
    path("review/queue/", review_api.ReviewQueue.as_view()),
    path("changes/<int:pk>/", review_api.ChangeDetail.as_view()),
    path("changes/<int:pk>/refine/", review_api.RefineChange.as_view()),
    path("changes/<int:pk>/approve/", review_api.ApproveChange.as_view()),
    path("changes/<int:pk>/reject/", review_api.RejectChange.as_view()),
    path("changes/<int:pk>/questions/", review_api.AuthorQuestion.as_view()),
    path("items/", benchmarks_api.ItemList.as_view()),
    path("items/<int:pk>/", benchmarks_api.ItemDetail.as_view()),
    path("releases/", benchmarks_api.ReleaseList.as_view()),
    path("studies/", humaneval_api.StudyCreate.as_view()),
    path("studies/<int:pk>/results/", humaneval_api.StudyResults.as_view()),
    path("sessions/<int:pk>/current/", humaneval_api.SessionCurrent.as_view()),
    path("sessions/<int:pk>/answer/", humaneval_api.SessionAnswer.as_view()),
    path("runs/", modeleval_api.RunList.as_view()),
    path("runs/<int:pk>/", modeleval_api.RunDetail.as_view()),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("", include("frontend.urls")),
]

if not settings.S3_BUCKET:
    # Local media folder (embedded default); S3 serves its own (presigned) URLs.
    urlpatterns += [re_path(r"^media/(?P<path>.*)$", serve, {"document_root": settings.MEDIA_ROOT})]
