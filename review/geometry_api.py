"""Reviewer endpoints for a change's geometry: replace its edit, the derived answers beside the written
ones, and questions drafted from the geometry (saved only when asked). Thin: review/geometry.py decides."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.edit_schema import EditField
from core.api import error, validated
from core.jobs import job_state
from core.jobs_api import JobSerializer
from core.permissions import IsReviewer

from . import after_state, geometry
from .api import CONFLICT, ChangeSerializer, VersionSerializer


class ChangeEditSerializer(VersionSerializer):
    edit = EditField(allow_null=True, help_text="The change's new edit (null clears it); checked against its text.")


class ChangeGeometry(APIView):
    """Replace a change's geometric edit (optimistic lock on its version; 400 on `edit` naming what disagrees)."""

    permission_classes = [IsReviewer]
    serializer_class = ChangeEditSerializer

    @extend_schema(request=ChangeEditSerializer, responses={200: ChangeSerializer, 409: CONFLICT})
    def post(self, request, pk):
        body = validated(ChangeEditSerializer, request)
        change = geometry.edit_change_geometry(pk, request.user, body["edit"], body["version"])
        return Response(ChangeSerializer(change).data)


class DerivedAnswerSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    question = serializers.CharField()
    answers = serializers.ListField(child=serializers.CharField(), help_text="The written answers.")
    derived = serializers.CharField(allow_null=True, help_text="What the geometry after the change answers; null "
                                                               "when no template fits the question.")
    agrees = serializers.BooleanField(allow_null=True, help_text="Derived equals a written answer (normalised as "
                                                                 "Hypo3D scores); null without a derived answer.")


class DerivedAnswers(APIView):
    """For each of the change's questions, the answer its geometry derives beside the written one."""

    permission_classes = [IsReviewer]

    @extend_schema(responses=DerivedAnswerSerializer(many=True))
    def get(self, request, pk):
        return Response(geometry.derived_answers(pk))


class GenerateQuestionsSerializer(serializers.Serializer):
    save = serializers.BooleanField(required=False, default=False,
                                    help_text="Write each draft as this reviewer's question (approved changes).")
    limit = serializers.IntegerField(required=False, default=8, min_value=1, max_value=20)


class GeneratedQuestionSerializer(serializers.Serializer):
    question = serializers.CharField()
    answer = serializers.CharField(help_text="Derived from the geometry after the change.")
    question_type = serializers.ListField(child=serializers.CharField())
    item = serializers.IntegerField(allow_null=True, help_text="The saved item; null unless `save`.")


class GenerateQuestions(APIView):
    """Draft questions whose answers the change's geometry decides; saved as items only with `save`."""

    permission_classes = [IsReviewer]
    serializer_class = GenerateQuestionsSerializer

    @extend_schema(request=GenerateQuestionsSerializer,
                   responses={200: GeneratedQuestionSerializer(many=True), 201: GeneratedQuestionSerializer(many=True),
                              409: CONFLICT})
    def post(self, request, pk):
        body = validated(GenerateQuestionsSerializer, request)
        drafts = geometry.generate_questions(pk, request.user, body["save"], body["limit"])
        return Response(drafts, status=201 if body["save"] else 200)


class AfterStateQueuedSerializer(serializers.Serializer):
    job = JobSerializer(help_text="The build's job: /api/v1/jobs/<id>/ and its websocket follow it.")


class AfterState(APIView):
    """Build the scene as the change leaves it (its viewer file and top views, kept from people) again: 202
    with the job; 400 on `edit` when the change has no edit. Reviewers only."""

    permission_classes = [IsReviewer]

    @extend_schema(request=None, responses={202: AfterStateQueuedSerializer, 503: error(503)})
    def post(self, request, pk):
        job = after_state.request_after_state(pk, request.user)
        return Response({"job": job_state(job)}, status=202)
