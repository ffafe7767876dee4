from django.urls import path

from . import api

urlpatterns = [
    path("items/", api.ItemList.as_view()),
    path("items/<int:pk>/", api.ItemDetail.as_view()),
    path("releases/", api.ReleaseList.as_view()),
    path("releases/<int:pk>/", api.ReleaseDetail.as_view()),
]
