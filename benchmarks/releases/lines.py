"""A release's lines: the item columns a line is made of (LINE_VALUES) and the line made from them
(release_line), the lines read back from a release's JSONL, and the small rules both the release's life
(life.py) and the streamed writer (stream.py) follow: the JSON text of a line, the order of release ids,
a text's mean words, a line's split, an asset's path in a release folder."""

import json
from collections.abc import Iterator
from pathlib import PurePosixPath

READ_BLOCK = 1 << 20

# An item's columns a release line is made of (stream.py reads them as values, without models).
LINE_VALUES = ("pk", "origin_id", "external_id", "scene_id", "scene__external_id", "change_id", "change__refined_text",
               "change__raw_text", "change__change_type", "question", "answer_format", "choices", "answers", "tags",
               "unchanged_answers", "provenance", "agreement")


def dumps(data) -> str:
    """A line (or any value of one) as the release's JSON text: sorted keys, text as it is."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def release_line(v: dict, frames: list[str]) -> dict:
    """A release line from an item's LINE_VALUES (Item.release_id, ContextChange.text)."""
    changed = v["change_id"] is not None
    return {
        "id": v["origin_id"] or str(v["pk"]),
        "external_id": v["external_id"] or None,
        "scene_id": v["scene__external_id"] if v["scene_id"] is not None else None,
        "world_frame": frames,
        "context_change": (v["change__refined_text"] or v["change__raw_text"]) if changed else None,
        "context_change_raw": v["change__raw_text"] if changed else None,
        "change_type": v["change__change_type"] if changed else None,
        "question": v["question"],
        "answer_format": v["answer_format"],
        "choices": v["choices"],
        "answers": v["answers"],
        "tags": v["tags"],
        # Hypo3D Tables 3-4: the answers on the unchanged scene (benchmarks.counterfactual)
        "unchanged_answers": v["unchanged_answers"] or [],
        "provenance": v["provenance"],
    }


def id_order(release_id: str):
    """Release ids in order: numbers by value first, then the others by text."""
    return (0, int(release_id), "") if release_id.isdigit() else (1, 0, release_id)


def mean_words(texts) -> float | None:
    texts = [t for t in texts if t]
    return round(sum(len(t.split()) for t in texts) / len(texts), 2) if texts else None


def split_name(line: dict) -> str:
    return (line.get("tags") or {}).get("split") or "test"


def release_asset_path(asset) -> str:
    """Where an asset lies in an exported release folder (under assets/): named by scene and role,
    not by database ids, so an imported release lists the same paths when exported again."""
    return f"{asset.scene.external_id}/{asset.role}/{PurePosixPath(asset.file.name).name}"


def iter_release_lines(release) -> Iterator[dict]:
    """The release's JSONL read line by line (the whole file is never in memory)."""
    if not release.items_file:
        return
    with release.items_file.file.open("rb") as handle:
        for raw in iter_lines(handle):
            yield json.loads(raw)


def iter_lines(handle) -> Iterator[bytes]:
    """Lines ending in b"\\n" only (a JSON line may hold U+2028 or a lone \\r in no other form)."""
    rest = b""
    while block := handle.read(READ_BLOCK):
        *complete, rest = (rest + block).split(b"\n")
        yield from (line for line in complete if line)
    if rest:
        yield rest


def release_lines(release) -> list[dict]:
    """Every line in memory (the harness files need them together); split at "\\n" only, not at the U+2028
    a text may hold (str.splitlines cut such a line in two)."""
    return list(iter_release_lines(release))
