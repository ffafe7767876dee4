"""What every family's mapping shares: the records a parsed file becomes, the file-level error,
the report, and reading a file's rows (JSON, JSONL, TSV) and their cells."""

import csv
import io
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from core.validation import UnstorableJSON, load_json

LETTERS = "ABCDEFGHIJ"
# An option written with its letter, `A. text` or `(A) text`.
OPTION_PREFIX = re.compile(r"^\s*\(?([A-J])[.):]\s*")


class ImportFileError(Exception):
    """The file as a whole is unusable (wrong columns, not JSON)."""


@dataclass
class ImageData:
    """An image carried inside the item file (VLMEvalKit base64 column, Hugging Face `image`)."""

    data: str | bytes  # base64 text, or the bytes themselves
    flipped: bool = False
    key: str = ""  # the row this image belongs to (3DSRBench: qid without `-flip`, to find the original)


@dataclass
class ItemRecord:
    where: str
    question: str
    answer_format: str
    answers: list
    external_id: str = ""
    id_label: str = "id"
    source_index: str = ""
    choices: list = field(default_factory=list)
    tags: dict = field(default_factory=dict)
    unchanged_answers: list = field(default_factory=list)  # Hypo3D Tables 3-4 (benchmarks.counterfactual)
    scene_id: str | None = None
    change_text: str | None = None
    change_type: str | None = None
    image: ImageData | None = None
    # the row's provenance (generated_provenance): a generator's item arrives as a draft for review, a
    # released one (`released_in`) approved with it
    generated: dict | None = None


# An item's provenance in a file HypoLab released names the release it was reviewed into
# (benchmarks/releases/published.py): such an item comes back approved with its provenance (authored,
# generated, drafted...), not as a published item nor as a generator's draft.
RELEASED_IN = "released_in"


def generated_provenance(row: dict, where: str, file_level: dict | None = None) -> dict | None:
    """The provenance a row carries, or its file: a generator's (construction/generators), when it says
    `source: generated`, or any source's in a HypoLab release (it says `released_in`); None otherwise,
    what a published file carries not being read as one."""
    provenance = row.get("provenance")
    if isinstance(provenance, str) and provenance.strip().startswith("{"):  # a TSV's JSON cell
        provenance = json.loads(provenance)
    provenance = provenance if isinstance(provenance, dict) else file_level
    if not isinstance(provenance, dict):
        return None
    if provenance.get(RELEASED_IN) and isinstance(provenance.get("source"), str):
        return provenance
    if provenance.get("source") != "generated":
        return None
    if not isinstance(provenance.get("generator"), str) or not provenance["generator"]:
        raise ValueError(f"{where}: a generated item's provenance names its generator")
    return provenance


@dataclass
class ImportReport:
    file: str
    items: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    changes: int = 0
    scenes_created: int = 0
    images: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_line(self) -> dict:
        """The command's JSON line for this file."""
        return {"file": self.file, "items": self.items, "created": self.created, "updated": self.updated,
                "unchanged": self.unchanged, "changes": self.changes, "scenes_created": self.scenes_created,
                "errors": self.errors}


class Problem(str):
    """A row the mapping could not read; the loop collects these instead of stopping at the first."""


def as_text(text_or_bytes: str | bytes) -> str:
    if isinstance(text_or_bytes, bytes | bytearray | memoryview):
        try:
            return bytes(text_or_bytes).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportFileError(f"not UTF-8 text (byte {exc.start})") from None
    return text_or_bytes.removeprefix("\ufeff")


def read_json_or_jsonl(text: str):
    """The file's records; every one checked as a request body is (core.validation.load_json)."""
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        try:
            return load_json(text)
        except UnstorableJSON as exc:
            raise ImportFileError(f"not storable: {exc}") from None
        except json.JSONDecodeError as exc:
            if stripped.startswith("["):
                raise ImportFileError(f"not valid JSON: {exc.msg} at line {exc.lineno}") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(load_json(line))
            except UnstorableJSON as exc:
                raise ImportFileError(f"line {number}: not storable ({exc})") from None
            except json.JSONDecodeError as exc:
                raise ImportFileError(f"line {number}: not valid JSON ({exc.msg})") from None
    return rows


def as_rows(data) -> list:
    """A JSONL file of one line parses as a single object: still one row."""
    if isinstance(data, dict):
        return [data]
    if not isinstance(data, list):
        raise ImportFileError("expected a list of records")
    return data


def _allow_big_fields() -> None:
    """VLMEvalKit TSVs hold whole base64 images in one field, far past csv's 128 KiB default."""
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 10


def read_tsv(text: str, required: set[str]) -> list[tuple[str, dict]]:
    """(where, row) per data row; the header is row 1. Column names are stripped; cells stay as written."""
    _allow_big_fields()
    reader = csv.DictReader(io.StringIO(text), delimiter="\t")
    try:
        reader.fieldnames = [(name or "").strip() for name in (reader.fieldnames or [])]
        missing = required - set(reader.fieldnames)
        if missing:
            raise ImportFileError(f"missing columns: {', '.join(sorted(missing))}")
        return [(f"row {number}", row) for number, row in enumerate(reader, start=2)]
    except csv.Error as exc:
        raise ImportFileError(f"not a readable TSV ({exc})") from None


def need(row: dict, key: str, where: str):
    value = row.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"{where}: '{key}' is missing or empty")
    return value


def cell(row: dict, key: str) -> str:
    """A TSV cell as text; pandas writes a missing value as empty or as `nan`."""
    value = row.get(key)
    if value is None:
        return ""
    value = str(value).strip()
    return "" if value.lower() == "nan" else value


def text_id(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def each_record(rows, build: Callable[[str, dict], ItemRecord]) -> Iterator[ItemRecord | Problem]:
    for where, row in rows:
        if not isinstance(row, dict):
            yield Problem(f"{where}: expected an object, got {type(row).__name__}")
            continue
        try:
            yield build(where, row)
        except (ValueError, TypeError, AttributeError) as exc:
            yield Problem(str(exc))


def numbered(rows: list, label: str = "record") -> list[tuple[str, dict]]:
    return [(f"{label} {number}", row) for number, row in enumerate(rows, start=1)]


def each_json_record(text: str, build: Callable[[str, dict], ItemRecord]) -> Iterator[ItemRecord | Problem]:
    """A JSON or JSONL file of records, each built where it stands (`record 3`)."""
    return each_record(numbered(as_rows(read_json_or_jsonl(text))), build)
