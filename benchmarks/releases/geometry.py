"""Releases carry a change's geometry: each line of an item whose change has an edit gets
`change_geometry`, and the change's after-state files (scenes/after_state.py) travel as release assets.

    "change_geometry": {"change": "<key>",              # the change's release key (change_key)
                        "object_ids": [3, 5],           # the scene objects the edit moves, turns, scales or removes
                        "edit": {...},                  # ContextChange.edit as stored: per object the transform
                                                        # (translation, rotation, scale, removed), `added` boxes
                                                        # (label, center, size, yaw), `world` (or null)
                        "derived_answer": "left",       # what the geometry after the change answers the item's
                        "agrees": true,                 # question (null where no template fits), and whether
                                                        # it equals a written answer (Hypo3D's normalisation)
                        "after_state": {"viewer_points": "<path>", "topview_plain": "<path>",
                                        "topview_semantic": "<path>"}}   # the files under assets/, {} if none

A line of an item whose change has no edit has no such key (JSONL, JSON); the fixed-column formats (CSV,
Parquet, the Hugging Face dataset) get a `change_geometry` column (JSON text, null where a change has no
edit) only in a release that carries some geometry (the card's `n_items_with_geometry`). Hypo3D's published
shape (published.hypo3d_file) gives such a change `change_geometry` ({object_ids, edit}) and each of
its questions `derived_answer` and `agrees` (its importer reads neither back: the release import does).

The derived answers are review's (review.geometry.derived_answers over annotation/change_answers.py), and
benchmarks imports neither: review answers `derived_answers_asked` (connected in review/apps.py), asked
when the release is frozen, so they are those of the questions as released. In the manifest an after-state
asset's meta names its change by release key (`after_state: "<key>"`), not by database id; the import maps
it back to the change it rebuilds (with its edit), so a re-export gives the same bytes.
"""

import hashlib
import json

from django.dispatch import Signal

from ..edit_digest import edit_digest
from ..selectors import AFTER_STATE_KEY
from .lines import release_asset_path

# Sent with `change_ids`; a receiver returns {item id: {"derived": str | None, "agrees": bool | None}}.
derived_answers_asked = Signal()
GEOMETRY_KEY = "change_geometry"
CARD_KEY = "n_items_with_geometry"
LINE_VALUES = ("change__edit",)  # beside lines.LINE_VALUES


def change_key(scene_external_id, change_type, raw_text, text) -> str:
    """A change's key in a release: from what the release says of it (the import rebuilds the same)."""
    words = json.dumps([scene_external_id, change_type, raw_text, text], ensure_ascii=False)
    return hashlib.sha256(words.encode()).hexdigest()[:16]


def line_change_key(v: dict) -> str:
    text = v["change__refined_text"] or v["change__raw_text"]
    return change_key(v["scene__external_id"], v["change__change_type"], v["change__raw_text"], text)


def derived_answers(change_ids) -> dict[int, dict]:
    found: dict[int, dict] = {}
    if change_ids:
        for _, answered in derived_answers_asked.send(sender=None, change_ids=sorted(change_ids)):
            found.update(answered or {})
    return found


class ReleaseGeometry:
    """The `change_geometry` of release lines, a chunk of LINE_VALUES rows at a time: each change's derived
    answers and after-state files are read once per chunk."""

    def __init__(self):
        self.n_items = 0

    def chunk(self, rows: list[dict]) -> dict[int, dict]:
        """Item pk -> change_geometry for the rows whose change has an edit."""
        from ..selectors import after_state_assets

        edited = [v for v in rows if v.get("change_id") is not None and v.get("change__edit")]
        if not edited:
            return {}
        change_ids = {v["change_id"] for v in edited}
        answers = derived_answers(change_ids)
        from ..models import ContextChange

        files = {}
        for change in ContextChange.objects.filter(pk__in=change_ids).select_related("scene"):
            files[change.pk] = {role: release_asset_path(asset) for role, asset in sorted(after_state_assets(change).items())}
        out = {}
        for v in edited:
            edit = v["change__edit"]
            answer = answers.get(v["pk"], {})
            out[v["pk"]] = {"change": line_change_key(v), "object_ids": [o["instance_id"] for o in edit.get("objects", [])],
                            "edit": edit, "derived_answer": answer.get("derived"), "agrees": answer.get("agrees"),
                            "after_state": files.get(v["change_id"], {})}
        self.n_items += len(out)
        return out


def optional_columns(card: dict | None) -> tuple[str, ...]:
    """The columns a release's fixed-column formats add: `change_geometry` where it carries geometry."""
    return (GEOMETRY_KEY,) if (card or {}).get(CARD_KEY) else ()


def columns_of(lines: list[dict]) -> tuple[str, ...]:
    """The same, read from the lines themselves (the in-memory writers)."""
    return (GEOMETRY_KEY,) if any(GEOMETRY_KEY in line for line in lines) else ()


# --- the manifest and the import ---------------------------------------------------------------------


def manifest_assets(assets, change_keys: dict[int, str], current: dict[int, str]):
    """The assets a release's manifest lists, each with its meta as the manifest writes it: an after-state's
    only when its change is released and it was made from the change's edit as it is (`current`: change pk ->
    edit digest), its `after_state` the change's release key."""
    for asset in assets:
        meta = asset.meta or {}
        if AFTER_STATE_KEY not in meta:
            yield asset, meta
            continue
        change_id = meta[AFTER_STATE_KEY]
        if change_id in change_keys and current.get(change_id) == meta.get("edit_digest"):
            yield asset, {**meta, AFTER_STATE_KEY: change_keys[change_id]}


def released_changes(items) -> tuple[dict[int, str], dict[int, str]]:
    """(change pk -> release key, change pk -> edit digest) of the released items' changes that have edits."""
    keys, digests = {}, {}
    rows = items.exclude(change=None).exclude(change__edit=None).values(
        "change_id", "change__edit", "scene__external_id", "change__change_type", "change__raw_text",
        "change__refined_text")
    for v in rows.order_by():
        if v["change__edit"] and v["change_id"] not in keys:
            keys[v["change_id"]] = line_change_key(v)
            digests[v["change_id"]] = edit_digest(v["change__edit"])
    return keys, digests


def imported_edit(line: dict) -> dict | None:
    """The edit an imported line's change gets back (None for a line without geometry)."""
    geometry = line.get(GEOMETRY_KEY)
    return geometry.get("edit") if isinstance(geometry, dict) else None


def imported_meta(entry: dict, changes_by_key: dict) -> dict:
    """An asset's meta as stored on import: an after-state's `after_state` is the rebuilt change's pk."""
    from core.errors import DomainError

    meta = entry.get("meta") or {}
    if AFTER_STATE_KEY not in meta:
        return meta
    change = changes_by_key.get(meta[AFTER_STATE_KEY])
    if change is None:
        raise DomainError(f"Asset file {entry.get('path')} is the after-state of a change the release does not "
                          "hold.", field="assets")
    return {**meta, AFTER_STATE_KEY: change.pk}


def published_geometry(items) -> tuple[dict[int, dict], dict[int, dict]]:
    """For the Hypo3D published shape (published.hypo3d_file): change pk -> {object_ids, edit} of the
    items' changes that have an edit, and item pk -> {derived, agrees} of their questions."""
    edited = {item.change_id: item.change for item in items if item.change is not None and item.change.edit}
    by_change = {pk: {"object_ids": [o["instance_id"] for o in change.edit.get("objects", [])], "edit": change.edit}
                 for pk, change in edited.items()}
    return by_change, derived_answers(set(edited))
