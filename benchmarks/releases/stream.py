"""Release files written as a stream: the items are read from the database in chunks (a server-side
cursor, or keyset pages where a pooler forbids one), each line is written to the store as it is made
(a local file, or an S3 multipart upload), and each file's size and sha256 are computed as its bytes go.
Memory stays bounded by one chunk of lines (one Parquet row group), whatever the release's size.

The bytes are those the in-memory export wrote for the same release; a Parquet file of more than
ROW_GROUP_ROWS items is split into row groups of that many rows (same rows, same schema), where the
in-memory writer made one. format_bytes writes the same formats into memory (the Hugging Face Parquet,
bench/export.py), a Parquet file there as one row group.
"""

import csv
import hashlib
import io
import os
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path

from django.core.files.storage import FileSystemStorage
from django.db import connections

from core.errors import DomainError
from core.jobs import beat_job

from .. import sql
from ..models import Asset, AssetRole, WorldFrame
from ..services import question_types_of
from . import geometry
from .lines import (
    LINE_VALUES,
    dumps,
    id_order,
    iter_lines,
    iter_release_lines,
    mean_words,
    release_line,
    split_name,
)

CHUNK_ROWS = 2_000  # rows fetched from the database at a time
ROW_GROUP_ROWS = 25_000  # lines per Parquet row group: the published benchmarks (Spatial457: 23,999) fit one
TEXT_BLOCK_ROWS = 1_000  # lines per write of the text formats
FORMATS = ("json", "csv", "parquet")  # derived from the JSONL (the `datasets` json/csv/parquet loaders read them)


# --- Reading in chunks ------------------------------------------------------------------------------

def server_side_cursors(using: str = "default") -> bool:
    """False behind PgBouncer in transaction mode (DISABLE_SERVER_SIDE_CURSORS, config/settings.py): a
    named cursor does not survive the pooler handing the connection to another client."""
    settings_dict = connections[using].settings_dict
    return connections[using].vendor == "postgresql" and not settings_dict.get("DISABLE_SERVER_SIDE_CURSORS")


def iterate_chunked(queryset, chunk_size: int = CHUNK_ROWS) -> Iterator:
    """Every row of a queryset ordered by pk, `chunk_size` at a time: a server-side cursor on PostgreSQL,
    keyset pages (`pk > last ORDER BY pk LIMIT n`) otherwise. Without server-side cursors Django's
    `.iterator()` would fetch the whole result into the client first."""
    if server_side_cursors(queryset.db):
        yield from queryset.order_by("pk").iterator(chunk_size=chunk_size)
        return
    last = None
    while True:
        page = queryset.order_by("pk")
        if last is not None:
            page = page.filter(pk__gt=last)
        rows = list(page[:chunk_size])
        if not rows:
            return
        yield from rows
        last = rows[-1]["pk"] if isinstance(rows[-1], dict) else rows[-1].pk


def batched(iterable: Iterable, size: int) -> Iterator[list]:
    batch = []
    for value in iterable:
        batch.append(value)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


# --- Writing to the store ---------------------------------------------------------------------------

class HashingWriter(io.RawIOBase):
    """A binary file that passes its bytes on while counting them and hashing them (sha256), calling
    `beat()` at each write (the export job's sign of life, core.jobs.beat_job)."""

    def __init__(self, target, beat: Callable[[], None] | None = None):
        super().__init__()
        self.target, self.size, self.sha256, self.beat = target, 0, hashlib.sha256(), beat

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        data = bytes(data)
        if self.beat is not None:
            self.beat()
        self.target.write(data)
        self.sha256.update(data)
        self.size += len(data)
        return len(data)

    def tell(self) -> int:
        return self.size


