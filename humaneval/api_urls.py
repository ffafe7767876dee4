from django.urls import path

from . import api

urlpatterns = [
    path("studies/", api.StudyCreate.as_view()),
    path("sessions/<int:pk>/current/", api.session_current),
    path("sessions/<int:pk>/answer/", api.session_answer),
    path("sessions/<int:pk>/items/<int:item_id>/", api.SessionAnsweredItem.as_view()),
]
