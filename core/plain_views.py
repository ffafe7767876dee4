"""Plain Django views for the requests a crowd page sends every few seconds (autosave, an
evaluator's current item and answer): a signed-in page skips DRF's negotiation, parsers and
renderers. CSRF is checked as DRF's session authentication checks it and errors keep the API's
shape; token clients go on to the DRF view."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse, RawPostDataException
from django.views.decorators.csrf import csrf_exempt
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import PermissionDenied

from core.errors import DomainError
from core.validation import json_body_problem


def page_endpoint(method: str, token_view):
    """Wrap `handle(request, pk) -> JsonResponse` as the plain view of `method`; a request with an
    Authorization header goes to `token_view` instead. DomainErrors raised by `handle` become the
    API's error answer."""

    def wrap(handle):
        @csrf_exempt  # checked below
        def view(request, pk):
            if "HTTP_AUTHORIZATION" in request.META:
                return token_view(request, pk=pk)
            if request.method != method:
                return JsonResponse({"detail": f'Method "{request.method}" not allowed.'}, status=405)
            if not request.user.is_authenticated:
                return JsonResponse({"detail": "Authentication credentials were not provided."}, status=403)
            refused = _body_refusal(request)
            if refused is not None:
                return refused
            try:
                SessionAuthentication().enforce_csrf(request)
                return handle(request, pk)
            except PermissionDenied as exc:
                return JsonResponse({"detail": str(exc.detail)}, status=403)
            except DomainError as exc:
                return JsonResponse(exc.as_dict(), status=exc.status_code)

        view.__doc__ = handle.__doc__
        # The API schema documents the DRF view, which answers the same shapes (drf-spectacular reads `cls`).
        view.cls, view.initkwargs = token_view.cls, token_view.initkwargs
        return view

    return wrap


def _body_refusal(request) -> JsonResponse | None:
    """The request guard's answer (config/middleware.py) for a body it did not read as JSON
    (a form or binary content type): these views parse any body as JSON."""
    if getattr(request, "json_checked", False):
        return None
    try:
        problem = json_body_problem(request.body)
    except RequestDataTooBig:
        return JsonResponse({"body": [f"is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes a request "
                                      "may carry"]}, status=400)
    except RawPostDataException:  # a large multipart form, already streamed: not the JSON these views take
        return JsonResponse({"body": ["must be a JSON object"]}, status=400)
    return JsonResponse({problem[0]: [problem[1]]}, status=400) if problem else None