def store_stream(filename: str, write: Callable[[HashingWriter], None], meta: dict | None = None,
                 role: str = AssetRole.EXPORT, beat: Callable[[], None] | None = None) -> Asset:
    """An export asset whose bytes `write(out)` writes to `out` bit by bit: straight into the storage's
    file (a local file, renamed into place when complete; on S3 a multipart upload, django-storages'
    S3File sending a part every AWS_S3_FILE_BUFFER_SIZE bytes), calling `beat()` as they go. The row
    records size and sha256."""
    asset = Asset(scene=None, role=role, meta=meta or {}, size=0, sha256="")
    storage = asset.file.storage
    name = storage.get_available_name(asset.file.field.generate_filename(asset, filename))
    if isinstance(storage, FileSystemStorage):
        path = Path(storage.path(name))
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
        try:
            with open(draft, "wb") as handle:
                out = HashingWriter(handle, beat)
                write(out)
            os.replace(draft, path)
        finally:
            draft.unlink(missing_ok=True)
    else:
        sink = _BucketSink(storage, name)
        out = HashingWriter(sink, beat)
        try:
            write(out)
        except BaseException:
            sink.abort()
            raise
        name = sink.close()
    asset.file.name = name
    asset.size, asset.sha256 = out.size, out.sha256.hexdigest()
    try:
        asset.save()
    except BaseException:
        storage.delete(name)
        raise
    return asset


class _BucketSink:
    """Bytes for an object in a bucket: a file under one part (5 MiB) is sent with one PUT; a larger one
    becomes a multipart upload (django-storages' S3File sends a part every AWS_S3_FILE_BUFFER_SIZE bytes),
    begun once the first part is full, so memory holds one part at most."""

    def __init__(self, storage, name: str, part_bytes: int = 5 * 1024 * 1024):
        self.storage, self.name, self.part_bytes = storage, name, part_bytes
        self.head, self.handle = io.BytesIO(), None

    def write(self, data: bytes) -> None:
        if self.handle is None:
            self.head.write(data)
            if self.head.tell() < self.part_bytes:
                return
            self.handle = self.storage.open(self.name, "wb")
            data, self.head = self.head.getvalue(), None
        self.handle.write(data)

    def close(self) -> str:
        if self.handle is None:
            self.head.seek(0)
            return self.storage.save(self.name, self.head)
        self.handle.close()
        return self.name

    def abort(self) -> None:
        multipart = getattr(self.handle, "_multipart", None)
        if multipart is not None:  # no half-written object left behind
            multipart.abort()
            self.handle._multipart, self.handle._is_dirty = None, False


# --- The formats ------------------------------------------------------------------------------------

def write_jsonl(lines: Iterable[dict], out) -> None:
    for block in batched(lines, TEXT_BLOCK_ROWS):
        out.write("".join(dumps(line) + "\n" for line in block).encode())


def write_json(lines: Iterable[dict], out) -> None:
    """`[`, the lines joined by `,\n`, `]`, written bit by bit."""
    write_json_raw((dumps(line).encode() for line in lines), out)


def write_json_raw(raw_lines: Iterable[bytes], out) -> None:
    """The same from the JSONL's own lines: each is already the line as `lines.dumps` writes it."""
    out.write(b"[\n")
    first = True
    for block in batched(raw_lines, TEXT_BLOCK_ROWS):
        out.write((b"" if first else b",\n") + b",\n".join(block))
        first = False
    out.write(b"\n]\n")


def write_csv(lines: Iterable[dict], out, optional: tuple[str, ...] = ()) -> None:
    """`optional`: columns some lines lack (geometry.optional_columns), empty in those rows."""
    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=False)
    writer = None
    for line in lines:
        if writer is None:
            writer = csv.DictWriter(text, fieldnames=csv_columns(line, optional), lineterminator="\n")
            writer.writeheader()
        writer.writerow({k: v if isinstance(v, str) or v is None else dumps(v) for k, v in line.items()})
    text.flush()
    text.detach()


def csv_columns(first: dict, optional: tuple[str, ...] = ()) -> list[str]:
    """The CSV's header: the first line's keys; with optional columns, those too, all in the JSONL's order."""
    return sorted({*first, *optional}) if optional else list(first)


