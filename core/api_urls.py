from django.urls import path

from . import history_api, jobs_api

urlpatterns = [
    path("jobs/", jobs_api.JobList.as_view()),
    path("jobs/<int:pk>/", jobs_api.JobDetail.as_view()),
    path("jobs/<int:pk>/cancel/", jobs_api.JobCancel.as_view()),
    path("history/<slug:model>/<int:pk>/", history_api.StatusHistory.as_view()),
]
