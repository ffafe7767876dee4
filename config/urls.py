from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from benchmarks.media import serve_media

# Each app owns its API routes (`<app>/api_urls.py`); this file only mounts them.
api_v1 = [
    path("", include("core.api_urls")),
    path("", include("benchmarks.api_urls")),
    path("", include("scenes.api_urls")),
    path("", include("crowd.api_urls")),
    path("", include("annotation.api_urls")),
    path("", include("review.api_urls")),
    path("", include("construction.api_urls")),
    path("", include("results.api_urls")),
    path("", include("humaneval.api_urls")),
    path("", include("modeleval.api_urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI and ReDoc from static files (drf-spectacular-sidecar); the split view serves Swagger's
    # start-up script from a URL rather than inline, and ReDoc's template loads no web fonts.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="schema", template_name="api/redoc.html"),
         name="api-redoc"),
]

handler404 = "core.api.not_found"  # JSON under /api/

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("", include("frontend.urls")),
]

if not settings.S3_BUCKET:
    # Local media folder (embedded default): each file only to those allowed to see it (404 to
    # everyone else; rules in benchmarks/media.py), with byte ranges so videos can seek. S3 serves
    # its own presigned URLs, handed out after the same check.
    urlpatterns += [re_path(r"^media/(?P<path>.*)$", serve_media)]
