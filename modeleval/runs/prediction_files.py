"""Prediction files: outputs produced elsewhere (a tool's result file, a model's recorded outputs),
keyed to the platform's items.

scoring.predfiles reads each tool's published shape into records with key candidates (the benchmark's
own ids, then a VLMEvalKit `index`). A key names an item by its external id, else by its source index
(an `index` is tried against source indexes first), else by its release id when it has no external id;
an id with a protocol suffix (`X-1`, `X-flip`) that names no item is that variant of item X. Records are
replayed to the scorer in file order, so its result -- errors and `n_dropped` included -- is what
`python -m scoring` prints for the same gold and the same lines keyed by scoring id."""

import dataclasses
import io
import re
from dataclasses import dataclass

from benchmarks import protocols
from benchmarks.models import Item
from benchmarks.protocols import Protocol, Variant
from benchmarks.services import gold_row
from scoring import predfiles

from .run_options import item_variants

_VARIANT_SUFFIX = re.compile(r"^(?P<base>.+?)-(?P<variant>flip(?:-[1-9]\d*)?|[1-9]\d*)$")
_EVERY_VARIANT = Protocol(circular=True, flip=True)


class AmbiguousKey(ValueError):
    pass


class ItemKeys:
    """A benchmark's (or a release's) items by the keys prediction files carry."""

    def __init__(self, items):
        self.items = list(items)
        self.by_external, self.by_index, self.by_release, self.by_question_index = {}, {}, {}, {}
        for item in self.items:
            # Spatial457's question JSON numbers questions per level file (external id `L2_objects/0`):
            # a bare question_index names an item only where one level holds it
            question_index = (item.tags or {}).get("question_index")
            if question_index is not None:
                self.by_question_index.setdefault(str(question_index), []).append(item)
            if item.external_id:
                self.by_external.setdefault(item.external_id, []).append(item)
            else:
                self.by_release.setdefault(item.release_id, []).append(item)
            if item.source_index:
                self.by_index.setdefault(item.source_index, []).append(item)

    def find(self, field: str, value: str, tables=None) -> Item | None:
        if tables is None:
            index_first = field == predfiles.INDEX_FIELD
            tables = (self.by_index, self.by_external, self.by_release) if index_first else (
                self.by_external, self.by_index, self.by_release, self.by_question_index)
        for table in tables:
            found = table.get(value, [])
            if len(found) > 1:
                raise AmbiguousKey(f"{field} {value!r} names {len(found)} items "
                                   f"({', '.join(f'#{item.pk}' for item in found[:5])})")
            if found:
                return found[0]
        return None

    def resolve(self, keys) -> tuple[Item, Variant] | None:
        """The item (and protocol variant) the first key candidate that names one names."""
        for field, value in keys:
            item = self.find(field, value)
            if item is not None:
                return item, protocols.VANILLA
        for field, value in keys:
            match = _VARIANT_SUFFIX.match(value) if field != predfiles.INDEX_FIELD else None
            item = match and self.find(field, match["base"], (self.by_external, self.by_release))
            if item:
                variant = Variant.parse(match["variant"])
                if variant in item_variants(_EVERY_VARIANT, item.choices, item.tags):
                    return item, variant
        return None


@dataclass
class ResolvedLine:
    """One prediction line keyed by scoring id (`id` suffixed for a variant), with where it came from;
    `item` is None for a key that names no item (the line keeps its own id, so the scorer reports it)."""

    where: str
    line: object
    item: Item | None = None
    variant: Variant = protocols.VANILLA


def read_prediction_files(files: list[tuple[str, bytes]]) -> list:
    """Every record of the files in order, with the read errors where they occurred: a list of
    PredictionRecord and error strings. With several files, file k is repeat k (CausalSpatial's runs).
    Raises PredictionFileError naming the file that cannot be read at all."""
    events: list = []
    for number, (name, data) in enumerate(files):
        errors: list[str] = []
        label = "prediction" if len(files) == 1 else name
        try:
            if name.lower().endswith(".xlsx"):
                found = predfiles.table_records(workbook_rows(data), label, errors)
            else:
                found = predfiles.iter_records(data, name, errors, label)
            for record in found:
                events += errors
                errors.clear()
                if len(files) > 1:
                    record = _as_repeat(record, number, events)
                if record is not None:
                    events.append(record)
        except predfiles.PredictionFileError as error:
            raise predfiles.PredictionFileError(f"{name}: {error}") from None
        events += errors
    return events


def workbook_rows(data: bytes):
    """The first sheet of an .xlsx workbook (a VLMEvalKit result file), row by row, header first."""
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as error:  # zipfile, XML and openpyxl errors alike: not a readable workbook
        raise predfiles.PredictionFileError(f"not a readable .xlsx workbook ({type(error).__name__})") from None
    try:
        for row in workbook.worksheets[0].iter_rows(values_only=True):
            yield list(row)
    finally:
        workbook.close()


def _as_repeat(record, repeat: int, errors: list):
    if not isinstance(record.line, dict):
        return record
    if record.line.get("repeat", 0) != 0:
        errors.append(f"{record.where}: a file among several is one repeat, so its lines name no repeat; "
                      "left out")
        return None
    record.line = {**record.line, "repeat": repeat}
    return record


def resolve_predictions(items, events: list) -> list:
    """Records keyed to the items (`ResolvedLine`s), errors kept in place; an ambiguous key is an error
    naming it and its record is left out. See `ItemKeys` for how a key names an item."""
    keys = ItemKeys(items)
    resolved = []
    for event in events:
        if isinstance(event, str):
            resolved.append(event)
            continue
        try:
            found = keys.resolve(event.keys)
        except AmbiguousKey as error:
            resolved.append(f"{event.where}: {error}; left out")
            continue
        if found is None:
            line = event.line if not event.keys else {**event.line, "id": event.keys[0][1]}
            resolved.append(ResolvedLine(event.where, line))
            continue
        item, variant = found
        line = {**event.line, "id": protocols.row_id(item.scoring_id, variant)}
        if variant.rotation and "choices" not in line:
            line["choices"] = protocols.shown_choices(item.choices, variant)  # the order a run shows
        resolved.append(ResolvedLine(event.where, line, item, variant))
    return resolved


def file_protocol(resolved: list) -> Protocol:
    """The protocol a file's variant ids ask for (vanilla when every id names an item)."""
    variants = [entry.variant for entry in resolved if isinstance(entry, ResolvedLine) and entry.item]
    return Protocol(circular=any(v.rotation for v in variants), flip=any(v.flip for v in variants))


def gold_lines(items, protocol: Protocol | None = None) -> list[dict]:
    """The items' gold lines as `python -m scoring --gold` reads them, one per item variant."""
    protocol = protocol or Protocol()
    return [
        protocols.variant_gold(gold_row(item), variant)
        for item in items
        for variant in item_variants(protocol, item.choices, item.tags)
    ]



@dataclass
class RecordedFile:
    """Outputs read for a recorded-outputs model: {(scoring id, variant, repeat): output}, the records
    left out (unknown ids, invalid, duplicates: each an error string) and the run they ask for."""

    outputs: dict = dataclasses.field(default_factory=dict)
    problems: list[str] = dataclasses.field(default_factory=list)
    protocol: Protocol = dataclasses.field(default_factory=Protocol)
    repeats: int = 1
