"""Small display filters: `{{ item.tags|tag_chips }}` (tags as chips, not a Python dict),
`{{ entry.diff|word_diff }}` (review's word diff with deletions struck in red and insertions in green;
the [-…-] / {+…+} markers stay in the text for screen readers and copy-paste, hidden on screen) and
`{{ text|markdown }}` (the escaped Markdown subset of campaign guidelines) and
`{% for label, message in error|error_lines %}` (a refused form's {field: message} as lines for people) and
`{{ message|link_params }}` (a crowd link's parameter names in a message shown as code)."""

import re

from django import template
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import mark_safe

from annotation.guidelines import render_guidelines
from core.labels import spelled_out, words
from crowd.services import LINK_PARAMS
from review.services import ALL_QUESTION_CRITERIA, CHANGE_CRITERIA

register = template.Library()

# Messages that need the field's name to make sense ("This field is required."); a service's own message
# says what is wrong in words (house rule) and is shown alone, without the field's code name.
GENERIC_MESSAGE = re.compile(r"^(This field|This value|Ensure this|A valid|Not a valid|Enter a|At most|Must be)")
NO_LABEL = {"non_field_errors", "detail"}

# A crowd link's parameters (PROLIFIC_PID, assignmentId, ...) as a refused link's message names them, for the
# requester who fixes the link: they are the platform's own names, shown as code.
LINK_PARAM = re.compile(r"\b(" + "|".join(LINK_PARAMS) + r")\b")

DIFF_PART = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}", re.S)


@register.filter
def tag_chips(tags) -> str:
    if not tags:
        return ""
    if not isinstance(tags, dict):
        return format_html('<span class="chip">{}</span>', tags)
    chips = []
    for key, value in tags.items():
        if isinstance(value, list | tuple) and any(isinstance(v, dict | list) for v in value):
            shown = f"{len(value)} steps"  # a structure (Spatial457's program): its size, not its source
        else:
            shown = ", ".join(map(value_words, value)) if isinstance(value, list | tuple) else value_words(value)
        chips.append((words(key), shown))
    return format_html('<span class="chips">{}</span>', format_html_join(
        " ", '<span class="chip"><span class="chip-key">{}</span> {}</span>', chips))


@register.filter
def word_diff(diff: str) -> str:
    if not diff:
        return ""
    out, last = [], 0
    for match in DIFF_PART.finditer(diff):
        out.append(escape(diff[last:match.start()]))
        removed, added = match.group(1), match.group(2)
        if removed is not None:
            out.append(f'<del class="diff-del"><span class="diff-mark">[-</span>{escape(removed)}'
                       f'<span class="diff-mark">-]</span></del>')
        else:
            out.append(f'<ins class="diff-ins"><span class="diff-mark">{{+</span>{escape(added)}'
                       f'<span class="diff-mark">+}}</span></ins>')
        last = match.end()
    out.append(escape(diff[last:]))
    return mark_safe("".join(out))


@register.filter
def markdown(text: str) -> str:
    return render_guidelines(text or "")


@register.filter
def field_label(field: str) -> str:
    """A field's code name in words: `seconds_per_session` -> "Seconds per session"."""
    return spelled_out(field)


def value_words(value) -> str:
    """A tag's value: a code name (`height_higher`) in words, lower-case as a value reads; others as they are."""
    shown = plain(value)
    return words(shown).lower() if "_" in shown and " " not in shown else shown


@register.filter
def error_lines(error) -> list[tuple[str, str]]:
    """A refused form's errors as (label, message) pairs, the label blank unless the message needs it.
    A list of pairs, not `error.items` in the template: that would read an "items" key of the dict."""
    if not error:
        return []
    return [("" if field in NO_LABEL or not GENERIC_MESSAGE.match(str(message)) else field_label(field), message)
            for field, message in error.items()]


@register.filter
def link_params(message) -> str:
    """A message, escaped, with the crowd link parameters it names as code."""
    return mark_safe(LINK_PARAM.sub(r"<code>\1</code>", escape(str(message))))


def plain(value) -> str:
    """A value as words: no Python dict, list, None or True on a page."""
    if value is None or value == "" or value == {} or value == []:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{key}: {plain(v)}" for key, v in value.items())
    if isinstance(value, list | tuple | set):
        return ", ".join(plain(v) for v in value)
    return str(value)


@register.filter
def labelled_rows(mapping) -> list[tuple[str, str]]:
    """A dict of settings or counts as (label in words, value in words) rows."""
    return [(field_label(str(key)), plain(value)) for key, value in (mapping or {}).items()]


@register.filter
def humane(name) -> str:
    """A metric's, tag's or category's code name in words (`not_sure_rate` -> "Not sure rate"); other
    names (a paper's own column titles) as they are (core.labels)."""
    return words(name)


register.filter("words", words)


@register.filter
def criteria_words(keys) -> str:
    """A rejection's criteria as the reviewer read them ("Clear and complete: …"), not their keys."""
    return "; ".join(CHANGE_CRITERIA.get(key, ALL_QUESTION_CRITERIA.get(key, key)) for key in keys or ())
