"""Plain Django views for the requests a crowd page sends every few seconds (autosave, an
evaluator's current item and answer): a signed-in page skips DRF's negotiation, parsers and
renderers. CSRF is checked as DRF's session authentication checks it and errors keep the API's
shape; token clients go on to the DRF view."""

from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import PermissionDenied

from .errors import DomainError


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
            try:
                SessionAuthentication().enforce_csrf(request)
                return handle(request, pk)
            except PermissionDenied as exc:
                return JsonResponse({"detail": str(exc.detail)}, status=403)
            except DomainError as exc:
                return JsonResponse(exc.as_dict(), status=exc.status_code)

        view.__doc__ = handle.__doc__
        return view

    return wrap
