from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Benchmark, ContextChange, Item
from core.api import error, validated
from core.idempotency import idempotent
from core.models import Job
from core.permissions import IsAdmin, IsReviewer

from . import consensus, dedup, polish, services
from .models import DedupRun, ItemDecision

CONFLICT = error(409, "Someone saved a newer version (`current` holds it), or the status does not allow it.")


class RevisionSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    text = serializers.CharField()
    author = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class ChangeSerializer(serializers.ModelSerializer):
    scene = serializers.CharField(source="scene.external_id")
    revisions = serializers.SerializerMethodField()

    class Meta:
        model = ContextChange
        fields = ["id", "scene", "change_type", "raw_text", "refined_text", "status", "version", "revisions", "edit"]

    @extend_schema_field(RevisionSerializer(many=True))
    def get_revisions(self, change):
        return [
            {"number": r.number, "text": r.text, "author": r.author.username if r.author else None,
             "created_at": r.created_at}
            for r in change.revisions.select_related("author")
        ]


class VersionSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="The version the reviewer opened (optimistic lock).")


class RefineSerializer(VersionSerializer):
    text = serializers.CharField(allow_blank=True)


class RejectSerializer(VersionSerializer):
    criteria = serializers.ListField(child=serializers.CharField(), allow_empty=True)
    note = serializers.CharField(allow_blank=True, required=False, default="")


class QuestionSerializer(serializers.Serializer):
    question = serializers.CharField(allow_blank=True)
    answer = serializers.CharField(allow_blank=True)
    question_type = serializers.ListField(child=serializers.CharField(), allow_empty=True)
    unchanged_answer = serializers.CharField(required=False, allow_blank=True, help_text=(
        "Hypo3D Tables 3-4: the answer on the scene without the change (scored in the 'w/o change' condition)."))
    irrelevant_change = serializers.BooleanField(required=False, allow_null=True, default=None, help_text=(
        "The change does not affect the answer (Table 4); the unchanged answer is then the answer."))


class ReviewQueue(APIView):
    permission_classes = [IsReviewer]

    @extend_schema(parameters=[OpenApiParameter("campaign", int, description="One campaign's changes.")],
                   responses=ChangeSerializer(many=True))
    def get(self, request):
        queue = services.review_queue(request.user, request.query_params.get("campaign"))
        return Response(ChangeSerializer(queue[:100], many=True).data)


class ChangeDetail(APIView):
    permission_classes = [IsReviewer]

    @extend_schema(responses=ChangeSerializer)
    def get(self, request, pk):
        change = ContextChange.objects.filter(pk=pk).first()
        if change is None:
            return Response({"change": ["No such change."]}, status=404)
        return Response(ChangeSerializer(change).data)


# A reviewer's POST on one change: `act` gets the body `serializer_class` checked (the request's schema),
# and the answer is `answer_serializer` of what `act` returns. Comments, not docstrings: a docstring
# here would become every subclass's description in the schema.
@extend_schema(responses={200: ChangeSerializer, 409: CONFLICT})
class ChangeAction(APIView):
    permission_classes = [IsReviewer]
    answer_serializer = ChangeSerializer

    def act(self, pk, user, body):
        raise NotImplementedError

    def post(self, request, pk):
        done = self.act(pk, request.user, validated(self.serializer_class, request))
        return Response(self.answer_serializer(done).data)


class RefineChange(ChangeAction):
    serializer_class = RefineSerializer

    def act(self, pk, user, body):
        return services.refine_change(pk, user, body["text"], body["version"])


class ApproveChange(ChangeAction):
    serializer_class = VersionSerializer

    def act(self, pk, user, body):
        return services.approve_change(pk, user, body["version"])


class RejectChange(ChangeAction):
    serializer_class = RejectSerializer

    def act(self, pk, user, body):
        return services.reject_change(pk, user, body["version"], body["criteria"], body["note"])


class AuthoredQuestionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    question = serializers.CharField()
    answers = serializers.ListField(child=serializers.CharField())
    tags = serializers.JSONField()
    unchanged_answers = serializers.ListField(child=serializers.CharField())


class AuthorQuestion(APIView):
    permission_classes = [IsReviewer]
    serializer_class = QuestionSerializer

    @extend_schema(request=QuestionSerializer, responses={201: AuthoredQuestionSerializer, 409: CONFLICT})
    @idempotent
    def post(self, request, pk):
        v = validated(QuestionSerializer, request)
        item = services.author_question(pk, request.user, v["question"], v["answer"], v["question_type"],
                                        v.get("unchanged_answer"), v["irrelevant_change"])
        return Response({"id": item.pk, "question": item.question, "answers": item.answers, "tags": item.tags,
                         "unchanged_answers": item.unchanged_answers}, status=201)


class HistoryEntrySerializer(serializers.Serializer):
    """One entry of a history: a revision (raw text counts as number 0) or a decision."""

    kind = serializers.CharField(help_text="raw, revision or decision.")
    author = serializers.CharField(allow_null=True)
    at = serializers.DateTimeField()
    number = serializers.IntegerField(required=False, help_text="Revisions.")
    diff = serializers.CharField(required=False, allow_blank=True,
                                 help_text="Revisions: removed words as [-...-], added as {+...+}.")
    action = serializers.CharField(required=False, help_text="Decisions.")
    criteria = serializers.ListField(child=serializers.CharField(), required=False, help_text="Decisions.")
    note = serializers.CharField(required=False, allow_blank=True)


class ChangeHistoryEntrySerializer(HistoryEntrySerializer):
    text = serializers.CharField(required=False, allow_blank=True, help_text="Revisions.")


class ItemHistoryEntrySerializer(HistoryEntrySerializer):
    question = serializers.CharField(required=False, allow_blank=True, help_text="Revisions.")
    answers = serializers.JSONField(required=False)
    tags = serializers.JSONField(required=False)
    answers_before = serializers.JSONField(required=False)
    tags_before = serializers.JSONField(required=False)


class ChangeHistory(APIView):
    """The raw text, every revision with its word diff, and every decision."""

    permission_classes = [IsReviewer]

    @extend_schema(responses=ChangeHistoryEntrySerializer(many=True))
    def get(self, request, pk):
        change = get_object_or_404(ContextChange, pk=pk)
        return Response(services.change_history(change))


class ReturnedChangeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField()
    criteria = serializers.ListField(child=serializers.CharField())
    note = serializers.CharField(allow_blank=True)


