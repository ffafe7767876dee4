"""Text already stored that cannot be written out as UTF-8 (a lone surrogate that reached a JSON
column before the input guard closed the charset hole: SQLite keeps the escaped `\\ud800`) is shown
escaped instead of failing the page with a 500: a page's body is encoded with backslashreplace, and
the API's JSON, where its usual UTF-8 rendering fails, is rendered ASCII-escaped (valid JSON).
Installed once by the input guard (config.middleware.InputGuardMiddleware)."""

from django.http.response import HttpResponseBase
from rest_framework.renderers import JSONRenderer

_installed = False


def _make_bytes(self, value):
    """HttpResponseBase.make_bytes with unencodable characters backslash-escaped."""
    if isinstance(value, bytes | memoryview):
        return bytes(value)
    return str(value).encode(self.charset, "backslashreplace")


class _AsciiJSONRenderer(JSONRenderer):
    ensure_ascii = True


def install() -> None:
    global _installed
    if _installed:
        return
    _installed = True
    HttpResponseBase.make_bytes = _make_bytes
    original = JSONRenderer.render

    def render(self, data, accepted_media_type=None, renderer_context=None):
        try:
            return original(self, data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:  # a lone surrogate: "\ud800" in the JSON, which any client reads
            ascii_renderer = _AsciiJSONRenderer()
            ascii_renderer.__dict__.update(self.__dict__)
            return original(ascii_renderer, data, accepted_media_type, renderer_context)

    JSONRenderer.render = render
