"""`{{ url|http_url }}`: the URL if it is an http(s) one, else "" (so a stored `javascript:` URL is
never rendered as a link, whatever got it into the database)."""

from django import template

from core.validation import is_http_url

register = template.Library()


@register.filter
def http_url(value) -> str:
    return value if is_http_url(value) else ""
