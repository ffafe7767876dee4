"""Campaign guidelines are Markdown written by staff; this renders the small subset they need
(headings, paragraphs, lists, bold, italics, code) with every other character escaped."""

import re
from pathlib import Path

from django.utils.html import escape
from django.utils.safestring import mark_safe

INLINE = [
    (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])"), r"<em>\1</em>"),
    (re.compile(r"`(.+?)`"), r"<code>\1</code>"),
]
HEADING = re.compile(r"^(#{1,4})\s+(.*)$")
LIST_ITEM = re.compile(r"^\s*[-*]\s+(.*)$")


def _inline(text: str) -> str:
    html = escape(text)
    for pattern, replacement in INLINE:
        html = pattern.sub(replacement, html)
    return html


def render_guidelines(markdown: str):
    blocks, paragraph, items = [], [], []

    def flush():
        if paragraph:
            blocks.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()
        if items:
            blocks.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    for line in (markdown or "").splitlines():
        heading, item = HEADING.match(line.strip()), LIST_ITEM.match(line)
        if not line.strip():
            flush()
        elif heading:
            flush()
            level = min(len(heading.group(1)) + 1, 5)  # the page's own title is the h1
            blocks.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif item:
            if paragraph:
                flush()
            items.append(item.group(1))
        elif items:
            items[-1] += " " + line.strip()
        else:
            paragraph.append(line.strip())
    flush()
    return mark_safe("\n".join(blocks))


# A new campaign's guidelines start from its paper's own: Hypo3D's Fig. 6 (movement changes, five
# per assignment, the new campaign form's defaults), shipped verbatim in annotation/prompts/.
PAPER_GUIDELINES = {"hypo3d": "hypo3d/fig6_movement_guidelines.md"}


def paper_guidelines(family: str) -> str:
    path = PAPER_GUIDELINES.get(family)
    return (Path(__file__).with_name("prompts") / path).read_text(encoding="utf-8").rstrip("\n") if path else ""
