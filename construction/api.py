"""/api/v1/benchmarks/<slug>/stages/, /api/v1/stages/<id>/ and the run endpoints: a benchmark's pipeline
(construction/pipeline.py) for admins. Each run answers with its core Job (/api/v1/jobs/<id>/)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Benchmark
from core.api import error, validated
from core.jobs import job_state
from core.jobs_api import JobSerializer
from core.permissions import IsAdmin

from . import pipeline, selectors
from .models import PipelineStage

CONFLICT = error(409, "Someone saved a newer version of the stage (`current` holds it), or it is running.")


class StageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    benchmark = serializers.CharField(help_text="The benchmark's slug.")
    position = serializers.IntegerField(help_text="Order in the pipeline, from 1.")
    kind = serializers.ChoiceField(choices=PipelineStage.Kind.choices)
    name = serializers.CharField(allow_blank=True)
    params = serializers.JSONField(help_text="What the stage's runner is given, with its defaults.")
    version = serializers.IntegerField(help_text="Send it back with an edit (409 when someone saved since).")
    created_at = serializers.DateTimeField()
    last_job = JobSerializer(allow_null=True, help_text="The stage's latest run.")


def stage_data(stage: PipelineStage) -> dict:
    return {"id": stage.pk, "benchmark": stage.benchmark.slug, "position": stage.position, "kind": stage.kind,
            "name": stage.name, "params": stage.params, "version": stage.version, "created_at": stage.created_at,
            "last_job": job_state(stage.last_job) if stage.last_job else None}


class NewStageSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=PipelineStage.Kind.choices)
    name = serializers.CharField(required=False, allow_blank=True, max_length=100)
    params = serializers.JSONField(required=False, help_text="A JSON object; what it takes depends on the kind.")
    position = serializers.IntegerField(required=False, min_value=1, help_text="Insert here (default: last).")


class StageEditSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="The version you edited.")
    kind = serializers.ChoiceField(choices=PipelineStage.Kind.choices, required=False)
    name = serializers.CharField(required=False, allow_blank=True, max_length=100)
    params = serializers.JSONField(required=False)
    position = serializers.IntegerField(required=False, min_value=1, help_text="Move it here.")


class RunSerializer(serializers.Serializer):
    again = serializers.BooleanField(default=False, help_text="Run finished work again (a fresh job).")


class PipelineRunSerializer(serializers.Serializer):
    jobs = JobSerializer(many=True, help_text="One per stage, in order.")


class BenchmarkStages(APIView):
    """A benchmark's pipeline stages in order; add one."""

    permission_classes = [IsAdmin]
    serializer_class = StageSerializer

    @extend_schema(responses=StageSerializer(many=True))
    def get(self, request, slug):
        benchmark = get_object_or_404(Benchmark, slug=slug)
        return Response(StageSerializer([stage_data(s) for s in selectors.stages_of(benchmark)], many=True).data)

    @extend_schema(request=NewStageSerializer, responses={201: StageSerializer})
    def post(self, request, slug):
        benchmark = get_object_or_404(Benchmark, slug=slug)
        v = validated(NewStageSerializer, request)
        stage = pipeline.add_stage(benchmark, request.user, v["kind"], v.get("params"), v.get("name", ""),
                                   v.get("position"))
        return Response(StageSerializer(stage_data(stage)).data, status=201)


class StageDetail(APIView):
    permission_classes = [IsAdmin]
    serializer_class = StageSerializer

    def _stage(self, pk):
        return get_object_or_404(PipelineStage.objects.select_related("benchmark", "last_job"), pk=pk)

    @extend_schema(responses=StageSerializer)
    def get(self, request, pk):
        return Response(StageSerializer(stage_data(self._stage(pk))).data)

    @extend_schema(request=StageEditSerializer, responses={200: StageSerializer, 409: CONFLICT})
    def patch(self, request, pk):
        changes = dict(validated(StageEditSerializer, request))
        stage = pipeline.update_stage(pk, request.user, changes.pop("version"), **changes)
        return Response(StageSerializer(stage_data(self._stage(stage.pk))).data)

    @extend_schema(responses={204: None})
    def delete(self, request, pk):
        pipeline.remove_stage(pk)
        return Response(status=204)


class RunStage(APIView):
    """Run one stage as a job (the same job while the same work is queued, running or done)."""

    permission_classes = [IsAdmin]
    serializer_class = RunSerializer

    @extend_schema(request=RunSerializer, responses={201: JobSerializer, 503: error(503)})
    def post(self, request, pk):
        again = validated(RunSerializer, request)["again"]
        job = pipeline.run_stage(get_object_or_404(PipelineStage, pk=pk), request.user, again=again)
        job.refresh_from_db()  # in the embedded mode it has run already
        return Response(JobSerializer(job_state(job)).data, status=201)


class RunPipeline(APIView):
    """Run every stage in order, one job each, each started when the one before it is done."""

    permission_classes = [IsAdmin]
    serializer_class = RunSerializer

    @extend_schema(request=RunSerializer, responses={201: PipelineRunSerializer, 409: error(409), 503: error(503)})
    def post(self, request, slug):
        again = validated(RunSerializer, request)["again"]
        jobs = pipeline.run_pipeline(get_object_or_404(Benchmark, slug=slug), request.user, again=again)
        for job in jobs:
            job.refresh_from_db()
        return Response({"jobs": JobSerializer([job_state(job) for job in jobs], many=True).data}, status=201)