class ReturnedWork(APIView):
    """The caller's rejected changes, with the criteria they failed and the reviewer's note."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=ReturnedChangeSerializer(many=True))
    def get(self, request):
        return Response([
            {"id": r["change"].pk, "text": r["change"].text, "version": r["change"].version,
             "criteria": r["criteria"], "note": r["note"]}
            for r in services.returned_work(request.user)
        ])


class ResubmitChange(ChangeAction):
    permission_classes = [IsAuthenticated]
    serializer_class = RefineSerializer

    def act(self, pk, user, body):
        return services.resubmit_change(pk, user, body["text"], body["version"])


class ReviewItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = ["id", "question", "answer_format", "choices", "answers", "unchanged_answers", "tags", "overlays",
                  "status", "version", "consensus", "agreement"]


class ItemEditSerializer(VersionSerializer):
    question = serializers.CharField(allow_blank=True)
    answers = serializers.ListField(child=serializers.CharField(allow_blank=True), allow_empty=True)
    question_type = serializers.ListField(child=serializers.CharField(), required=False)
    unchanged_answers = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False,
                                              help_text="Hypo3D Tables 3-4: the answers on the unchanged scene.")
    irrelevant_change = serializers.BooleanField(required=False, allow_null=True,
                                                 help_text="The change does not affect the answer (Table 4).")
    choices = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False,
                                    help_text="A choice item's choices (2-7, as the authoring form takes them); "
                                              "`answers` are then letters of these.")
    tags = serializers.JSONField(required=False, help_text="The family's tags (as the authoring form's picker "
                                                           "sends them: CausalSpatial level and task, ...).")


# The same on one item, answered with the item.
@extend_schema(responses={200: ReviewItemSerializer, 409: CONFLICT})
class ItemAction(ChangeAction):
    answer_serializer = ReviewItemSerializer


class EditItem(ItemAction):
    """Edit with optimistic locking: a stale version gets 409 with the current item."""

    serializer_class = ItemEditSerializer

    def act(self, pk, user, body):
        counterfactual = ({"unchanged_answers": body.get("unchanged_answers"),
                           "irrelevant_change": body.get("irrelevant_change")}
                          if "unchanged_answers" in body or "irrelevant_change" in body else None)
        return services.edit_item(pk, user, body["version"], body["question"], body["answers"],
                                  body.get("question_type"), counterfactual, choices=body.get("choices"),
                                  family_tags=body.get("tags"))


class ApproveItemSerializer(VersionSerializer):
    answers = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False,
                                    help_text="The answer, for an item drafted without one (or a corrected one).")


class ApproveItem(ItemAction):
    """Approve; an item without an answer is a 400 unless `answers` gives it."""

    serializer_class = ApproveItemSerializer

    def act(self, pk, user, body):
        return services.approve_item(pk, user, body["version"], body.get("answers"))


class RejectItem(ItemAction):
    serializer_class = RejectSerializer

    def act(self, pk, user, body):
        return services.reject_item(pk, user, body["version"], body["criteria"], body["note"])


class ItemHistory(APIView):
    """Every revision of the item (question diff, answers and tags before/after) and every decision."""

    permission_classes = [IsReviewer]

    @extend_schema(responses=ItemHistoryEntrySerializer(many=True))
    def get(self, request, pk):
        return Response(services.item_history(get_object_or_404(Item, pk=pk)))


class FilterSerializer(VersionSerializer):
    action = serializers.ChoiceField(choices=[ItemDecision.Action.KEEP, ItemDecision.Action.DROP])
    reason = serializers.CharField(allow_blank=True, required=False, default="")
    question = serializers.CharField(allow_blank=True, required=False)
    answers = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False,
                                    help_text="The answer, for a question drafted without one.")


class FilterQuestion(ItemAction):
    """Bulk filtering of drafted questions: keep (optionally edited, with the answer when it has
    none) or drop with a reason."""

    serializer_class = FilterSerializer

    def act(self, pk, user, body):
        return services.filter_question(pk, user, body["action"], body["version"], body["reason"],
                                        body.get("question"), body.get("answers"))


KEEP_RATES_SCHEMA = {
    "type": "object",
    "description": "Per question type: filtered questions kept and dropped, and the keep rate.",
    "additionalProperties": {
        "type": "object",
        "properties": {"kept": {"type": "integer"}, "dropped": {"type": "integer"},
                       "keep_rate": {"type": "number"}},
        "required": ["kept", "dropped", "keep_rate"],
    },
}


class KeepRates(APIView):
    permission_classes = [IsReviewer]

    @extend_schema(responses={200: KEEP_RATES_SCHEMA})
    def get(self, request, slug):
        return Response(services.keep_rates(get_object_or_404(Benchmark, slug=slug)))


@extend_schema_serializer(component_name="IndependentAnswer")
class AnswerSerializer(serializers.Serializer):
    answer = serializers.CharField(allow_blank=True)


class ConsensusSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    consensus = serializers.CharField()
    agreement = serializers.JSONField(allow_null=True)


class IndependentAnswerView(APIView):
    """One independent answer for consensus (reviewers or answer-only campaign workers)."""

    permission_classes = [IsReviewer]
    serializer_class = AnswerSerializer

    @extend_schema(request=AnswerSerializer, responses={201: ConsensusSerializer, 409: CONFLICT})
    def post(self, request, pk):
        consensus.record_independent_answer(pk, request.user, validated(AnswerSerializer, request)["answer"])
        item = Item.objects.get(pk=pk)
        return Response({"item": pk, "consensus": item.consensus, "agreement": item.agreement}, status=201)


class AdjudicateSerializer(VersionSerializer):
    answers = serializers.ListField(child=serializers.CharField(allow_blank=True), allow_empty=True)


class AdjudicateItem(ItemAction):
    serializer_class = AdjudicateSerializer

    def act(self, pk, user, body):
        return consensus.adjudicate_item(pk, user, body["version"], body["answers"])


class AgreementSummarySerializer(serializers.Serializer):
    n_items = serializers.IntegerField()
    percent_agreement = serializers.FloatField(allow_null=True)
    fleiss_kappa = serializers.FloatField(allow_null=True)
    krippendorff_alpha = serializers.FloatField(allow_null=True, help_text="Nominal, for any rater counts.")
    krippendorff_alpha_ci = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="[low, high]: 95 % bootstrap over items.")
    krippendorff_alpha_ordinal = serializers.FloatField(allow_null=True, help_text="Where every answer is a number.")
    krippendorff_alpha_ordinal_ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)


class AnswererAgreementSerializer(serializers.Serializer):
    answerer = serializers.CharField()
    n_items = serializers.IntegerField(help_text="Items they answered beside others.")
    agreement_with_consensus = serializers.FloatField(help_text="Share equal to the others' most common answer.")


class AnswerOverlapSerializer(serializers.Serializer):
    n_answers = serializers.IntegerField(help_text="Independent answers on the benchmark's items.")
    n_answerers = serializers.IntegerField(help_text="People who gave them.")
    n_items_answered = serializers.IntegerField()
    n_items_overlapping = serializers.IntegerField(help_text="Items two or more people answered: agreement is measured on these.")
    answers_needed = serializers.IntegerField(help_text="Answers per item before consensus is decided.")


class AgreementReportSerializer(serializers.Serializer):
    benchmark = AgreementSummarySerializer()
    by_question_type = serializers.DictField(child=AgreementSummarySerializer())
    by_answerer = AnswererAgreementSerializer(many=True)
    overlap = AnswerOverlapSerializer()
    flagged = serializers.IntegerField()
    adjudicated = serializers.IntegerField()


class AgreementReport(APIView):
    """Percent agreement and Fleiss' kappa per benchmark and per question type."""

    permission_classes = [IsReviewer]

    @extend_schema(responses=AgreementReportSerializer)
    def get(self, request, slug):
        return Response(consensus.agreement_report(get_object_or_404(Benchmark, slug=slug)))


class DuplicatePairSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField(help_text="change or item")
    first_id = serializers.IntegerField()
    second_id = serializers.IntegerField()
    first_text = serializers.CharField(allow_blank=True)
    second_text = serializers.CharField(allow_blank=True)
    similarity = serializers.FloatField()
    resolution = serializers.CharField()


class DedupRunSerializer(serializers.ModelSerializer):
    """A run reads its status, error and finish time from its job (the job's words: queued, running,
    done, failed, cancelled)."""

    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    pairs = serializers.SerializerMethodField()
    status = serializers.ChoiceField(source="job.status", choices=Job.Status.choices, read_only=True,
                                     help_text="Its job's status.")
    progress = serializers.SerializerMethodField(help_text="Percent of the search done (its job's).")
    error = serializers.SerializerMethodField(help_text="Why it failed or was cancelled (its job's message).")
    finished_at = serializers.DateTimeField(source="job.finished_at", read_only=True, allow_null=True,
                                            help_text="When its job ended.")

    class Meta:
        model = DedupRun
        fields = ["id", "benchmark", "threshold", "status", "progress", "job", "n_texts", "error", "created_at",
                  "finished_at", "pairs"]
        read_only_fields = ["job", "n_texts", "created_at"]

    def get_progress(self, run) -> int:
        job = run.job
        if job is not None and job.status == Job.Status.DONE:
            return 100
        return 100 * min(job.done, job.total) // job.total if job is not None and job.total else 0

    def get_error(self, run) -> str:
        job = run.job
        return job.message if job is not None and job.status in (Job.Status.FAILED, Job.Status.CANCELLED) else ""

    @extend_schema_field(DuplicatePairSerializer(many=True, help_text="The first 500 pairs found."))
    def get_pairs(self, run):
        return list(run.pairs.values("id", "kind", "first_id", "second_id", "first_text", "second_text",
                                     "similarity", "resolution")[:500])


