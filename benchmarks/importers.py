"""Item files of the five families onto Item / ContextChange (and images onto Scene / Asset), in the
shapes their authors publish, driven by one mapping per family.

A family's mapping turns a parsed file into plain records (`ItemRecord`); one loop validates and
writes them for every family. A file either imports whole or writes nothing (stored image bytes
included), and every problem is reported with where it is (`scene0001_00[2].questions_answers[0]`,
`row 3`, `record 2`) and why. Importing is idempotent: an item whose benchmark id (`external_id`)
is already there is updated in place when the file says something else, or left alone.
Formats: ../shared/FORMATS.md; layouts and examples: docs/IMPORT.md."""

import base64
import binascii
import csv
import hashlib
import io
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.db import DatabaseError, transaction
from django.dispatch import Signal

from .models import AnswerFormat, Asset, AssetRole, Benchmark, ChangeType, ContextChange, Item, Scene
from .protocols import TWIN_OF
from .services import store_asset

# Sent inside the import's transaction with the ids of the changes and items written (change_ids,
# item_ids); review embeds their texts for near-duplicate search once it commits (review/apps.py).
texts_imported = Signal()

LETTERS = "ABCDEFGHIJ"
MAX_ERRORS = 50


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
    scene_id: str | None = None
    change_text: str | None = None
    change_type: str | None = None
    image: ImageData | None = None


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


class _Problem(str):
    """A row the mapping could not read; the loop collects these instead of stopping at the first."""


# --- reading files ---------------------------------------------------------------------------

def as_text(text_or_bytes: str | bytes) -> str:
    if isinstance(text_or_bytes, bytes | bytearray | memoryview):
        try:
            return bytes(text_or_bytes).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportFileError(f"not UTF-8 text (byte {exc.start})") from None
    return text_or_bytes.removeprefix("\ufeff")


def read_json_or_jsonl(text: str):
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            if stripped.startswith("["):
                raise ImportFileError(f"not valid JSON: {exc.msg} at line {exc.lineno}") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
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


def _need(row: dict, key: str, where: str):
    value = row.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"{where}: '{key}' is missing or empty")
    return value


def _cell(row: dict, key: str) -> str:
    """A TSV cell as text; pandas writes a missing value as empty or as `nan`."""
    value = row.get(key)
    if value is None:
        return ""
    value = str(value).strip()
    return "" if value.lower() == "nan" else value


