from django.urls import path

from . import api

urlpatterns = [
    path("models/", api.ModelList.as_view()),
    path("runs/", api.RunList.as_view()),
    path("runs/<int:pk>/", api.RunDetail.as_view()),
    path("runs/<int:pk>/cancel/", api.RunCancel.as_view()),
    path("runs/<int:pk>/resume/", api.RunResume.as_view()),
    path("recipes/", api.RecipeList.as_view()),
    path("recipes/launch/", api.RecipeLaunch.as_view()),
    path("item-frames/", api.ItemFrames.as_view()),
]