class StartDedup(APIView):
    """Start a near-duplicate search (a task on the default queue, reported as the run's `job`:
    /api/v1/jobs/<job>/ and its websocket follow it)."""

    permission_classes = [IsAdmin]
    serializer_class = DedupRunSerializer

    @extend_schema(request=DedupRunSerializer, responses={201: DedupRunSerializer, 503: error(503)})
    def post(self, request):
        run = dedup.start_dedup(created_by=request.user, **validated(DedupRunSerializer, request))
        return Response(DedupRunSerializer(run).data, status=201)


class DedupRunDetail(APIView):
    permission_classes = [IsReviewer]
    serializer_class = DedupRunSerializer

    @extend_schema(responses=DedupRunSerializer)
    def get(self, request, pk):
        return Response(DedupRunSerializer(get_object_or_404(DedupRun.objects.select_related("job"), pk=pk)).data)


class ResolveSerializer(serializers.Serializer):
    keep = serializers.CharField(help_text="first, second or both.")


class ResolvedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    resolution = serializers.CharField()


class ResolveDuplicate(APIView):
    permission_classes = [IsReviewer]
    serializer_class = ResolveSerializer

    @extend_schema(request=ResolveSerializer, responses={200: ResolvedSerializer})
    def post(self, request, pk):
        pair = dedup.resolve_duplicate(pk, request.user, validated(ResolveSerializer, request)["keep"])
        return Response({"id": pair.pk, "resolution": pair.resolution})


class StartPolishSerializer(serializers.Serializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    model = serializers.CharField(help_text="Id of an OpenAI-compatible model.")


class PolishQueuedSerializer(serializers.Serializer):
    queued = serializers.IntegerField(help_text="Changes and items queued.")
    job = serializers.IntegerField(help_text="The pass's progress: /api/v1/jobs/<job>/.")


class StartPolish(APIView):
    """Queue a grammar pass over a benchmark's approved changes and items, one job (while one runs, that one)."""

    permission_classes = [IsAdmin]
    serializer_class = StartPolishSerializer

    @extend_schema(request=StartPolishSerializer, responses={202: PolishQueuedSerializer, 503: error(503)})
    def post(self, request):
        v = validated(StartPolishSerializer, request)
        job = polish.start_polish(v["benchmark"], v["model"], request.user)
        return Response({"queued": job.total, "job": job.pk}, status=202)


class PolishReviewedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    change = ChangeSerializer()


class ReviewPolish(APIView):
    """Accept or revert a model's polish of a change (optimistic lock on the change's version)."""

    permission_classes = [IsReviewer]
    serializer_class = VersionSerializer

    @extend_schema(
        parameters=[OpenApiParameter("action", str, OpenApiParameter.PATH, enum=["accept", "revert"])],
        request=VersionSerializer, responses={200: PolishReviewedSerializer, 409: CONFLICT},
    )
    def post(self, request, pk, action):
        done = polish.review_polish(pk, request.user, action, validated(VersionSerializer, request)["version"])
        return Response({"id": done.pk, "status": done.status, "change": ChangeSerializer(done.change).data})
