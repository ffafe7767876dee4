"""Annotator endpoints (own assignments only: drafts, descriptions, heartbeat, release, submit),
staff endpoints (campaigns with progress, payment report, model drafting)."""

import json

from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.api import SceneViewerSerializer
from benchmarks.material.viewer import cached_scene_viewer_data
from benchmarks.models import Benchmark, ChangeType, ContextChange, Scene
from core.api import error
from core.errors import DomainError
from core.permissions import IsAdmin
from core.plain_views import page_endpoint
from modeleval.models import ModelSpec

from . import drafting, services
from .models import Assignment, Campaign, PromptTemplate


class DraftSerializer(serializers.Serializer):
    descriptions = serializers.JSONField(read_only=True, help_text="Accepted descriptions with their warnings.")
    text = serializers.CharField(allow_blank=True, help_text="The description being written.")
    content = serializers.JSONField(read_only=True, help_text="The form being filled (other kinds).")
    revision = serializers.IntegerField(read_only=True)


class AssignmentSerializer(serializers.ModelSerializer):
    campaign = serializers.CharField(source="campaign.name")
    change_type = serializers.CharField(source="campaign.change_type")
    min_words = serializers.IntegerField(source="campaign.min_words")
    descriptions_needed = serializers.IntegerField(source="campaign.descriptions_per_assignment")
    kind = serializers.CharField(source="campaign.kind")

    class Meta:
        model = Assignment
        fields = ["id", "campaign", "kind", "change_type", "min_words", "descriptions_needed", "status",
                  "lease_expires_at", "completion_code"]


class AssignmentDetailSerializer(AssignmentSerializer):
    draft = DraftSerializer()
    task = serializers.JSONField(help_text="What the campaign's kind asks for (annotation.services.task_of).")
    scene = SceneViewerSerializer()

    class Meta(AssignmentSerializer.Meta):
        fields = [*AssignmentSerializer.Meta.fields, "draft", "task", "scene"]


def _assignment_body(assignment: Assignment) -> dict:
    return {**AssignmentSerializer(assignment).data, "draft": DraftSerializer(services.draft_of(assignment)).data,
            "task": services.task_of(assignment)}


class AssignmentDetail(APIView):
    """An annotator's own assignment with its scene and draft (another worker's gets 403)."""

    @extend_schema(responses=AssignmentDetailSerializer)
    def get(self, request, pk):
        assignment = services.assignment_for_worker(pk, request.user)
        return Response({**_assignment_body(assignment), "scene": cached_scene_viewer_data(assignment.scene)})


class SaveDraftSerializer(serializers.Serializer):
    text = serializers.CharField(allow_blank=True, required=False, default="", max_length=services.MAX_TEXT_CHARS,
                                 trim_whitespace=False)
    content = serializers.JSONField(required=False, help_text="The form being filled (other kinds).")
    revision = serializers.IntegerField(required=False, help_text="The revision this save is based on.")


class AssignmentDraftView(APIView):
    """Autosave for API clients with a token (the page's own autosave goes through `autosave`)."""

    @extend_schema(request=SaveDraftSerializer, responses={200: DraftSerializer, 409: error(409)},
                   operation_id="assignments_draft_update")
    def put(self, request, pk):
        data = SaveDraftSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        draft = services.save_draft(pk, request.user, data.validated_data["text"],
                                    data.validated_data.get("revision"), data.validated_data.get("content"))
        return Response(DraftSerializer(draft).data)


@page_endpoint("PUT", AssignmentDraftView.as_view())
def autosave(request, pk):
    """Autosave: the description being written; renews the lease. Every few seconds per worker, so
    a plain view (core.plain_views); token clients go on to the DRF view."""
    body = _draft_body(request.body)
    draft = services.save_draft(pk, request.user, body["text"], body["revision"], body["content"])
    return JsonResponse({"descriptions": draft.descriptions, "text": draft.text, "content": draft.content,
                         "revision": draft.revision})


