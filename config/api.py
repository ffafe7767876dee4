"""API-wide error shape: every 4xx carries the field and the reason."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from benchmarks.errors import DomainError

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
