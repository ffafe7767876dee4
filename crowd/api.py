"""Crowd-platform webhooks: Prolific's, signed by the workspace secret, each event handled once."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import error

from . import webhooks


class WebhookHandledSerializer(serializers.Serializer):
    handled = serializers.BooleanField(help_text="False for an event already handled (a redelivery).")


class ProlificWebhook(APIView):
    """Prolific's deliveries, verified and de-duplicated as its docs say (webhooks.py)."""

    authentication_classes = []
    permission_classes = [AllowAny]

    @extend_schema(
        request={"application/json": OpenApiTypes.OBJECT},
        parameters=[
            OpenApiParameter(webhooks.SIGNATURE, str, OpenApiParameter.HEADER, required=True,
                             description="base64(HMAC-SHA256(workspace secret, request timestamp + body))."),
            OpenApiParameter(webhooks.REQUEST_TIMESTAMP, str, OpenApiParameter.HEADER, required=True,
                             description="UNIX time the request was sent; signed with the body."),
            OpenApiParameter(webhooks.EVENT_ID, str, OpenApiParameter.HEADER, required=True,
                             description="The event's id, the same on every retry: handled once."),
            OpenApiParameter(webhooks.EVENT_TIMESTAMP, str, OpenApiParameter.HEADER, required=False,
                             description="UNIX time the event was sent: an older event never overwrites a newer one."),
        ],
        responses={200: WebhookHandledSerializer,
                   400: error(400, "The delivery lacks X-Event-ID, or its body is not a JSON object."),
                   403: error(403, "The signature does not match (or no secret is configured).")},
    )
    def post(self, request):
        return Response({"handled": webhooks.receive(request.body, request.headers)})
