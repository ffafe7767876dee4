"""Item files of the five families onto Item / ContextChange (and images onto Scene / Asset), in the
shapes their authors publish, driven by one mapping per family (a module each: hypo3d,
threedsrbench, causalspatial, spatial457, m3verse).

A family's mapping turns a parsed file into plain records (`ItemRecord`, rows.py); one loop
(item_file.py) validates and writes them for every family. A file either imports whole or writes
nothing (stored image bytes included), and every problem is reported with where it is
(`scene0001_00[2].questions_answers[0]`, `row 3`, `record 2`) and why. Importing is idempotent: an
item whose benchmark id (`external_id`) is already there is updated in place when the file says
something else, or left alone. Formats: ../shared/FORMATS.md; layouts and examples: docs/IMPORT.md."""

from .causalspatial import parse_options
from .item_file import import_item_file, texts_imported
from .rows import ImportFileError, ImportReport, as_rows, read_json_or_jsonl

__all__ = [
    "ImportFileError",
    "ImportReport",
    "as_rows",
    "import_item_file",
    "parse_options",
    "read_json_or_jsonl",
    "texts_imported",
]
