"""Page scripts are ES modules under frontend/static/hypolab/: templates load them by `{% static %}` with
the CSP nonce and hand them data only through `json_script`, so no template writes JavaScript."""

import re
from pathlib import Path

from django.conf import settings

TEMPLATES = sorted((settings.BASE_DIR / "frontend" / "templates").rglob("*.html"))
STATIC = settings.BASE_DIR / "frontend" / "static" / "hypolab"
SCRIPT_TAG = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S)


def _name(path: Path) -> str:
    return str(path.relative_to(settings.BASE_DIR))


def test_templates_have_no_inline_script_and_load_modules_with_the_nonce():
    problems = []
    for path in TEMPLATES:
        for attributes, body in SCRIPT_TAG.findall(path.read_text()):
            if body.strip():
                problems.append(f"{_name(path)}: inline script")
            if "src=" not in attributes or 'nonce="{{ request.csp_nonce }}"' not in attributes:
                problems.append(f"{_name(path)}: <script{attributes}>")
    assert not problems, "\n".join(problems)


def test_templates_have_no_event_handler_attributes_or_hard_coded_static_paths():
    problems = []
    for path in TEMPLATES:
        text = path.read_text()
        problems += [f"{_name(path)}: {m}" for m in re.findall(r"\son[a-z]+=\"", text)]
        problems += [f"{_name(path)}: {m}" for m in re.findall(r"[\"']/static/[^\"']*", text)]
    assert not problems, "\n".join(problems)


def test_every_page_module_a_template_loads_exists():
    loaded = {m for path in TEMPLATES for m in re.findall(r"\{% static '(hypolab/[^']+\.js)' %\}", path.read_text())}
    assert loaded and all((STATIC.parent / name).is_file() for name in loaded), loaded
    pages = {f"hypolab/pages/{p.name}" for p in (STATIC / "pages").glob("*.js")}
    assert pages <= loaded, pages - loaded  # no page module left unused