def _text_id(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _each(rows, build: Callable[[str, dict], ItemRecord]) -> Iterator[ItemRecord | _Problem]:
    for where, row in rows:
        if not isinstance(row, dict):
            yield _Problem(f"{where}: expected an object, got {type(row).__name__}")
            continue
        try:
            yield build(where, row)
        except (ValueError, TypeError, AttributeError) as exc:
            yield _Problem(str(exc))


def _numbered(rows: list, label: str = "record") -> list[tuple[str, dict]]:
    return [(f"{label} {number}", row) for number, row in enumerate(rows, start=1)]


# --- images inside item files ---------------------------------------------------------------------

BASE64_TEXT = re.compile(r"[A-Za-z0-9+/=\s]+")
# VLMEvalKit writes an image once and lets other rows name that row's index instead (64 chars at most).
IMAGE_REFERENCE_MAX = 64


def _image_data(value) -> ImageData | None:
    """A base64 image (plain, or as a data: URI), a Hugging Face image dict with bytes; else None."""
    if isinstance(value, dict):
        inner = value.get("bytes")
        return _image_data(inner) if inner else None
    if isinstance(value, bytes | bytearray):
        return ImageData(bytes(value))
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.startswith("data:image/") and ";base64," in text:
        return ImageData(text.split(",", 1)[1])
    if len(text) > IMAGE_REFERENCE_MAX and _looks_like_image(text) and BASE64_TEXT.fullmatch(text):
        return ImageData(text)
    return None


IMAGE_MAGIC = (b"\xff\xd8\xff", b"\x89PNG", b"GIF8", b"RIFF", b"BM")


def _looks_like_image(text: str) -> bool:
    """The first bytes of base64 text are an image file's signature (JPEG, PNG, GIF, WebP, BMP)."""
    try:
        head = base64.b64decode(text[:24], validate=True)
    except (binascii.Error, ValueError):
        return False
    return head.startswith(IMAGE_MAGIC)


def decode_image(image: ImageData) -> tuple[bytes, dict]:
    """The image's bytes and {width, height, format}; ValueError when it is not a readable image."""
    from PIL import Image, UnidentifiedImageError

    content = image.data
    if isinstance(content, str):
        try:
            content = base64.b64decode("".join(content.split()), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("the image is not valid base64") from None
    try:
        with Image.open(io.BytesIO(content)) as picture:
            facts = {"width": picture.width, "height": picture.height, "format": (picture.format or "").lower()}
            picture.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise ValueError(f"the image is not a readable image ({exc})") from None
    return content, facts


def _tsv_images(rows: list[tuple[str, dict]]) -> dict[str, tuple[str, str]]:
    """index -> (index of the row that holds the image, the base64 text), following VLMEvalKit's
    short references (a row whose `image` is another row's index)."""
    by_index = {_cell(row, "index"): _cell(row, "image") for _, row in rows if _cell(row, "index")}
    resolved = {}
    for index, value in by_index.items():
        owner = index
        if value and len(value) <= IMAGE_REFERENCE_MAX and value in by_index:
            owner, value = value, by_index[value]
        if value and len(value) > IMAGE_REFERENCE_MAX:
            resolved[index] = (owner, value)
    return resolved


# --- one mapping per family ------------------------------------------------------------------

CHANGE_WORDS = {
    "move": "movement", "moved": "movement", "moving": "movement", "motion": "movement",
    "remove": "removal", "removed": "removal", "deletion": "removal", "delete": "removal",
    "attributes": "attribute", "attr": "attribute",
    "add": "addition", "added": "addition", "insertion": "addition", "insert": "addition",
    "replace": "replacement", "replaced": "replacement", "substitution": "replacement",
}


def _hypo3d_change_type(value) -> str:
    """The release's exact strings are unknown ('Movement Change', 'Object Movement', 'movement'):
    the first word naming a type wins; otherwise the second word, as the tool wrote them."""
    words = re.split(r"[\s_\-/]+", str(value or "").lower().strip())
    words = [w for w in words if w]
    for word in words:
        if word in ChangeType.values:
            return word
        if word in CHANGE_WORDS:
            return CHANGE_WORDS[word]
    return words[1] if len(words) > 1 else (words[0] if words else "")


def hypo3d_records(text: str, name: str = "") -> Iterator[ItemRecord | _Problem]:
    data = read_json_or_jsonl(text)
    if not isinstance(data, dict):
        raise ImportFileError("expected an object {scene_id: [changes]}")
    for scene_id, changes in data.items():
        if not isinstance(changes, list):
            raise ImportFileError(f"{scene_id}: expected a list of changes")
        for c, change in enumerate(changes):
            where = f"{scene_id}[{c}]"
            if not isinstance(change, dict):
                yield _Problem(f"{where}: expected an object")
                continue
            try:
                change_text = str(_need(change, "context_change", where)).strip()
                change_type = _hypo3d_change_type(change.get("change_type", ""))
                if change_type not in ChangeType.values:
                    raise ValueError(f"{where}: change_type '{change.get('change_type')}' names none of "
                                     f"{', '.join(ChangeType.values)}")
                qas = change.get("questions_answers") or []
                if not isinstance(qas, list):
                    raise ValueError(f"{where}: 'questions_answers' must be a list")
            except ValueError as exc:
                yield _Problem(str(exc))
                continue

            def build(qwhere, qa, change_text=change_text, change_type=change_type, scene_id=scene_id):
                question_type = qa.get("question_type") or []
                if isinstance(question_type, str):
                    question_type = question_type.replace(",", " ").split()
                return ItemRecord(
                    where=qwhere, question=str(_need(qa, "question", qwhere)), answer_format=AnswerFormat.OPEN,
                    answers=[str(_need(qa, "answer", qwhere)).strip()], external_id=_text_id(qa.get("question_id")),
                    id_label="question_id",
                    tags={"change_type": change_type, "question_type": [str(t) for t in question_type]},
                    scene_id=str(scene_id), change_text=change_text, change_type=change_type,
                )

            yield from _each(((f"{where}.questions_answers[{q}]", qa) for q, qa in enumerate(qas)), build)


SRBENCH_SUBTYPES = {
    "height_higher": "height",
    "location_above": "location", "location_closer_to_camera": "location", "location_next_to": "location",
    "orientation_in_front_of": "orientation", "orientation_on_the_left": "orientation",
    "orientation_viewpoint": "orientation",
    "multi_object_closer_to": "multi_object", "multi_object_facing": "multi_object",
    "multi_object_viewpoint_towards_object": "multi_object", "multi_object_parallel": "multi_object",
    "multi_object_same_direction": "multi_object",
}
# `VIN6MS3J`, `VIN6MS3J-2`, `VIN6MS3J-flip`, `VIN6MS3J-flip-1`.
SRBENCH_QID = re.compile(r"^(?P<base>.+?)(?P<flip>-flip)?(?:-(?P<rotation>\d+))?$")


def _choice_letters(row: dict, where: str) -> list[str]:
    """Options A-D that are written, in order; a gap (C empty, D written) is refused."""
    cells = [_cell(row, letter) for letter in "ABCD"]
    while cells and not cells[-1]:
        cells.pop()
    if "" in cells:
        raise ValueError(f"{where}: option {LETTERS[cells.index('')]} is empty but a later one is not")
    return cells


def _viewpoint(row: dict) -> str:
    viewpoint = _cell(row, "viewpoint")
    if viewpoint:
        return viewpoint
    split = _cell(row, "split").lower()
    if "uncommon" in split:
        return "uncommon"
    return "common" if "common" in split else ""


def srbench_records(text: str, name: str = "") -> Iterator[ItemRecord | _Problem]:
    rows = read_tsv(text, {"qid", "question", "A", "B", "answer", "category"})
    images = _tsv_images(rows) if rows and "image" in rows[0][1] else {}

    def build(where, row):
        qid = _cell(row, "qid")
        if not qid:
            raise ValueError(f"{where}: 'qid' is missing or empty")
        choices = _choice_letters(row, where)
        answer = _cell(row, "answer").upper().strip("() .")
        if len(choices) < 2:
            raise ValueError(f"{where}: expected at least options A and B")
        if answer not in LETTERS[: len(choices)] or not answer:
            raise ValueError(f"{where}: answer '{_cell(row, 'answer')}' is not one of the {len(choices)} options")
        subtype = _cell(row, "category")
        if subtype not in SRBENCH_SUBTYPES:
            raise ValueError(f"{where}: unknown category '{subtype}' (one of the 12 subtypes, e.g. height_higher)")
        parts = SRBENCH_QID.match(qid)
        flipped = bool(parts["flip"])
        tags = {"category": SRBENCH_SUBTYPES[subtype], "subtype": subtype}
        if _cell(row, "image_source"):
            tags["image_source"] = _cell(row, "image_source")
        if _viewpoint(row):
            tags["viewpoint"] = _viewpoint(row)
        if flipped:
            tags["image_variant"] = "flipped"
        index = _cell(row, "index")
        image = None
        if index in images:
            image = ImageData(images[index][1], flipped=flipped, key=qid.replace("-flip", "", 1))
        elif not index and _image_data(_cell(row, "image")):
            image = ImageData(_cell(row, "image"), flipped=flipped, key=qid.replace("-flip", "", 1))
        return ItemRecord(
            where=where, question=_need(row, "question", where), answer_format=AnswerFormat.SINGLE,
            answers=[answer], choices=choices, external_id=qid, id_label="qid", source_index=index, tags=tags,
            scene_id=_cell(row, "scene_id") or parts["base"], image=image,
        )

    return _each(rows, build)


CAUSAL_ID = re.compile(r"^(?P<task>.+?)_Level_(?P<level>\d+)_(?P<index>\d+)$", re.IGNORECASE)
PAREN_MARK = re.compile(r"\(([A-J])\)")
DOT_MARK = re.compile(r"(?<![^\s;,:])([A-J])[.):](?=\s|$)")
LETTER_ONLY = re.compile(r"^\(?\s*([A-Ja-j])\s*\)?[.:]?$")
LETTER_FIRST = re.compile(r"^\(?([A-J])[).:]\s")


def _option_chain(marks: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """The longest run A, B, C... of option marks in order; the latest A wins a tie (options come last)."""
    best: list = []
    for i, mark in enumerate(marks):
        if mark[0] != "A":
            continue
        chain = [mark]
        for other in marks[i + 1:]:
            if other[0] == LETTERS[len(chain)]:
                chain.append(other)
        if len(chain) >= len(best):
            best = chain
    return best if len(best) >= 2 else []


def parse_options(question: str) -> list[str]:
    """Options written inside a question: `(A) yes (B) no`, `A. yes; B. no;` or one per line."""
    for pattern in (PAREN_MARK, DOT_MARK):
        chain = _option_chain([(m.group(1), m.start(), m.end()) for m in pattern.finditer(question)])
        if chain:
            break
    else:
        return []
    options = []
    for k, (_, _, end) in enumerate(chain):
        stop = chain[k + 1][1] if k + 1 < len(chain) else len(question)
        text = question[end:stop]
        if k + 1 == len(chain):
            text = text.strip().split("\n", 1)[0]
        options.append(text.strip().rstrip(";,").strip())
    return options


def _norm(text) -> str:
    return " ".join(str(text).split()).strip().rstrip(".").lower()


def letter_of(value, choices: list[str], where: str, what: str) -> str:
    """A letter (`A`, `(A)`, `A.`), an option's text, or `A. text`; refused when it names no option."""
    text = str(value).strip()
    match = LETTER_ONLY.match(text)
    letter = match.group(1).upper() if match else None
    if letter is None:
        normalised = [_norm(c) for c in choices]
        if _norm(text) in normalised:
            letter = LETTERS[normalised.index(_norm(text))]
        elif LETTER_FIRST.match(text):
            letter = LETTER_FIRST.match(text).group(1)
    if letter is None or letter not in LETTERS[: len(choices)]:
        raise ValueError(f"{where}: {what} '{text}' is not one of the {len(choices)} options")
    return letter


def _image_field(row: dict, tags: dict) -> ImageData | None:
    """A Hugging Face `image`: base64 bytes become the item's image; a path is kept in tags."""
    value = row.get("image")
    image = _image_data(value)
    if image is None:
        path = value.get("path") if isinstance(value, dict) else value
        if isinstance(path, str) and path.strip():
            tags["image"] = path.strip()
    return image


def causalspatial_records(text: str, name: str = "") -> Iterator[ItemRecord | _Problem]:
    def build(where, row):
        if isinstance(row.get("options"), list):
            return _causal_real_world(where, row)
        item_id = _text_id(row.get("id") or row.get("question_id"))
        if not item_id:
            raise ValueError(f"{where}: 'id' is missing or empty")
        match = CAUSAL_ID.match(item_id)
        if not match:
            raise ValueError(f"{where}: id '{item_id}' is not like Collision_Level_1_0")
        question = str(_need(row, "question", where))
        choices = parse_options(question)
        if len(choices) < 2:
            raise ValueError(f"{where}: no options found in the question (write them as (A) ... (B) ... "
                             "or A. ...; B. ...)")
        answer = row.get("answer") if row.get("answer") not in (None, "") else row.get("gt_answer")
        if answer in (None, ""):
            raise ValueError(f"{where}: 'answer' is missing or empty")
        tags = {"task": match["task"].lower(), "level": f"L{match['level']}"}
        if row.get("not_sure") not in (None, ""):
            tags["not_sure"] = letter_of(row["not_sure"], choices, where, "not_sure")
        if row.get("difficulty") not in (None, ""):
            tags["difficulty"] = row["difficulty"]
        image = _image_field(row, tags)
        return ItemRecord(
            where=where, question=question, answer_format=AnswerFormat.SINGLE,
            answers=[letter_of(answer, choices, where, "answer")], choices=choices, external_id=item_id,
            tags=tags, scene_id=row.get("scene_id") or (item_id if image else None), image=image,
        )

    return _each(_numbered(as_rows(read_json_or_jsonl(text))), build)


def _causal_real_world(where: str, row: dict) -> ItemRecord:
    """The real-world subset: `{id, type, question, options: [texts], answer: option text}`."""
    item_id = _text_id(row.get("id"))
    options = [str(o).strip() for o in row["options"]]
    prefixed = [M3_OPTION_PREFIX.match(o) for o in options]
    if options and all(m and m.group(1) == LETTERS[k] for k, m in enumerate(prefixed)):
        options = [M3_OPTION_PREFIX.sub("", o) for o in options]
    if not 2 <= len(options) <= len(LETTERS):
        raise ValueError(f"{where}: expected 2 to {len(LETTERS)} options, got {len(options)}")
    answer = _need(row, "answer", where)
    normalised = [_norm(o) for o in options]
    if _norm(answer) in normalised:
        letter = LETTERS[normalised.index(_norm(answer))]
    else:
        letter = letter_of(answer, options, where, "answer")
    tags = {}
    if row.get("type") not in (None, ""):
        tags["type"] = row["type"]
    image = _image_field(row, tags)
    return ItemRecord(
        where=where, question=str(_need(row, "question", where)), answer_format=AnswerFormat.SINGLE,
        answers=[letter], choices=options, external_id=item_id, tags=tags,
        scene_id=row.get("scene_id") or (item_id if image and item_id else None), image=image,
    )


SPATIAL457_LEVELS = ("L1_single", "L2_objects", "L3_2d_spatial", "L4_occ", "L4_pose", "L5_6d_spatial",
                     "L5_collision")
SPATIAL457_DATA_FIELDS = ("program", "template_filename", "question_family_index", "question_index")


def spatial457_answer(value) -> str:
    """Answers are strings, integers or booleans in the generated JSON: "yes"/"no" for booleans."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return _text_id(value)


def _level(candidates, name: str) -> str:
    for candidate in candidates:
        if candidate in SPATIAL457_LEVELS:
            return candidate
    named = [level for level in SPATIAL457_LEVELS if level.lower() in PurePosixPath(name).name.lower()]
    if len(named) == 1:
        return named[0]
    given = next((c for c in candidates if c not in (None, "")), None)
    if given is None:
        raise ValueError(f"no level (category, split or a file name like L2_objects.json); one of "
                         f"{', '.join(SPATIAL457_LEVELS)}")
    raise ValueError(f"level '{given}' is not one of {', '.join(SPATIAL457_LEVELS)}")


def spatial457_records(text: str, name: str = "") -> Iterator[ItemRecord | _Problem]:
    if not text.lstrip().startswith(("{", "[")):
        return _spatial457_tsv(text, name)
    data = read_json_or_jsonl(text)
    if isinstance(data, dict) and "questions" in data:
        rows, file_level = data.get("questions") or [], data.get("split")
    else:
        rows, file_level = as_rows(data), None
    if not isinstance(rows, list):
        raise ImportFileError("'questions' must be a list")

    def build(where, row):
        try:
            level = _level([row.get("category"), row.get("split"), file_level], name)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        answer = row.get("answer")
        if answer is None or answer == "":
            raise ValueError(f"{where}: 'answer' is missing or empty")
        tags = {"level": level, "image": row.get("image_filename", "")}
        tags.update({key: row[key] for key in SPATIAL457_DATA_FIELDS if row.get(key) is not None})
        index = row.get("question_index", row.get("index"))
        external_id = f"{level}/{_text_id(index)}" if index is not None else ""
        image = _image_data(row.get("image"))  # a Hugging Face export may carry the image itself
        return ItemRecord(
            where=where, question=str(_need(row, "question", where)), answer_format=AnswerFormat.OPEN,
            answers=[spatial457_answer(answer)], external_id=external_id, id_label="question_index", tags=tags,
            scene_id=row.get("scene_id") or row.get("image_filename") or (external_id if image else None) or None,
            image=image,
        )

    return _each(_numbered(rows, "question"), build)


def _spatial457_tsv(text: str, name: str) -> Iterator[ItemRecord | _Problem]:
    """VLMEvalKit's Spatial457.tsv: `index, question, answer, category (the level), image`."""
    rows = read_tsv(text, {"index", "question", "answer", "category"})
    images = _tsv_images(rows) if rows and "image" in rows[0][1] else {}

    def build(where, row):
        index = _cell(row, "index")
        if not index:
            raise ValueError(f"{where}: 'index' is missing or empty")
        try:
            level = _level([_cell(row, "category")], name)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        tags = {"level": level}
        if _cell(row, "image_filename"):
            tags["image"] = _cell(row, "image_filename")
        owner = images.get(index)
        scene_id = _cell(row, "scene_id") or _cell(row, "image_filename") or (owner[0] if owner else None)
        return ItemRecord(
            where=where, question=_need(row, "question", where), answer_format=AnswerFormat.OPEN,
            answers=[_need(row, "answer", where).strip()], external_id=index, id_label="index", source_index=index,
            tags=tags, scene_id=scene_id, image=ImageData(owner[1]) if owner else None,
        )

    return _each(rows, build)


M3_OPTION_PREFIX = re.compile(r"^\s*\(?([A-J])[.):]\s*")


def _m3_letters(value) -> list[str]:
    if isinstance(value, str):
        value = re.findall(r"[A-Za-z]+", value)
    return sorted({str(a).strip().strip("().").upper() for a in (value or [])})


def m3verse_records(text: str, name: str = "") -> Iterator[ItemRecord | _Problem]:
    def build(where, row):
        options = row.get("options") or []
        if not isinstance(options, list) or not 2 <= len(options) <= 8:
            raise ValueError(f"{where}: expected 2 to 8 options, got {len(options)}")
        choices = [M3_OPTION_PREFIX.sub("", str(option)) for option in options]
        answers = _m3_letters(row.get("answer"))
        if not answers or any(a not in LETTERS[: len(choices)] for a in answers):
            raise ValueError(f"{where}: answer {row.get('answer')} must be letters of the options")
        single = row.get("question_type") == "single_choice" or len(answers) == 1
        if single and len(answers) != 1:
            raise ValueError(f"{where}: a single_choice question with answers {answers}")
        return ItemRecord(
            where=where, question=str(_need(row, "question", where)),
            answer_format=AnswerFormat.SINGLE if single else AnswerFormat.MULTI,
            answers=answers, choices=choices, external_id=_text_id(_need(row, "question_id", where)),
            id_label="question_id", scene_id=_text_id(row.get("scene_id")) or None,
            tags={"state_type": row.get("state_type", ""), "category": row.get("category", ""),
                  "subcategory": row.get("subcategory", ""), "capabilities": row.get("capabilities") or [],
                  "hallucination": bool(row.get("hallucination"))},
        )

    return _each(_numbered(as_rows(read_json_or_jsonl(text))), build)


FAMILY_MAPPINGS: dict[str, Callable[[str, str], Iterator[ItemRecord | _Problem]]] = {
    "hypo3d": hypo3d_records,
    "3dsrbench": srbench_records,
    "causalspatial": causalspatial_records,
    "spatial457": spatial457_records,
    "m3verse": m3verse_records,
}


# --- checks across the file --------------------------------------------------------------------

def _repeated_ids(records: list[ItemRecord]) -> list[str]:
    """A benchmark id (or a VLMEvalKit index) given twice in one file, naming both places."""
    errors = []
    for attribute, label in (("external_id", None), ("source_index", "index")):
        seen: dict[str, ItemRecord] = {}
        for record in records:
            value = getattr(record, attribute)
            if not value:
                continue
            if value in seen:
                errors.append(f"{label or record.id_label} '{value}' at {seen[value].where} and {record.where}")
            else:
                seen[value] = record
    return list(dict.fromkeys(errors))


def _field_lengths(record: ItemRecord) -> list[str]:
    limits = (("external_id", record.external_id, 100), ("index", record.source_index, 40),
              ("scene id", record.scene_id or "", 100))
    return [f"{record.where}: {what} '{value[:40]}...' is longer than {limit} characters"
            for what, value, limit in limits if len(value) > limit]


# --- the one loop ------------------------------------------------------------------------------

def import_item_file(benchmark: Benchmark, name: str, text: str | bytes, author=None,
                     scene_required: bool | None = None, create_missing_scenes: bool = False) -> ImportReport:
    """Import one file into the benchmark as approved items; all of it, or nothing.

    Items already there (same benchmark id) are updated in place when the file differs, else left
    alone. Scenes: Hypo3D items need theirs (`scene_required`); other families' items may come
    before their scene and stay without one; `create_missing_scenes` makes bare scenes for every
    unknown scene id instead. Images carried in the file are stored once per scene."""
    report = ImportReport(file=name)
    try:
        records: list[ItemRecord] = []
        for record in FAMILY_MAPPINGS[benchmark.family](as_text(text), name):
            if isinstance(record, _Problem):
                report.errors.append(f"{name}: {record}")
            else:
                records.append(record)
    except ImportFileError as exc:
        report.errors.append(f"{name}: {exc}")
    except (ValueError, AttributeError, TypeError) as exc:
        report.errors.append(f"{name}: {exc}")
    if report.errors:
        return _cap(report)
    if not records:
        report.errors.append(f"{name}: no items found")
        return report
    report.errors += [f"{name}: {e}" for e in _repeated_ids(records)]
    report.errors += [f"{name}: {e}" for r in records for e in _field_lengths(r)]
    scenes = {s.external_id: s for s in Scene.objects.filter(benchmark=benchmark)}
    # Hypo3D items rest on a scene; other families may arrive before their images or videos.
    scene_required = benchmark.family == "hypo3d" if scene_required is None else scene_required
    to_create: dict[str, None] = {}
    for record in records:
        if not record.scene_id or record.scene_id in scenes:
            continue
        if create_missing_scenes or record.image is not None:
            to_create[record.scene_id] = None
        elif scene_required or record.change_text:
            report.errors.append(f"{name}: {record.where}: unknown scene id '{record.scene_id}'")
    if report.errors:
        return _cap(report)
    stored: list[Asset] = []
    try:
        with transaction.atomic():
            _write(benchmark, name, records, scenes, list(to_create), author, report, stored)
    except (ValueError, DatabaseError) as exc:
        for asset in stored:  # the rows rolled back with the transaction; the bytes go too
            asset.file.storage.delete(asset.file.name)
        return ImportReport(file=name, errors=[f"{name}: {exc}"])
    except BaseException:
        for asset in stored:
            asset.file.storage.delete(asset.file.name)
        raise
    return report


def _cap(report: ImportReport) -> ImportReport:
    if len(report.errors) > MAX_ERRORS:
        more = len(report.errors) - MAX_ERRORS
        report.errors = [*report.errors[:MAX_ERRORS], f"{report.file}: ... and {more} more problem(s)"]
    return report


def _write(benchmark: Benchmark, name: str, records: list[ItemRecord], scenes: dict[str, Scene],
           new_scene_ids: list[str], author, report: ImportReport, stored: list[Asset]) -> None:
    if new_scene_ids:
        Scene.objects.bulk_create([Scene(benchmark=benchmark, external_id=s) for s in new_scene_ids])
        scenes.update({s.external_id: s for s in Scene.objects.filter(benchmark=benchmark,
                                                                       external_id__in=new_scene_ids)})
        report.scenes_created = len(new_scene_ids)
    _store_images(name, records, scenes, report, stored)
    changes = _changes(benchmark, name, records, scenes, author)
    report.changes = len(changes)
    existing = _existing_items(benchmark, records)
    new_items, updated = [], []
    for record in records:
        scene = scenes.get(record.scene_id) if record.scene_id else None
        change = changes.get((record.scene_id, record.change_text)) if record.change_text else None
        provenance = {"source": "import", "file": name, "where": record.where}
        item = existing.get(record.external_id) if record.external_id else None
        if item is None:
            new_items.append(Item(
                benchmark=benchmark, scene=scene, change=change, external_id=record.external_id,
                source_index=record.source_index, question=record.question, answer_format=record.answer_format,
                choices=record.choices, answers=record.answers, tags=record.tags, status=Item.Status.APPROVED,
                author=author, provenance=provenance,
            ))
            continue
        wanted = {
            "question": record.question, "answer_format": record.answer_format, "choices": record.choices,
            "answers": record.answers, "tags": record.tags, "source_index": record.source_index,
            # an item keeps the scene or change it has when the file names none that exists (yet)
            "scene_id": scene.pk if scene else item.scene_id, "change_id": change.pk if change else item.change_id,
        }
        if all(getattr(item, key) == value for key, value in wanted.items()):
            report.unchanged += 1
            continue
        for key, value in wanted.items():
            setattr(item, key, value)
        item.provenance = {**(item.provenance or {}), **provenance}
        item.version += 1
        updated.append(item)
    Item.objects.bulk_create(new_items, batch_size=500)
    Item.objects.bulk_update(updated, [*UPDATED_FIELDS], batch_size=500)
    report.items, report.created, report.updated = len(records), len(new_items), len(updated)
    texts_imported.send(sender=Benchmark, change_ids=[c.pk for c in changes.values()],
                        item_ids=[i.pk for i in [*new_items, *updated] if i.pk is not None])


UPDATED_FIELDS = ("question", "answer_format", "choices", "answers", "tags", "source_index", "scene", "change",
                  "provenance", "version")


def _existing_items(benchmark: Benchmark, records: list[ItemRecord]) -> dict[str, Item]:
    ids = [r.external_id for r in records if r.external_id]
    found: dict[str, Item] = {}
    for start in range(0, len(ids), 1000):
        found.update({i.external_id: i for i in Item.objects.select_for_update().filter(
            benchmark=benchmark, external_id__in=ids[start:start + 1000])})
    return found


def _changes(benchmark: Benchmark, name: str, records: list[ItemRecord], scenes: dict[str, Scene],
             author) -> dict[tuple, ContextChange]:
    """One ContextChange per (scene, text): the one already there, or a new approved one."""
    keys = {(r.scene_id, r.change_text): r.change_type for r in records if r.change_text}
    if not keys:
        return {}
    by_pk = {scenes[scene_id].pk: scene_id for scene_id, _ in keys}
    found: dict[tuple, ContextChange] = {}
    for change in ContextChange.objects.filter(scene_id__in=list(by_pk)).order_by("pk"):
        found.setdefault((by_pk[change.scene_id], change.raw_text), change)
    changes = {}
    for (scene_id, text), change_type in keys.items():
        change = found.get((scene_id, text))
        if change is None:
            change = ContextChange.objects.create(
                scene=scenes[scene_id], change_type=change_type or "", raw_text=text,
                status=ContextChange.Status.APPROVED, author=author, provenance={"source": "import", "file": name},
            )
        elif change_type and change.change_type != change_type:
            change.change_type = change_type
            change.version += 1
            change.save(update_fields=["change_type", "version", "updated_at"])
        changes[(scene_id, text)] = change
    return changes


IMAGE_SUFFIXES = {"jpeg": "jpg", "png": "png", "webp": "webp", "gif": "gif", "bmp": "bmp"}


def _store_images(name: str, records: list[ItemRecord], scenes: dict[str, Scene], report: ImportReport,
                  stored: list[Asset]) -> None:
    """Each distinct image once per scene (found again by sha256 on a re-import); a mirrored image
    (3DSRBench `-flip` rows) as the scene's `image_flipped` twin of the original it mirrors."""
    with_images = [r for r in records if r.image is not None and r.scene_id in scenes]
    if not with_images:
        return
    scene_pks = {scenes[r.scene_id].pk for r in with_images}
    known: dict[tuple, Asset] = {}
    for asset in Asset.objects.filter(scene_id__in=scene_pks, role__in=[AssetRole.IMAGE, AssetRole.IMAGE_FLIPPED]):
        known.setdefault((asset.scene_id, asset.role, asset.sha256), asset)
    decoded: dict[int, tuple[bytes, dict]] = {}
    by_key: dict[tuple, Asset] = {}  # (scene pk, row key) -> original image asset

    def asset_for(record: ItemRecord, role: str, meta: dict) -> Asset:
        source = record.image.data
        if id(source) not in decoded:
            try:
                decoded[id(source)] = decode_image(record.image)
            except ValueError as exc:
                raise ValueError(f"{record.where}: {exc}") from None
        content, facts = decoded[id(source)]
        scene = scenes[record.scene_id]
        digest = hashlib.sha256(content).hexdigest()
        if (scene.pk, role, digest) not in known:
            suffix = IMAGE_SUFFIXES.get(facts["format"], "img")
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", PurePosixPath(record.scene_id).stem)[:60] or "image"
            filename = f"{stem}{'_flip' if role == AssetRole.IMAGE_FLIPPED else ''}.{suffix}"
            asset = store_asset(scene, role, filename, content,
                                {"width": facts["width"], "height": facts["height"], "source_file": name, **meta})
            stored.append(asset)
            known[(scene.pk, role, digest)] = asset
            report.images += 1
        return known[(scene.pk, role, digest)]

    for record in (r for r in with_images if not r.image.flipped):
        by_key.setdefault((scenes[record.scene_id].pk, record.image.key or record.external_id),
                          asset_for(record, AssetRole.IMAGE, {}))
    for record in (r for r in with_images if r.image.flipped):
        scene = scenes[record.scene_id]
        base = SRBENCH_QID.match(record.image.key)["base"] if record.image.key else ""
        original = (by_key.get((scene.pk, record.image.key)) or by_key.get((scene.pk, base))
                    or next((a for (pk, role, _), a in known.items() if pk == scene.pk and role == AssetRole.IMAGE),
                            None))
        twin = asset_for(record, AssetRole.IMAGE_FLIPPED, {TWIN_OF: original.pk} if original else {})
        if original is not None and "flipped" not in original.meta:
            original.meta["flipped"] = twin.pk
            original.save(update_fields=["meta"])
