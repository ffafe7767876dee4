from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Benchmark
from benchmarks.permissions import IsAdmin
from benchmarks.viewer import scene_viewer_data

from . import services


def session_state(session, response) -> dict:
    """What the participant's page may know: never the gold answer."""
    from django.utils import timezone

    state = {
        "session": session.pk,
        "status": session.status,
        "server_now": timezone.now().isoformat(),
        "session_deadline": session.deadline.isoformat(),
        "completion_code": session.completion_code or None,
        "item": None,
    }
    if response is not None:
        item = response.item
        change = item.change
        state["item"] = {
            "id": item.pk,
            "question": item.question,
            "answer_format": item.answer_format,
            "choices": item.choices,
            "context_change": change.text if change else None,
            "shown_at": response.shown_at.isoformat(),
            "deadline": response.deadline.isoformat(),
            "scene": scene_viewer_data(item.scene) if item.scene else None,
        }
    return state


class StudyCreateSerializer(serializers.Serializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    name = serializers.CharField(allow_blank=True)
    items = serializers.ListField(child=serializers.IntegerField(), allow_empty=True)
    seconds_per_item = serializers.IntegerField(default=120)
    seconds_per_session = serializers.IntegerField(default=1800)


class StudyCreate(APIView):
    permission_classes = [IsAdmin]
    serializer_class = StudyCreateSerializer

    def post(self, request):
        data = StudyCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        study = services.create_study(
            v["benchmark"], v["name"], v["items"], request.user, v["seconds_per_item"], v["seconds_per_session"]
        )
        return Response({"id": study.pk, "name": study.name, "n_items": study.items.count()}, status=201)


class StudyResults(APIView):
    permission_classes = [IsAdmin]

    def get(self, request, pk):
        from .models import Study

        study = Study.objects.filter(pk=pk).first()
        if study is None:
            return Response({"study": ["No such study."]}, status=404)
        return Response(services.study_results(study))


class AnswerSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    answer = serializers.CharField(allow_blank=True)


class SessionCurrent(APIView):
    """The participant's current item (its clock starts when first shown)."""

    def get(self, request, pk):
        session, response = services.current_item(pk, request.user)
        return Response(session_state(session, response))


class SessionAnswer(APIView):
    serializer_class = AnswerSerializer

    def post(self, request, pk):
        data = AnswerSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.answer_item(pk, request.user, data.validated_data["item"], data.validated_data["answer"])
        session, response = services.current_item(pk, request.user)
        return Response(session_state(session, response), status=201)
