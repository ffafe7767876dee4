"""Crowd platforms over the API: Prolific's webhook (signed by the workspace secret, each event handled
once) and, for admins, running a campaign on Prolific (crowd.prolific_services)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import error, validated
from core.jobs import job_state
from core.jobs_api import JobSerializer
from core.permissions import IsAdmin

from . import prolific_jobs, prolific_services, webhooks
from .prolific import REJECTION_CATEGORIES


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


class ProlificActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(["publish", "sync", "review", "pay", "message", "setup_hooks"])
    scope = serializers.CharField(max_length=100, required=False, default="",
                                  help_text='What runs on Prolific: "campaign:<id>".')
    dry_run = serializers.BooleanField(default=False, help_text="Answer the requests it would send; send none.")
    site_url = serializers.URLField(required=False, default="", help_text="publish: this site's public address "
                                                                           "(default: the address of this request).")
    reject_message = serializers.CharField(required=False, default="", max_length=2000)
    rejection_category = serializers.ChoiceField([""] + list(REJECTION_CATEGORIES), required=False, default="")
    participant_ids = serializers.ListField(child=serializers.CharField(max_length=100), required=False,
                                            default=list, max_length=1000)
    body = serializers.CharField(required=False, default="", max_length=5000)
    workspace_id = serializers.CharField(required=False, default="", max_length=100)
    target_url = serializers.URLField(required=False, default="")


class ProlificAction(APIView):
    """Admins run a campaign on Prolific: publish, sync, review, pay, message, setup_hooks. Sync, review
    and pay (unless a dry run) start a job and answer it (202): /api/v1/jobs/<id>/ follows it."""

    permission_classes = [IsAdmin]

    @extend_schema(
        request=ProlificActionSerializer,
        responses={200: OpenApiTypes.OBJECT, 202: JobSerializer,
                   409: error(409, "Already published, or PROLIFIC_API_TOKEN is not set."),
                   502: error(400, "Prolific refused the request or did not answer.")},
    )
    def post(self, request):
        data = validated(ProlificActionSerializer, request)
        scope, dry_run = data["scope"], data["dry_run"]
        if data["action"] in prolific_jobs.KINDS and not dry_run:
            job = prolific_jobs.start_prolific_job(data["action"], scope, request.user, options={
                "reject_message": data["reject_message"], "rejection_category": data["rejection_category"]})
            return Response(JobSerializer(job_state(job)).data, status=202)
        calls = {
            "publish": lambda: prolific_services.publish(scope, data["site_url"] or request.build_absolute_uri("/"),
                                                         dry_run),
            "sync": lambda: prolific_services.sync_submissions(scope, dry_run=True),
            "review": lambda: prolific_services.review(scope, data["reject_message"], data["rejection_category"],
                                                       dry_run=True),
            "pay": lambda: prolific_services.pay_bonuses(scope, dry_run=True),
            "message": lambda: prolific_services.message(scope, data["participant_ids"], data["body"], dry_run),
            "setup_hooks": lambda: prolific_services.set_up_hooks(data["workspace_id"], data["target_url"], dry_run),
        }
        return Response(calls[data["action"]]())
