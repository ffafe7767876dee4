from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.viewer import scene_viewer_data

from . import services
from .models import Assignment


class AssignmentSerializer(serializers.ModelSerializer):
    campaign = serializers.CharField(source="campaign.name")
    change_type = serializers.CharField(source="campaign.change_type")
    min_words = serializers.IntegerField(source="campaign.min_words")

    class Meta:
        model = Assignment
        fields = ["id", "campaign", "change_type", "min_words", "status", "lease_expires_at", "completion_code"]


class SubmitChangeSerializer(serializers.Serializer):
    text = serializers.CharField(allow_blank=True, help_text="The context change description.")


class AssignmentDetail(APIView):
    """An annotator's own assignment with its scene (another worker's gets 403)."""

    def get(self, request, pk):
        assignment = services.assignment_for_worker(pk, request.user)
        return Response({**AssignmentSerializer(assignment).data, "scene": scene_viewer_data(assignment.scene)})


class AssignmentSubmit(APIView):
    serializer_class = SubmitChangeSerializer

    def post(self, request, pk):
        data = SubmitChangeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        assignment = services.submit_assignment(pk, request.user, data.validated_data["text"])
        return Response(
            {
                **AssignmentSerializer(assignment).data,
                "completion_url": services.completion_url(request.user, assignment.completion_code),
            },
            status=201,
        )
