"""Page scripts are ES modules under frontend/static/hypolab/ (one entry per page in pages/, bundled by
scripts/install_static.sh into vendor/hypolab/): templates load them by `{% static %}` with the CSP nonce
and hand them data only through `json_script`, so no template writes JavaScript."""

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


def test_every_page_entry_is_loaded_by_a_template_and_every_loaded_script_has_a_source():
    loaded = {m for path in TEMPLATES for m in re.findall(r"\{% static '([^']+\.js)' %\}", path.read_text())}
    entries = {p.name for p in (STATIC / "pages").glob("*.js")}
    bundled = {name.removeprefix("vendor/hypolab/") for name in loaded if name.startswith("vendor/hypolab/")}
    assert bundled - {"pointcloud-viewer.js"} == entries  # none missing, none left unused
    plain = {name for name in loaded if not name.startswith("vendor/")}
    assert all((STATIC.parent / name).is_file() for name in plain), plain