def _draft_body(raw: bytes) -> dict:
    """The autosave's JSON body, checked as SaveDraftSerializer checks it."""
    try:
        body = json.loads(raw or b"{}")
    except ValueError as exc:
        raise DomainError(f"JSON parse error - {exc}", field="detail") from None
    if not isinstance(body, dict):
        raise DomainError("Expected a JSON object.", field="non_field_errors")
    text, revision = body.get("text", ""), body.get("revision")
    if not isinstance(text, str):
        raise DomainError("Not a valid string.", field="text")
    if revision is not None and (isinstance(revision, bool) or not isinstance(revision, int)):
        raise DomainError("A valid integer is required.", field="revision")
    return {"text": text, "revision": revision, "content": body.get("content")}


class DescriptionSerializer(serializers.Serializer):
    text = serializers.CharField(allow_blank=True, max_length=services.MAX_TEXT_CHARS)


class AddedDescriptionSerializer(DraftSerializer):
    warnings = serializers.ListField(child=serializers.CharField(), help_text="Accepted, but worth a look.")


class AssignmentDescriptions(APIView):
    """Check one description against the rules and accept it into the draft."""

    @extend_schema(request=DescriptionSerializer,
                   responses={201: AddedDescriptionSerializer, 409: error(409)})
    def post(self, request, pk):
        data = DescriptionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        draft, warnings = services.add_description(pk, request.user, data.validated_data["text"])
        return Response({**DraftSerializer(draft).data, "warnings": warnings}, status=201)


class AssignmentDescriptionDetail(APIView):
    @extend_schema(responses={200: DraftSerializer, 409: error(409)})
    def delete(self, request, pk, index):
        draft = services.remove_description(pk, request.user, index - 1)
        return Response(DraftSerializer(draft).data)


class LeaseSerializer(serializers.Serializer):
    lease_expires_at = serializers.DateTimeField()


class AssignmentStatusSerializer(serializers.Serializer):
    status = serializers.CharField()


class AssignmentHeartbeat(APIView):
    @extend_schema(request=None, responses={200: LeaseSerializer, 409: error(409)})
    def post(self, request, pk):
        assignment = services.heartbeat(pk, request.user)
        return Response({"lease_expires_at": assignment.lease_expires_at})


class AssignmentRelease(APIView):
    @extend_schema(request=None, responses={200: AssignmentStatusSerializer, 409: error(409)})
    def post(self, request, pk):
        assignment = services.release_assignment(pk, request.user)
        return Response({"status": assignment.status})


class SubmitChangeSerializer(serializers.Serializer):
    text = serializers.CharField(
        allow_blank=True, required=False, default="",
        help_text="The last description, if not yet added to the draft.",
    )
    answer = serializers.JSONField(required=False, help_text="The form of the other kinds; else the autosaved one.")


class SubmittedSerializer(AssignmentSerializer):
    completion_url = serializers.CharField(allow_null=True, help_text="Where the worker goes back to.")

    class Meta(AssignmentSerializer.Meta):
        fields = [*AssignmentSerializer.Meta.fields, "completion_url"]


class AssignmentSubmit(APIView):
    serializer_class = SubmitChangeSerializer

    @extend_schema(request=SubmitChangeSerializer, responses={201: SubmittedSerializer, 409: error(409)})
    def post(self, request, pk):
        data = SubmitChangeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        assignment = services.submit_assignment(pk, request.user, data.validated_data["text"],
                                                data.validated_data.get("answer"))
        return Response(
            {**AssignmentSerializer(assignment).data,
             "completion_url": services.assignment_completion_url(assignment)},
            status=201,
        )


class QuizQuestionSerializer(serializers.Serializer):
    question = serializers.CharField()
    choices = serializers.ListField(child=serializers.CharField(), min_length=2)
    answer = serializers.IntegerField(min_value=0)


