"""One guard in front of every view: input PostgreSQL or Python cannot take is refused with 400 and the API's error shape, `{"<field>": ["<reason>"]}`, instead of failing deep in a view.

A body declaring a charset other than UTF-8 (JSON, form, multipart or text) is refused with 415
before anything is parsed: the guard checks what the parsers will produce, and with UTF-8 only they
produce what it read.

Refused: a NUL character or a lone surrogate in a query parameter, a form field (names too) or any
string of a JSON body (keys too), or inside a form or multipart field that is itself JSON, or in a
small uploaded .json/.jsonl file; JSON nested deeper than MAX_JSON_DEPTH (Python's parser gives up
with RecursionError near 1,000 levels, and the walk of a deep value by DRF or the scorer too); a
JSON body over DATA_UPLOAD_MAX_MEMORY_SIZE (Django's own limit, which DRF's JSON parser skips: it
reads the stream), and a form over it (Django's RequestDataTooBig), each named as the `body` at fault.
Binary bodies (the local upload stand-in's PUT, octet-stream), bodies with no type or a text type
over the limit, and multipart files other than small JSON ones are not read here; multipart fields
are. The plain views (core/plain_views.py) parse their body as JSON whatever its content type: they
check a body this guard did not read as JSON (`request.json_checked`)."""

import codecs
import io
from urllib.parse import unquote_to_bytes

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import JsonResponse, QueryDict
from django.http.multipartparser import MultiPartParserError

from core.validation import field_name, json_body_problem, text_problem

from . import middleware_render

FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
# The charsets a body may declare: UTF-8 (and its subset ASCII). Any other (utf-7, unicode_escape,
# utf-16, latin-1...) would have the parsers decode the body otherwise than this guard read it, so a
# harmless "\\u0000" could become a NUL after the check: refused with 415 instead.
ACCEPTED_CHARSETS = {"utf-8", "ascii"}


def _refuse(field: str, reason: str, status: int = 400) -> JsonResponse:
    return JsonResponse({field: [reason]}, status=status)


def _too_big() -> JsonResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return _refuse("body", f"is larger than the {limit} bytes a request may carry")


def _embedded_json_problem(key: str, text: str) -> tuple[str, str] | None:
    """A value that is itself JSON (a form's `content`, `config`, `options`...: views json.loads them)
    is checked as a JSON body is: an escaped NUL or lone surrogate, or deep nesting, inside it."""
    if not text.lstrip().startswith(("{", "[", '"')):
        return None
    problem = json_body_problem(text.encode("utf-8", "surrogatepass"))
    if problem is None:
        return None
    inner, reason = problem
    return field_name((key,)) + ("" if inner == "body" else f".{inner}"), reason


def _encoded_problem(raw: bytes, where: str) -> tuple[str, str] | None:
    """A query string or form body whose bytes, once %-decoded, are not UTF-8: Django would decode them
    with replacement characters (a lone surrogate's %ED%A0%80 becomes "\ufffd\ufffd\ufffd") and a view
    would store the garbled text, so it is refused as sent."""
    for part in raw.replace(b"+", b" ").split(b"&"):
        try:
            unquote_to_bytes(part).decode("utf-8")
        except UnicodeDecodeError:
            name = unquote_to_bytes(part.split(b"=", 1)[0]).decode("utf-8", "backslashreplace")[:40]
            return field_name((name,)) if "=" in part.decode("latin-1") else where, "is not UTF-8 text"
    return None


def _query_bytes(request) -> bytes:
    """The query string as sent: WSGI gives it decoded as latin-1 (PEP 3333), ASGI as UTF-8."""
    query = request.META.get("QUERY_STRING", "")
    try:
        return query.encode("latin-1")
    except UnicodeEncodeError:
        return query.encode("utf-8", "surrogatepass")


def _query_problem(query: QueryDict) -> tuple[str, str] | None:
    for key, values in query.lists():
        reason = text_problem(key)
        if reason:
            return field_name((key,)), reason
        for value in values:
            if not isinstance(value, str):
                continue
            reason = text_problem(value)
            if reason:
                return field_name((key,)), reason
            problem = _embedded_json_problem(key, value)
            if problem:
                return problem
    return None


