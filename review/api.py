from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import ContextChange
from benchmarks.permissions import IsReviewer

from . import services


class ChangeSerializer(serializers.ModelSerializer):
    scene = serializers.CharField(source="scene.external_id")
    revisions = serializers.SerializerMethodField()

    class Meta:
        model = ContextChange
        fields = ["id", "scene", "change_type", "raw_text", "refined_text", "status", "version", "revisions"]

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


class ReviewQueue(APIView):
    permission_classes = [IsReviewer]

    def get(self, request):
        return Response(ChangeSerializer(services.review_queue(request.user)[:100], many=True).data)


class ChangeDetail(APIView):
    permission_classes = [IsReviewer]

    def get(self, request, pk):
        change = ContextChange.objects.filter(pk=pk).first()
        if change is None:
            return Response({"change": ["No such change."]}, status=404)
        return Response(ChangeSerializer(change).data)


class RefineChange(APIView):
    permission_classes = [IsReviewer]
    serializer_class = RefineSerializer

    def post(self, request, pk):
        data = RefineSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        change = services.refine_change(pk, request.user, data.validated_data["text"], data.validated_data["version"])
        return Response(ChangeSerializer(change).data)


class ApproveChange(APIView):
    permission_classes = [IsReviewer]
    serializer_class = VersionSerializer

    def post(self, request, pk):
        data = VersionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        change = services.approve_change(pk, request.user, data.validated_data["version"])
        return Response(ChangeSerializer(change).data)


class RejectChange(APIView):
    permission_classes = [IsReviewer]
    serializer_class = RejectSerializer

    def post(self, request, pk):
        data = RejectSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        change = services.reject_change(pk, request.user, v["version"], v["criteria"], v["note"])
        return Response(ChangeSerializer(change).data)


class AuthorQuestion(APIView):
    permission_classes = [IsReviewer]
    serializer_class = QuestionSerializer

    def post(self, request, pk):
        data = QuestionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        item = services.author_question(pk, request.user, v["question"], v["answer"], v["question_type"])
        return Response({"id": item.pk, "question": item.question, "answers": item.answers, "tags": item.tags},
                        status=201)
