"""/api/v1/jobs/: every long-running job's progress and report, in one shape, and its cancel (core/jobs.py)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import error
from core.jobs import cancel_job, job_for, job_state, visible_jobs
from core.models import Job
from core.permissions import IsReviewer


class JobSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    key = serializers.CharField()
    subject = serializers.CharField()
    status = serializers.ChoiceField(choices=Job.Status.choices)
    done = serializers.IntegerField()
    total = serializers.IntegerField(allow_null=True)
    percent = serializers.FloatField(allow_null=True, help_text="Empty while the total is unknown.")
    message = serializers.CharField()
    report = serializers.JSONField(help_text="What the job kept and dropped, and why.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class JobPages(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


@extend_schema(parameters=[
    OpenApiParameter("kind", str, description="Only jobs of this kind."),
    OpenApiParameter("status", str, enum=Job.Status.values, description="Only jobs in this status."),
])
class JobList(ListAPIView):
    """Jobs, newest first: all of them for admins, their own for reviewers."""

    permission_classes = [IsReviewer]
    serializer_class = JobSerializer
    pagination_class = JobPages

    def get_queryset(self):
        jobs = visible_jobs(self.request.user).order_by("-created_at", "-pk")
        if kind := self.request.query_params.get("kind"):
            jobs = jobs.filter(kind=kind)
        if status := self.request.query_params.get("status"):
            if status not in Job.Status.values:
                raise ValidationError({"status": [f"must be one of {', '.join(Job.Status.values)}"]})
            jobs = jobs.filter(status=status)
        return jobs

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(JobSerializer([job_state(job) for job in page], many=True).data)


class JobDetail(APIView):
    """One job: status, progress, the current step and, when it has ended, its report."""

    permission_classes = [IsReviewer]

    @extend_schema(responses={200: JobSerializer, 404: error(404)})
    def get(self, request, pk):
        return Response(JobSerializer(job_state(job_for(request.user, pk))).data)


class JobCancel(APIView):
    """Cancel a queued or running job: reviewers their own, admins any. Its work stops at its next step."""

    permission_classes = [IsReviewer]

    @extend_schema(request=None, responses={200: JobSerializer, 404: error(404), 409: error(409)})
    def post(self, request, pk):
        return Response(JobSerializer(job_state(cancel_job(pk, request.user))).data)
