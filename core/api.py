"""API-wide error shape: every 4xx carries the field and the reason."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import JsonResponse
from django.views import defaults
from drf_spectacular import openapi as spectacular_openapi
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import DomainError

# --- the task queue unreachable: 503, not 500 ----------------------------------------------------

BROKER_RETRY_AFTER_S = 10
BROKER_DOWN = "The task queue cannot be reached (Redis is down or restarting). Try again in a few seconds."


def broker_unavailable(exc) -> bool:
    """An error from sending a task while the broker cannot be reached. kombu raises its OperationalError
    for a publish that failed after its retries; a raw redis error can escape from a connection pool."""
    from kombu.exceptions import OperationalError
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return isinstance(exc, OperationalError | RedisConnectionError | RedisTimeoutError)


class BrokerUnavailableMiddleware:
    """Pages that enqueue (launching a run, an export, a deduplication) answer 503 with Retry-After
    too, instead of a bare 500; the API's own handler below does the same for API views."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        from django.http import JsonResponse
        from django.shortcuts import render

        if not broker_unavailable(exception):
            return None
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": BROKER_DOWN}, status=503)
        else:
            response = render(request, "frontend/error.html", {"message": BROKER_DOWN}, status=503)
        response["Retry-After"] = str(BROKER_RETRY_AFTER_S)
        return response


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return Response(exc.as_dict(), status=exc.status_code)
    if broker_unavailable(exc):
        return Response({"detail": BROKER_DOWN}, status=status.HTTP_503_SERVICE_UNAVAILABLE,
                        headers={"Retry-After": str(BROKER_RETRY_AFTER_S)})
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        return Response(detail, status=status.HTTP_400_BAD_REQUEST)
    return drf_exception_handler(exc, context)


def validated(serializer_class, request) -> dict:
    """The request's body as `serializer_class` checks it; a body that fails is a 400 naming each field at fault."""
    body = serializer_class(data=request.data)
    body.is_valid(raise_exception=True)
    return body.validated_data


def not_found(request, exception=None):
    """handler404: an API path that matches no route (a malformed id or slug) answers the API's JSON
    404; every other path gets the page."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


# --- the shape in the schema (drf-spectacular) ----------------------------------------------------


class ApiError(serializers.Serializer):
    """An error answer: each field at fault with its reasons (`{field: [reason, ...]}`; a list or object
    field's reasons nest by index or key). Authentication, permission, not-found and method errors carry
    one `detail` string; a stale write (409) carries the `current` state beside the reasons."""


class ApiErrorSchema(OpenApiSerializerExtension):
    target_class = ApiError

    def map_serializer(self, auto_schema, direction):
        return {
            "type": "object",
            "description": ApiError.__doc__,
            "properties": {
                "detail": {"type": "string", "description": "The reason, when no one field is at fault."},
                "current": {"type": "object", "additionalProperties": {},
                            "description": "409 on a stale version: the state saved since."},
                "completion_code": {"type": "string", "description": "409 on a submitted assignment."},
            },
            "additionalProperties": {
                "oneOf": [{"type": "array", "items": {}}, {"type": "object", "additionalProperties": {}},
                          {"type": "string"}],
            },
            "example": {"text": ["The refined text is empty or too short to be a description."]},
        }


ERROR_DESCRIPTIONS = {
    400: "The request is not valid: each field at fault with its reasons.",
    403: "Not signed in, or the caller's role or ownership does not allow this.",
    404: "No such object (or not one the caller may see).",
    409: "A conflict: a stale version, a duplicate, or a state that does not allow this.",
    415: "The body's content type is not one this endpoint reads.",
    429: "Too many requests; try again later.",
    503: "The task queue cannot be reached: nothing was started; try again after `Retry-After` seconds.",
}


def error(code: int, description: str | None = None) -> OpenApiResponse:
    """The documented error answer for `code` (an `extend_schema(responses=...)` entry)."""
    return OpenApiResponse(ApiError, description=description or ERROR_DESCRIPTIONS[code])


class AutoSchema(spectacular_openapi.AutoSchema):
    """Every operation documents the errors every view can give: 400 (input, including what the
    request guard in config/middleware.py refuses for any endpoint), 403 (authentication and roles),
    404 where the path names an object (or a page of a list), 415 where a body is sent, 409 where an
    Idempotency-Key is taken. A view adds others (409, 503) with `extend_schema(responses={409: error(409)})`."""

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        codes = [400, 403]
        if "{" in self.path or (self.method == "GET" and self._get_paginator() and self._is_list_view()):
            codes.append(404)  # no such object, or a page past the last
        if self.method in ("POST", "PUT", "PATCH"):
            codes.append(415)  # a body in a content type the view's parsers do not read
        if any(getattr(p, "name", None) == "Idempotency-Key" for p in self.get_override_parameters()):
            codes.append(409)  # the key was used for another request (core.idempotency)
        for code in codes:
            documented = self._get_response_for_code(error(code), str(code), direction=direction)
            responses.setdefault(str(code), documented)
        return dict(sorted(responses.items()))
