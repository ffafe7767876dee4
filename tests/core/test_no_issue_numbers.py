"""Product code says what a thing is, not which issue asked for it: no module, template or page script
outside the tests and migrations cites an issue number (the history is in git and docs/)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("annotation", "benchmarks", "config", "construction", "core", "crowd", "frontend", "humaneval",
         "modeleval", "results", "review", "scoring", "scenes", "demo")
SOURCES = {".py", ".html", ".js"}
SKIP = {"migrations", "vendor", "__pycache__"}
# "#47", "(#33)", "issue 7", "issues 20 and 32"; a colour (#333, #1a2b3c) is not one: issues here have two digits
ISSUE = re.compile(r"(?<![\w&#])#\d{1,2}\b|\b[Ii]ssues? #?\d{1,2}\b")


def citations() -> list[str]:
    found = []
    for room in ROOMS:
        for path in (ROOT / room).rglob("*"):
            if path.suffix not in SOURCES or SKIP & set(path.parts) or not path.is_file():
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if ISSUE.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    return found


def test_no_product_code_cites_an_issue_number():
    assert citations() == []


def test_the_rule_sees_a_citation_and_not_a_colour():
    assert ISSUE.search("cached (#33) until") and ISSUE.search("Issue 7: study design")
    assert not ISSUE.search("color: #333;") and not ISSUE.search("fill: #1a2b3c")
