"""The in-memory release export as it was before the streamed writer (benchmarks/services.py at 1e2f47a),
kept here as the reference the streamed bytes, diff and card are compared with (no product code calls it)."""

import csv
import io
from collections import Counter

from benchmarks.releases import geometry as geo
from benchmarks.releases.lines import dumps, id_order, mean_words, release_line, split_name
from benchmarks.releases.stream import csv_columns, parquet_schema, parquet_value
from benchmarks.services import question_types_of


def release_item_line(item, frames: list[str]) -> dict:
    """An item's release line from its model (the export reads values: lines.release_line)."""
    change, scene = item.change, item.scene
    return release_line({
        "pk": item.pk, "origin_id": item.origin_id, "external_id": item.external_id, "scene_id": item.scene_id,
        "scene__external_id": scene.external_id if scene else None, "change_id": item.change_id,
        "change__refined_text": change.refined_text if change else None,
        "change__raw_text": change.raw_text if change else None,
        "change__change_type": change.change_type if change else None, "question": item.question,
        "answer_format": item.answer_format, "choices": item.choices, "answers": item.answers, "tags": item.tags,
        "unchanged_answers": item.unchanged_answers, "provenance": item.provenance,
    }, frames)


def release_diff(previous_lines: list[dict], lines: list[dict]) -> dict:
    """Release ids added, removed and changed (any field differs) since the previous release."""
    before = {line["id"]: line for line in previous_lines}
    after = {line["id"]: line for line in lines}
    return {
        "added": sorted(after.keys() - before.keys(), key=id_order),
        "removed": sorted(before.keys() - after.keys(), key=id_order),
        "changed": sorted((k for k in after.keys() & before.keys() if after[k] != before[k]), key=id_order),
    }


def dataset_card(lines: list[dict], agreements: list[float]) -> dict:
    """Counts per change type, question type and split; mean words per change, question and answer."""
    question_types = Counter(t for line in lines for t in question_types_of(line["tags"]))
    return {
        "n_items": len(lines),
        "by_change_type": dict(sorted(Counter(line["change_type"] or "none" for line in lines).items())),
        "by_question_type": dict(sorted(question_types.items())),
        "by_split": dict(sorted(Counter(split_name(line) for line in lines).items())),
        "words_per_change": mean_words({line["context_change"] for line in lines}),
        "words_per_question": mean_words(line["question"] for line in lines),
        "words_per_answer": mean_words(a for line in lines for a in line["answers"] if isinstance(a, str)),
        "mean_agreement": round(sum(agreements) / len(agreements), 4) if agreements else None,
        "n_items_with_agreement": len(agreements),
    } | ({geo.CARD_KEY: n} if (n := sum(geo.GEOMETRY_KEY in line for line in lines)) else {})


def _csv_bytes(lines: list[dict]) -> bytes:
    """One row per item; lists and objects as JSON text so nothing is lost."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=csv_columns(lines[0], geo.columns_of(lines)), lineterminator="\n")
    writer.writeheader()
    for line in lines:
        writer.writerow({k: v if isinstance(v, str) or v is None else dumps(v) for k, v in line.items()})
    return out.getvalue().encode()


def _parquet_bytes(lines: list[dict]) -> bytes:
    """The whole table at once, one row group."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    optional = geo.columns_of(lines)
    schema = parquet_schema(optional)
    columns = {name: [parquet_value(line, name, optional) for line in lines] for name in schema.names}
    out = pa.BufferOutputStream()
    pq.write_table(pa.table(columns, schema=schema), out, compression="zstd")
    return out.getvalue().to_pybytes()


def format_bytes(fmt: str, lines: list[dict]) -> bytes:
    if fmt == "parquet":
        return _parquet_bytes(lines)
    if fmt == "json":
        return ("[\n" + ",\n".join(dumps(line) for line in lines) + "\n]\n").encode()
    return _csv_bytes(lines)
