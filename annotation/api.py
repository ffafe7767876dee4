"""Annotator endpoints (own assignments only: drafts, descriptions, heartbeat, release, submit),
staff endpoints (campaigns with progress, payment report, model drafting)."""


from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.api import SceneViewerSerializer
from benchmarks.edit_schema import EDIT_HELP, EditField
from benchmarks.models import Benchmark, ChangeType, ContextChange, Scene
from core.api import error, validated
from core.models import Job
from core.permissions import IsAdmin
from core.plain_views import PageFastPathView
from modeleval import services as modeleval_services
from scenes.viewer import cached_scene_viewer_data

from . import drafting, families, progress, services
from .models import Assignment, Campaign, DraftingPrompt


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


class TextOnlyField(serializers.CharField):
    """Text that must arrive as a JSON string (DRF's CharField would turn a number into one)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class SaveDraftSerializer(serializers.Serializer):
    text = TextOnlyField(allow_blank=True, required=False, default="", max_length=services.MAX_TEXT_CHARS,
                         trim_whitespace=False)
    content = serializers.JSONField(required=False, help_text="The form being filled (other kinds).")
    revision = serializers.IntegerField(required=False, help_text="The revision this save is based on.")


class AssignmentDraftView(PageFastPathView):
    """Autosave: the description being written (or the form of the other kinds); renews the lease.
    Every few seconds per worker, so the page's own PUT takes the fast path (core.plain_views)."""

    page_method = "PUT"
    serializer_class = SaveDraftSerializer

    def respond(self, user, data, pk):
        draft = services.save_draft(pk, user, data["text"], data.get("revision"), data.get("content"))
        return {"descriptions": draft.descriptions, "text": draft.text, "content": draft.content,
                "revision": draft.revision}, 200

    @extend_schema(request=SaveDraftSerializer, responses={200: DraftSerializer, 409: error(409)},
                   operation_id="assignments_draft_update")
    def put(self, request, pk):
        return self.respond_through_drf(request, pk=pk)


class DescriptionSerializer(serializers.Serializer):
    text = serializers.CharField(allow_blank=True, max_length=services.MAX_TEXT_CHARS)
    edit = EditField(required=False, allow_null=True, default=None, help_text=EDIT_HELP)


class AddedDescriptionSerializer(DraftSerializer):
    warnings = serializers.ListField(child=serializers.CharField(), help_text="Accepted, but worth a look.")


class AssignmentDescriptions(APIView):
    """Check one description against the rules and accept it into the draft."""

    @extend_schema(request=DescriptionSerializer,
                   responses={201: AddedDescriptionSerializer, 409: error(409)})
    def post(self, request, pk):
        body = validated(DescriptionSerializer, request)
        draft, warnings = services.add_description(pk, request.user, body["text"], body["edit"])
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
    edit = EditField(required=False, allow_null=True, default=None, help_text=f"The last description's edit. {EDIT_HELP}")


class SubmittedSerializer(AssignmentSerializer):
    completion_url = serializers.CharField(allow_null=True, help_text="Where the worker goes back to.")

    class Meta(AssignmentSerializer.Meta):
        fields = [*AssignmentSerializer.Meta.fields, "completion_url"]


class AssignmentSubmit(APIView):
    serializer_class = SubmitChangeSerializer

    @extend_schema(request=SubmitChangeSerializer, responses={201: SubmittedSerializer, 409: error(409)})
    def post(self, request, pk):
        body = validated(SubmitChangeSerializer, request)
        assignment = services.submit_assignment(pk, request.user, body["text"], body.get("answer"), body["edit"])
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
    change_type = serializers.ChoiceField(choices=ChangeType.choices, required=False, allow_blank=True,
                                          help_text="Context-change campaigns only (movement when left out); the "
                                                    "other kinds store none.")
    quiz = QuizQuestionSerializer(many=True, required=False)
    # {fine type: [coarse types]}: a list or a string here would break every crowd submit of the campaign.
    question_types = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField(max_length=100), max_length=50), required=False,
        help_text="Question and choice campaigns: {fine type: [coarse types]}.")
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
        fields = dict(validated(CampaignSerializer, request))
        # without a kind, the family's own (a Hypo3D benchmark's: context changes, movement by default)
        kind = fields.setdefault("kind", families.default_kind(fields["benchmark"].family, fields.get("change_type")))
        change_type = fields.pop("change_type", ChangeType.MOVEMENT if families.takes_change_type(kind) else "")
        campaign = services.create_campaign(
            fields.pop("benchmark"), fields.pop("name"), change_type, fields.pop("scenes"),
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
        return Response({**CampaignSerializer(campaign).data, "progress": progress.campaign_progress(campaign)})


class CampaignPayments(APIView):
    """Staff: payment report (CSV) from accepted work at the campaign's rate."""

    permission_classes = [IsAdmin]

    @extend_schema(responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV")})
    def get(self, request, pk):
        campaign = get_object_or_404(Campaign, pk=pk)
        response = HttpResponse(progress.payment_report_csv(campaign), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="campaign-{campaign.pk}-payments.csv"'
        return response


class DraftRequestSerializer(serializers.Serializer):
    template = serializers.PrimaryKeyRelatedField(queryset=DraftingPrompt.objects.all())
    model = serializers.IntegerField(help_text="A registered model (modeleval) with an OpenAI-compatible endpoint.")
    scenes = serializers.PrimaryKeyRelatedField(many=True, queryset=Scene.objects.all(), required=False)
    changes = serializers.PrimaryKeyRelatedField(many=True, queryset=ContextChange.objects.all(), required=False)


class DraftRequestQueuedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Job.Status.choices, help_text="Its job's status.")
    scene = serializers.IntegerField(allow_null=True)
    change = serializers.IntegerField(allow_null=True)
    job = serializers.IntegerField(allow_null=True, help_text="Its progress: /api/v1/jobs/<job>/.")


class DraftRequests(APIView):
    """Staff: ask a model to draft raw changes (per scene) or questions (per approved change)."""

    permission_classes = [IsAdmin]
    serializer_class = DraftRequestSerializer

    @extend_schema(request=DraftRequestSerializer,
                   responses={202: DraftRequestQueuedSerializer(many=True), 503: error(503)})
    def post(self, request):
        fields = validated(DraftRequestSerializer, request)
        model = modeleval_services.language_model(fields["model"])
        requests = drafting.request_drafts(fields["template"], model, fields.get("scenes", []),
                                           fields.get("changes", []), user=request.user)
        return Response([{"id": r.pk, "status": r.job.status, "scene": r.scene_id, "change": r.change_id,
                          "job": r.job_id} for r in requests], status=202)
