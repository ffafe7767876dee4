"""/api/v1/history/<model>/<id>/: a row's status history, for reviewers and admins (core/history.py).
Annotators and evaluators never see it: it would show them other people's work moving."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import error
from core.errors import NotFound
from core.history import changes_of, tracked_model
from core.models import StatusChange
from core.permissions import IsReviewer


class StatusChangeSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", default=None, allow_null=True,
                                  help_text="Who made the change; empty for background work.")

    class Meta:
        model = StatusChange
        fields = ["from_status", "to_status", "at", "actor"]


class StatusHistory(APIView):
    """Every status the row had, oldest first: the one it was created with (from_status empty), then
    each change, with when and by whom. `model` is the model's name: assignment, evalsession, run, …"""

    permission_classes = [IsReviewer]

    @extend_schema(responses={200: StatusChangeSerializer(many=True), 404: error(404)})
    def get(self, request, model, pk):
        tracked = tracked_model(model)
        if tracked is None:
            raise NotFound(f"No status history is kept for '{model}'.", field="model")
        changes = changes_of(tracked, pk)
        if not changes and not tracked.objects.filter(pk=pk).exists():
            raise NotFound(f"No such {model}.", field="id")
        return Response(StatusChangeSerializer(changes, many=True).data)
