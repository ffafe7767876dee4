"""Idempotency-Key on the API's create endpoints: a client may send the same POST again (a double
click, a retry after a timeout, several tabs) and the write happens once.

`@idempotent` on a DRF view's `post`: a request with an `Idempotency-Key` header is recorded under
(user, key, path) with a fingerprint of its method, path and body, in the same transaction as the
write itself. A repeat with the same key and the same body gets the stored answer again (status and
body, header `Idempotent-Replayed: true`); a repeat that arrives while the first is still running
waits for it (the unique index holds it) and then gets that answer; the same key with another body,
or on another endpoint with the same path, answers 409. Only successful answers are stored: a
refused request (4xx) or a failure leaves nothing, so it can be sent again with the same key. Keys
are kept for 24 hours. Requests without the header behave as before."""

import functools
import hashlib
import json
import re
import uuid
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.http import HttpResponse, HttpResponseRedirect
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder

from core.errors import Conflict, DomainError

from .models import IdempotentRequest

HEADER = "Idempotency-Key"
KEEP = timedelta(hours=24)
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")  # visible ASCII, as a header carries it

PARAMETER = OpenApiParameter(
    HEADER, OpenApiTypes.STR, OpenApiParameter.HEADER, required=False,
    description="Any unique string (a UUID) chosen by the client for this write: sending the same request "
    "again with the same key within 24 hours returns the first answer instead of writing twice; the same "
    "key with another body answers 409.",
)


def fingerprint(request) -> str:
    """The request as the client meant it: method, path with query, and the parsed body."""
    data = request.data
    if hasattr(data, "lists"):  # a form or multipart body (QueryDict)
        data = {key: values for key, values in data.lists()}
    body = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(f"{request.method} {request.get_full_path()}\n{body}".encode()).hexdigest()


def _key(request) -> str | None:
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not _KEY.match(key):
        raise DomainError("Use 1-255 visible ASCII characters (a UUID, for instance).", field=HEADER)
    return key


def replay(record: IdempotentRequest, fingerprint_now: str) -> Response:
    if record.fingerprint != fingerprint_now:
        raise Conflict("This Idempotency-Key was already used for another request; use a new key for a new write.",
                       field=HEADER)
    body = json.loads(record.body) if record.body else None
    return Response(body, status=record.status, headers={"Idempotent-Replayed": "true"})


def idempotent(view_method):
    """Decorate an APIView's `post` (after authentication and permissions, which DRF runs first)."""

    @functools.wraps(view_method)
    def post(self, request, *args, **kwargs):
        key = _key(request)
        if key is None or not request.user.is_authenticated:
            return view_method(self, request, *args, **kwargs)
        path = request.path[:300]
        scope = {"user": request.user, "key": key, "path": path}
        sent = fingerprint(request)
        with transaction.atomic():
            IdempotentRequest.objects.filter(**scope, created_at__lt=timezone.now() - KEEP).delete()
            try:
                with transaction.atomic():
                    # Waits here while a request with the same key is being answered, then fails.
                    record = IdempotentRequest.objects.create(**scope, fingerprint=sent)
            except IntegrityError:
                record = IdempotentRequest.objects.filter(**scope).first()
                if record is None:  # the first one gave up meanwhile
                    raise Conflict("A request with this Idempotency-Key just failed; send it again.",
                                   field=HEADER) from None
                return replay(record, sent)
            response = view_method(self, request, *args, **kwargs)
            if not 200 <= response.status_code < 400:
                record.delete()  # a refusal is not kept: the client may fix the request and send it again
                return response
            record.status = response.status_code
            record.body = json.dumps(response.data, cls=JSONEncoder) if response.data is not None else ""
            record.save(update_fields=["status", "body"])
        return response

    return extend_schema(parameters=[PARAMETER])(post)


FORM_FIELD = "form_key"


def new_form_key() -> str:
    """A key for one rendering of a page form (a hidden `form_key` field)."""
    return uuid.uuid4().hex


def once_per_form(request, write):
    """A page form's POST carrying `form_key` writes once: a second submission of the same rendering (a
    double click, a resent form) is sent where the first one went. `write()` returns the response; only
    a redirect (the write happened) is kept, so a form refused with 400 can be corrected and sent again."""
    key = request.POST.get(FORM_FIELD, "")
    if not _KEY.match(key) or not request.user.is_authenticated:
        return write()
    scope = {"user": request.user, "key": f"form:{key}", "path": request.path[:300]}
    with transaction.atomic():
        try:
            with transaction.atomic():
                record = IdempotentRequest.objects.create(**scope, fingerprint="form")
        except IntegrityError:
            record = IdempotentRequest.objects.filter(**scope).exclude(body="").first()
            if record is None:  # the first submission is still being answered
                return HttpResponse("This form is being sent already; wait for the page to load.",
                                    status=409, content_type="text/plain")
            return HttpResponseRedirect(record.body)
        response = write()
        if response.status_code not in (301, 302, 303):
            record.delete()
            return response
        record.status, record.body = response.status_code, response["Location"]
        record.save(update_fields=["status", "body"])
    return response


def purge_expired() -> int:
    """Drop keys older than 24 hours (each request also drops its own expired key)."""
    return IdempotentRequest.objects.filter(created_at__lt=timezone.now() - KEEP).delete()[0]