def parquet_schema(optional: tuple[str, ...] = ()):
    """The fixed columns, then each optional one (JSON text, null where a line lacks it)."""
    import pyarrow as pa

    text, texts = pa.string(), pa.list_(pa.string())
    return pa.schema([
        ("id", text), ("external_id", text), ("scene_id", text), ("world_frame", texts), ("context_change", text),
        ("context_change_raw", text), ("change_type", text), ("question", text), ("answer_format", text),
        ("choices", texts), ("answers", texts), ("tags", text), ("provenance", text),
        *((name, text) for name in optional),
    ])


def parquet_value(line: dict, name: str, optional: tuple[str, ...] = ()):
    if name in optional:
        return dumps(line[name]) if line.get(name) is not None else None
    return dumps(line[name]) if name in ("tags", "provenance") else line[name]


def write_parquet(lines: Iterable[dict], out, optional: tuple[str, ...] = (), row_group_rows: int | None = None) -> None:
    """A fixed schema (parquet_schema: texts as strings, lists of texts as lists, tags and provenance as
    JSON text) and zstd, one row group per ROW_GROUP_ROWS lines (or `row_group_rows`); no timestamps, so the
    same lines give the same bytes. Each line's values go straight into the columns and the line is let go:
    a row group holds its values, not its dicts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = parquet_schema(optional)
    names, group = schema.names, row_group_rows or ROW_GROUP_ROWS
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        columns, rows = {name: [] for name in names}, 0
        for line in lines:
            for name in names:
                columns[name].append(parquet_value(line, name, optional))
            rows += 1
            if rows == group:
                writer.write_table(pa.table(columns, schema=schema))
                columns, rows = {name: [] for name in names}, 0
        if rows:
            writer.write_table(pa.table(columns, schema=schema))


WRITERS = {"jsonl": write_jsonl, "json": write_json, "csv": write_csv, "parquet": write_parquet}


def write_format(fmt: str, lines: Iterable[dict], out, optional: tuple[str, ...] = ()) -> None:
    """One format of a release's lines to a binary file-like `out` (bench/scale.py and tests call it);
    `optional`: the columns of the fixed-column formats that some lines lack."""
    if optional and fmt in ("csv", "parquet"):
        WRITERS[fmt](lines, out, optional)
    else:
        WRITERS[fmt](lines, out)


def format_bytes(fmt: str, lines: list[dict]) -> bytes:
    """One format of lines held in memory, as the writers above write it (a Parquet file as one row group)."""
    if fmt not in FORMATS:
        raise DomainError(f"Unknown format '{fmt}'; choose from {', '.join(FORMATS)}.", field="format")
    out, optional = io.BytesIO(), geometry.columns_of(lines)
    if fmt == "parquet":
        write_parquet(lines, out, optional, row_group_rows=max(len(lines), 1))
    else:
        write_format(fmt, lines, out, optional)
    return out.getvalue()


def write_release_format(release, fmt: str, out) -> None:
    """One format of a release, read from its JSONL as it goes (JSON: the lines as they are, unparsed)."""
    if fmt == "json":
        with release.items_file.file.open("rb") as handle:
            write_json_raw(iter_lines(handle), out)
    else:
        write_format(fmt, iter_release_lines(release), out, geometry.optional_columns(release.card))


# --- The card and the diff, accumulated as lines go by -----------------------------------------------

class CardCounts:
    """The dataset card computed line by line (counts per change type, question type and split; mean words
    per change, question and answer; the answerers' agreement), without holding the lines."""

    def __init__(self):
        self._types, self._split = question_types_of, split_name
        self.n = 0
        self.change_types, self.question_types, self.splits = Counter(), Counter(), Counter()
        self.changes: set = set()
        self.question_words = self.questions = self.answer_words = self.answers = 0
        self.agreements: list[float] = []
        self.with_geometry = 0

    def add(self, line: dict, agreement: float | None) -> None:
        self.n += 1
        self.with_geometry += geometry.GEOMETRY_KEY in line
        self.change_types[line["change_type"] or "none"] += 1
        self.question_types.update(self._types(line["tags"]))
        self.splits[self._split(line)] += 1
        self.changes.add(line["context_change"])
        if line["question"]:
            self.questions += 1
            self.question_words += len(line["question"].split())
        for answer in line["answers"]:
            if isinstance(answer, str) and answer:
                self.answers += 1
                self.answer_words += len(answer.split())
        if agreement is not None:
            self.agreements.append(agreement)

    def card(self) -> dict:
        def mean(words, count):
            return round(words / count, 2) if count else None

        return {
            "n_items": self.n,
            "by_change_type": dict(sorted(self.change_types.items())),
            "by_question_type": dict(sorted(self.question_types.items())),
            "by_split": dict(sorted(self.splits.items())),
            "words_per_change": mean_words(self.changes),
            "words_per_question": mean(self.question_words, self.questions),
            "words_per_answer": mean(self.answer_words, self.answers),
            "mean_agreement": round(sum(self.agreements) / len(self.agreements), 4) if self.agreements else None,
            "n_items_with_agreement": len(self.agreements),
        } | ({geometry.CARD_KEY: self.with_geometry} if self.with_geometry else {})


def line_digest(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=16).digest()


def streamed_diff(previous_lines: Iterable[dict], digests: dict[str, bytes]) -> dict:
    """Release ids added, removed and changed (any field differs) since the previous release, from a digest
    per line (16 bytes) instead of the lines themselves."""
    before = {line["id"]: line_digest(dumps(line).encode()) for line in previous_lines}
    return {
        "added": sorted(digests.keys() - before.keys(), key=id_order),
        "removed": sorted(before.keys() - digests.keys(), key=id_order),
        "changed": sorted((k for k in digests.keys() & before.keys() if digests[k] != before[k]), key=id_order),
    }


def freeze_lines(release, items, frames_by_scene: dict, prefix: str,
                 with_digests: bool = True) -> tuple[Asset, CardCounts, dict]:
    """Stream the release's items: each becomes a JSONL line written to the store, a row of the release's
    item list (inserted a chunk at a time) and a count on the card. Returns the JSONL asset, the card's
    counts and each line's digest (for the diff against the next release). Rows are read as values, not
    models (a third of the time)."""
    counts, digests = CardCounts(), {}  # digests only for a diff (16 bytes and an id a line)
    texts = {scene_id: [f.text for f in frames] for scene_id, frames in frames_by_scene.items()}
    changes = geometry.ReleaseGeometry()  # a change's edit, derived answers, after-state files
    values = (*LINE_VALUES, *geometry.LINE_VALUES)

    def write(out) -> None:
        for chunk in batched(iterate_chunked(items.values(*values), CHUNK_ROWS), CHUNK_ROWS):
            add_release_items(release, [v["pk"] for v in chunk])
            encoded, geometries = [], changes.chunk(chunk)
            for v in chunk:
                line = release_line(v, texts.get(v["scene_id"], []))
                if v["pk"] in geometries:
                    line[geometry.GEOMETRY_KEY] = geometries[v["pk"]]
                counts.add(line, v["agreement"])
                raw = dumps(line).encode()
                if with_digests:
                    digests[line["id"]] = line_digest(raw)
                encoded.append(raw)
            encoded.append(b"")
            out.write(b"\n".join(encoded))

    asset = store_stream(f"{prefix}.jsonl", write, beat=partial(beat_job, release.job_id))
    return asset, counts, digests


def add_release_items(release, item_ids: list[int]) -> None:
    """The release's item list, a chunk at a time: one statement on PostgreSQL (unnest), else bulk_create."""
    through = release.items.through
    connection = connections[through.objects.db]
    if connection.vendor != "postgresql":
        through.objects.bulk_create([through(release_id=release.pk, item_id=pk) for pk in item_ids])
        return
    sql.insert_release_items(connection, through, release.pk, item_ids)


def frames_for(scene_ids) -> dict[int, list]:
    """The approved world frames of these scenes (a subquery: the items are not listed), by scene, in pk
    order: crowd frames waiting for review, rejected or superseded ones are not released."""
    frames: dict[int, list] = {}
    for frame in WorldFrame.objects.filter(scene_id__in=scene_ids, status=WorldFrame.Status.APPROVED).select_related(
            "anchor").order_by("pk"):
        frames.setdefault(frame.scene_id, []).append(frame)
    return frames
