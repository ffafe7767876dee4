"""Small display filters: `{{ item.tags|tag_chips }}` (tags as chips, not a Python dict),
`{{ entry.diff|word_diff }}` (review's word diff with deletions struck in red and insertions in green;
the [-…-] / {+…+} markers stay in the text for screen readers and copy-paste, hidden on screen) and
`{{ text|markdown }}` (the escaped Markdown subset of campaign guidelines)."""

import re

from django import template
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import mark_safe

from annotation.guidelines import render_guidelines

register = template.Library()

DIFF_PART = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}", re.S)


@register.filter
def tag_chips(tags) -> str:
    if not tags:
        return ""
    if not isinstance(tags, dict):
        return format_html('<span class="chip">{}</span>', tags)
    chips = []
    for key, value in tags.items():
        shown = ", ".join(str(v) for v in value) if isinstance(value, list | tuple) else str(value)
        chips.append((key, shown))
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
