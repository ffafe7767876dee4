"""Input checks shared by every stage's services (they raise DomainError naming the field), by
the request guard (config/middleware.py) and by stored URLs."""

import json
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from core.errors import DomainError


def whole_number(value, field: str, low: int, high: int, *, optional: bool = False) -> int | None:
    """`value` as an int within [low, high]; None for an empty optional value."""
    if optional and value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise DomainError("Must be a whole number.", field=field) from None
    if not low <= number <= high:
        raise DomainError(f"Must be between {low} and {high}.", field=field)
    return number


# --- Text the database and the browser can take -------------------------------------------------
# PostgreSQL refuses a NUL character in text and in jsonb, and a lone surrogate (JSON "\ud800") is
# not Unicode at all: either made every write path answer 500. config.middleware.InputGuardMiddleware
# refuses such requests, and bounds JSON nesting, before any view sees them.

NUL = "contains a NUL character"
LONE_SURROGATE = "contains a lone surrogate (not valid Unicode)"
MAX_JSON_DEPTH = 64
MAX_FIELD_NAME = 200


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored as text, or None."""
    if "\x00" in value:
        return NUL
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return LONE_SURROGATE
    return None


def field_name(path) -> str:
    """A printable field name for an error answer (a bad key is shown escaped)."""
    name = ".".join(str(part) for part in path) or "body"
    if text_problem(name):
        name = name.encode("unicode_escape", "backslashreplace").decode("ascii")
    return name[:MAX_FIELD_NAME]


def json_problem(data, max_depth: int = MAX_JSON_DEPTH) -> tuple[str, str] | None:
    """(field, reason) for the first string (key or value) that cannot be stored, or for nesting
    deeper than `max_depth` containers; None when `data` is fine. Iterative: any depth is safe."""
    stack = [(data, (), 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            reason = text_problem(value)
            if reason:
                return field_name(path), reason
        elif isinstance(value, dict | list):
            if depth >= max_depth:
                return field_name(path[:1] if isinstance(data, dict) else ()), f"nests deeper than {max_depth} levels"
            if isinstance(value, dict):
                for key, item in value.items():
                    reason = text_problem(key) if isinstance(key, str) else None
                    if reason:
                        return field_name((*path, key)), reason
                    stack.append((item, (*path, key), depth + 1))
            else:
                stack.extend((item, (*path, index), depth + 1) for index, item in enumerate(value))
    return None


class UnstorableJSON(ValueError):
    """Parsed JSON that json_problem refuses: too deep, or a NUL or lone surrogate in a string."""


def load_json(text: str | bytes, max_depth: int = MAX_JSON_DEPTH):
    """json.loads for an uploaded file's JSON: what the request guard refuses in a body is refused here
    too (UnstorableJSON naming where), and nesting that breaks the parser is no RecursionError."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise UnstorableJSON(f"nests deeper than {max_depth} levels") from None
    problem = json_problem(data, max_depth)
    if problem:
        raise UnstorableJSON(f"{problem[0]} {problem[1]}" if problem[0] != "body" else problem[1])
    return data


def json_body_problem(body: bytes, max_depth: int = MAX_JSON_DEPTH) -> tuple[str, str] | None:
    """json_problem for a request body, when it is JSON. A body that is not JSON is left to the
    view (which answers its own parse error), except that a NUL byte is refused in any case."""
    if (b"\\u" not in body and b"\x00" not in body and b"\xed" not in body
            and body.count(b"[") + body.count(b"{") <= max_depth):
        return None  # no escapes, no NUL, no encoded surrogate, too few brackets to nest too deep
    try:
        data = json.loads(body)  # bytes are decoded with surrogatepass: raw surrogates come through
    except RecursionError:
        return "body", f"nests deeper than {max_depth} levels"
    except ValueError:
        return ("body", NUL) if b"\x00" in body else None
    return json_problem(data, max_depth)


# --- Stored URLs ---------------------------------------------------------------------------------

HTTP_SCHEMES = ("http", "https")


def is_http_url(value) -> bool:
    """An absolute http(s) URL with a host and no whitespace or control characters."""
    if not isinstance(value, str) or not value or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127
                                                      for ch in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme.lower() in HTTP_SCHEMES and bool(parts.hostname)


def validate_http_url(value) -> None:
    """Model and serializer validator for stored URLs: only http(s) links reach a page (a
    `javascript:` URL would run when the link is clicked)."""
    if value and not is_http_url(value):
        raise ValidationError("Enter an http:// or https:// URL.", code="invalid_url")
