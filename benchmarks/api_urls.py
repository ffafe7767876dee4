from django.urls import path

from . import api

urlpatterns = [
    path("items/", api.ItemList.as_view()),
    path("items/<int:pk>/", api.ItemDetail.as_view()),
    path("releases/", api.ReleaseList.as_view()),
    path("releases/<int:pk>/", api.ReleaseDetail.as_view()),
    path("uploads/", api.UploadList.as_view()),
    path("uploads/<int:pk>/complete/", api.UploadComplete.as_view()),
    path("uploads/<int:pk>/content/", api.UploadContent.as_view(), name="upload-content"),
    path("assets/<int:pk>/", api.AssetDetail.as_view()),
    path("assets/<int:pk>/download/", api.AssetDownload.as_view()),
    path("assets/<int:pk>/file/", api.AssetFile.as_view(), name="asset-file"),
]