class CampaignSerializer(serializers.ModelSerializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    scenes = serializers.PrimaryKeyRelatedField(many=True, queryset=Scene.objects.all())
    change_type = serializers.ChoiceField(choices=ChangeType.choices, default=ChangeType.MOVEMENT)
    quiz = QuizQuestionSerializer(many=True, required=False)
    entry_url = serializers.SerializerMethodField()

    class Meta:
        model = Campaign
        fields = ["id", "benchmark", "name", "kind", "change_type", "scenes", "guidelines", "min_words",
                  "descriptions_per_assignment", "lease_minutes", "max_assignments_per_worker",
                  "assignments_per_scene", "pay_cents", "pay_unit", "question_types", "quiz", "quiz_max_attempts",
                  "completion_url", "is_active", "entry_url"]

    def get_entry_url(self, campaign) -> str:
        return f"/crowd/campaigns/{campaign.pk}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" \
               f"&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"


class CampaignList(APIView):
    """Staff: list campaigns, or create one (five descriptions per assignment unless told)."""

    permission_classes = [IsAdmin]
    serializer_class = CampaignSerializer

    @extend_schema(responses=CampaignSerializer(many=True), operation_id="campaigns_list")
    def get(self, request):
        campaigns = Campaign.objects.select_related("benchmark").prefetch_related("scenes").order_by("id")
        return Response(CampaignSerializer(campaigns, many=True).data)

    @extend_schema(request=CampaignSerializer, responses={201: CampaignSerializer})
    def post(self, request):
        data = CampaignSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        campaign = services.create_campaign(
            fields.pop("benchmark"), fields.pop("name"), fields.pop("change_type"), fields.pop("scenes"),
            descriptions_per_assignment=fields.pop("descriptions_per_assignment", 5), **fields,
        )
        return Response(CampaignSerializer(campaign).data, status=201)


class CampaignWorkerSerializer(serializers.Serializer):
    worker_id = serializers.CharField()
    assignments = serializers.IntegerField()
    descriptions = serializers.IntegerField()
    median_seconds_per_description = serializers.FloatField()


class CampaignProgressSerializer(serializers.Serializer):
    assignments = serializers.DictField(child=serializers.IntegerField(), help_text="Count per status.")
    descriptions = serializers.DictField(child=serializers.IntegerField(), help_text="Changes per status.")
    items = serializers.DictField(child=serializers.IntegerField(), help_text="Items per review status.")
    workers = CampaignWorkerSerializer(many=True)


class CampaignDetailSerializer(CampaignSerializer):
    progress = CampaignProgressSerializer()

    class Meta(CampaignSerializer.Meta):
        fields = [*CampaignSerializer.Meta.fields, "progress"]


class CampaignDetail(APIView):
    """Staff: one campaign with its live progress."""

    permission_classes = [IsAdmin]

    @extend_schema(responses=CampaignDetailSerializer)
    def get(self, request, pk):
        campaign = get_object_or_404(Campaign, pk=pk)
        return Response({**CampaignSerializer(campaign).data, "progress": services.campaign_progress(campaign)})


class CampaignPayments(APIView):
    """Staff: payment report (CSV) from accepted work at the campaign's rate."""

    permission_classes = [IsAdmin]

    @extend_schema(responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV")})
    def get(self, request, pk):
        campaign = get_object_or_404(Campaign, pk=pk)
        response = HttpResponse(services.payment_report_csv(campaign), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="campaign-{campaign.pk}-payments.csv"'
        return response


class DraftRequestSerializer(serializers.Serializer):
    template = serializers.PrimaryKeyRelatedField(queryset=PromptTemplate.objects.all())
    model = serializers.IntegerField(help_text="A registered model (modeleval) with an OpenAI-compatible endpoint.")
    scenes = serializers.PrimaryKeyRelatedField(many=True, queryset=Scene.objects.all(), required=False)
    changes = serializers.PrimaryKeyRelatedField(many=True, queryset=ContextChange.objects.all(), required=False)


class DraftRequestQueuedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    scene = serializers.IntegerField(allow_null=True)
    change = serializers.IntegerField(allow_null=True)


class DraftRequests(APIView):
    """Staff: ask a model to draft raw changes (per scene) or questions (per approved change)."""

    permission_classes = [IsAdmin]
    serializer_class = DraftRequestSerializer

    @extend_schema(request=DraftRequestSerializer,
                   responses={202: DraftRequestQueuedSerializer(many=True), 503: error(503)})
    def post(self, request):
        data = DraftRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        model = ModelSpec.objects.filter(pk=fields["model"]).first()
        if model is None:
            raise DomainError("No such model.", field="model")
        requests = drafting.request_drafts(fields["template"], model, fields.get("scenes", []),
                                           fields.get("changes", []))
        return Response([{"id": r.pk, "status": r.status, "scene": r.scene_id, "change": r.change_id}
                         for r in requests], status=202)
