from django.urls import path

from . import api

urlpatterns = [
    path("studies/", api.StudyCreate.as_view()),
    path("sessions/<int:pk>/current/", api.SessionCurrent.as_view()),
    path("sessions/<int:pk>/answer/", api.SessionAnswer.as_view()),
    path("sessions/<int:pk>/onset/", api.SessionOnset.as_view()),
    path("sessions/<int:pk>/items/<int:item_id>/", api.SessionAnsweredItem.as_view()),
]
