from django.urls import path

from . import jobs_api

urlpatterns = [
    path("jobs/", jobs_api.JobList.as_view()),
    path("jobs/<int:pk>/", jobs_api.JobDetail.as_view()),
]
