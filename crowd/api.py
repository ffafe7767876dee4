"""Crowd-platform webhooks: Prolific's, signed by the workspace secret, each event handled once."""

import json

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import error
from core.errors import DomainError
from core.validation import text_problem

from . import services
from .models import WebhookEvent


class WebhookHandledSerializer(serializers.Serializer):
    handled = serializers.BooleanField(help_text="False for an event already handled (a redelivery).")


class ProlificWebhook(APIView):
    """Signed by the workspace secret; each event id is handled once."""

    authentication_classes = []
    permission_classes = [AllowAny]

    @extend_schema(
        request={"application/json": OpenApiTypes.OBJECT},
        parameters=[OpenApiParameter("X-Prolific-Request-Signature", str, OpenApiParameter.HEADER,
                                     required=True, description="HMAC of the body with the secret.")],
        responses={200: WebhookHandledSerializer,
                   403: error(403, "The signature does not match (or no secret is configured).")},
    )
    def post(self, request):
        body = request.body
        services.verify_prolific_signature(body, request.headers.get("X-Prolific-Request-Signature", ""))
        try:
            event = json.loads(body)
        except ValueError:
            raise DomainError("The body is not JSON.", field="body") from None
        if not isinstance(event, dict):
            raise DomainError("The body must be a JSON object.", field="body")
        _check_event_id(event)
        handled = services.handle_prolific_event(event)
        return Response({"handled": handled})


def _check_event_id(event: dict) -> None:
    """The event id as handle_prolific_event reads it must fit its column (400, not a database error)."""
    event_id = event.get("event_id") or event.get("id")
    if event_id is None:
        return  # handle_prolific_event refuses it by name
    if not isinstance(event_id, str | int) or isinstance(event_id, bool):
        raise DomainError("Must be a string.", field="event_id")
    event_id = str(event_id)
    limit = WebhookEvent._meta.get_field("event_id").max_length
    if len(event_id) > limit:
        raise DomainError(f"Must be at most {limit} characters.", field="event_id")
    reason = text_problem(event_id)
    if reason:
        raise DomainError(f"The event id {reason}.", field="event_id")
