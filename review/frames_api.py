"""Reviewer endpoints for crowd world frames: the frames waiting for review, and a verdict on one."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Benchmark, WorldFrame
from core.permissions import IsReviewer

from . import frames


class FrameSerializer(serializers.ModelSerializer):
    scene = serializers.CharField(source="scene.external_id")
    anchor = serializers.CharField(source="anchor.label")

    class Meta:
        model = WorldFrame
        fields = ["id", "scene", "anchor", "side", "text", "status"]


class FrameQueue(APIView):
    """Crowd world frames of a benchmark waiting for review."""

    permission_classes = [IsReviewer]
    serializer_class = FrameSerializer

    @extend_schema(responses=FrameSerializer(many=True))
    def get(self, request, slug):
        benchmark = get_object_or_404(Benchmark, slug=slug)
        return Response(FrameSerializer(frames.frames_to_review(benchmark), many=True).data)


class FrameVerdict(APIView):
    """Approve a frame (the scene's other approved frames are superseded) or reject it."""

    permission_classes = [IsReviewer]
    serializer_class = FrameSerializer

    def post(self, request, pk, action):
        return Response(FrameSerializer(frames.review_frame(pk, action)).data)
