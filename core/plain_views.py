"""One view per URL for the requests a crowd page sends every few seconds (autosave, an evaluator's
current item and answer): a DRF view whose dispatch takes a fast path for the page's own request
(its one method, signed in by session, no Authorization header), which skips DRF's request wrapper,
negotiation, parsers and renderers. Both paths validate the body with the same serializer and call
the same `respond`; CSRF is checked as DRF's session authentication checks it and errors keep the
API's shape. Everything else (token clients, other methods) goes through DRF as usual."""

import json
from functools import cache

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse, RawPostDataException
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import DomainError
from core.validation import json_body_problem


class PageFastPathView(APIView):
    """Subclasses name `page_method`, the `serializer_class` if the request has a body, implement
    `respond(user, data, **url_kwargs) -> (payload, status)`, and define the DRF method (documented
    with extend_schema) as `return self.respond_through_drf(request, **kwargs)`."""

    page_method = "GET"
    serializer_class = None

    def respond(self, user, data, **kwargs) -> tuple[dict, int]:
        raise NotImplementedError

    def respond_through_drf(self, request, **kwargs) -> Response:
        payload, status = self.respond(request.user, self._validated(request.data), **kwargs)
        return Response(payload, status=status)

    def dispatch(self, request, *args, **kwargs):
        if request.method != self.page_method or "HTTP_AUTHORIZATION" in request.META:
            return super().dispatch(request, *args, **kwargs)
        if not request.user.is_authenticated:
            return JsonResponse({"detail": "Authentication credentials were not provided."}, status=403)
        refused = _body_refusal(request) if self.serializer_class is not None else None
        if refused is not None:
            return refused
        try:
            SessionAuthentication().enforce_csrf(request)
            data = self._validated(_json_body(request)) if self.serializer_class is not None else None
            payload, status = self.respond(request.user, data, **kwargs)
        except PermissionDenied as exc:
            return JsonResponse({"detail": str(exc.detail)}, status=403)
        except DomainError as exc:
            return JsonResponse(exc.as_dict(), status=exc.status_code)
        except ValidationError as exc:
            return JsonResponse(exc.detail, status=400, safe=False)
        return JsonResponse(payload, status=status)

    def _validated(self, body):
        """The body checked by `serializer_class` (a ValidationError answers 400 on either path)."""
        if self.serializer_class is None:
            return None
        return _checker(self.serializer_class).run_validation(body)


@cache
def _checker(serializer_class):
    """One unbound instance per serializer, reused: building a serializer copies its fields, most of
    the cost of checking a small body (0.6 of 0.7 ms), and checking keeps no state on the instance."""
    return serializer_class()


def _json_body(request):
    """The page's body, read as JSON whatever its content type (the request guard or _body_refusal
    has already refused what is not)."""
    try:
        return json.loads(request.body or b"{}")
    except ValueError as exc:
        raise DomainError(f"JSON parse error - {exc}", field="detail") from None


def _body_refusal(request) -> JsonResponse | None:
    """The request guard's answer (config/middleware.py) for a body it did not read as JSON
    (a form or binary content type): the fast path parses any body as JSON."""
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