def _json_files_problem(files) -> tuple[str, str] | None:
    """Uploaded .json/.jsonl files the views parse (item files, scene metadata), each line of a .jsonl
    as a document; read back to the start for the view. Larger ones are the importers' to bound."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    for key, upload in files.items():
        name = (upload.name or "").lower()
        if not name.endswith((".json", ".jsonl")) or (limit is not None and upload.size > limit):
            continue
        content = upload.read()
        upload.seek(0)
        documents = content.splitlines() if name.endswith(".jsonl") else [content]
        for document in documents:
            problem = json_body_problem(document)
            if problem:
                inner, reason = problem
                return field_name((key,)) + ("" if inner == "body" else f".{inner}"), reason
    return None


def _fits(request) -> bool:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0  # as Django's request reads it
    return limit is None or length <= limit


def _charset_problem(request) -> str | None:
    """Why the body's declared charset is refused (415), or None."""
    charset = (getattr(request, "content_params", None) or {}).get("charset")
    if charset is None:
        return None
    try:
        name = codecs.lookup(charset.strip().strip('"')).name
    except (LookupError, ValueError):
        name = None
    if name in ACCEPTED_CHARSETS:
        return None
    shown = charset.encode("ascii", "backslashreplace").decode("ascii")[:40]
    return f"is declared as charset {shown}; send it as UTF-8 (charset=utf-8, or no charset)"


def _body_problem(request) -> tuple[str, str] | None:
    content_type = request.content_type or ""
    if content_type == MULTIPART:
        if request.method == "POST":
            if _fits(request):
                request.body  # noqa: B018 (small: read into memory, so a view may still read request.body)
            return _query_problem(request.POST) or _json_files_problem(request.FILES)
        if not _fits(request):
            return None  # DRF refuses a multipart body over the limit itself
        # Django parses only a POST's multipart; DRF parses the others' (PUT, PATCH) from the body read here.
        fields, files = request.parse_file_upload(request.META, io.BytesIO(request.body))
        return _query_problem(fields) or _json_files_problem(files)
    if content_type == FORM:
        if _fits(request) and (problem := _encoded_problem(request.body, "body")):
            return problem
        # Django parses only a POST's form; DRF parses the others' (PUT, PATCH) itself.
        return _query_problem(request.POST if request.method == "POST" else QueryDict(request.body))
    if "json" in content_type or ((not content_type or content_type.startswith("text/")) and _fits(request)):
        # JSON is read whatever its size (DRF would parse any size); a body with no type or a text
        # type only if it fits: a large one is a raw upload (benchmarks' local upload stand-in) or
        # is refused by its view (DRF has no parser for it; the plain views check it themselves).
        request.json_checked = True
        return json_body_problem(request.body)
    return None


class InputGuardMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        middleware_render.install()  # text already stored that UTF-8 cannot carry is shown escaped

    def __call__(self, request):
        refusal = self.refusal(request)
        return refusal if refusal is not None else self.get_response(request)

    @staticmethod
    def refusal(request) -> JsonResponse | None:
        """The 400 answer for this request, or None to let it through."""
        reason = text_problem(request.path)
        if reason:
            return _refuse("path", reason)
        has_body = request.method not in ("GET", "HEAD", "OPTIONS") or request.META.get("CONTENT_LENGTH")
        if has_body:
            charset = _charset_problem(request)
            if charset:
                return _refuse("body", charset, status=415)
        try:
            problem = (_encoded_problem(_query_bytes(request), "query")
                       or _query_problem(request.GET))
            if not problem and has_body:
                problem = _body_problem(request)
        except RequestDataTooBig:
            return _too_big()
        except (MultiPartParserError, SuspiciousOperation) as exc:  # too many fields or files, bad multipart
            return _refuse("body", str(exc) or "could not be read")
        return _refuse(*problem) if problem else None
