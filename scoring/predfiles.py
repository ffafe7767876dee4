"""Prediction files in the shapes their tools publish, read into records a caller can key to its items.

Pure Python: the standard library only (a `.xlsx` workbook's rows are read by the caller, with openpyxl,
and given to `table_records`). The shapes:

- the scorer's prediction lines, JSONL `{"id", "output", "repeat"?, "choices"?, "judge"?}`: each line is
  passed on as it is, so the scorer judges it exactly as `python -m scoring` does;
- VLMEvalKit result files, `.xlsx`, `.tsv` or `.csv` with a `prediction` column and an `index` column
  (usually the benchmark's whole TSV plus `prediction`; 3DSRBench's also has `qid`);
- lmms-eval sample logs, JSONL lines `{"doc_id", "doc", "target", "resps", "filtered_resps", ...}` (or the
  older JSON `{"logs": [...]}`): the output is `filtered_resps[0]` when present, else `resps[0][0]`, and the
  keys are the dataset row's own ids (`doc`'s qid, question_id, id, question_index, index);
- CausalSpatial's model output lines `{question_id, question, gt_answer, model_answer, model, not_sure, ...}`;
- Hypo3D prediction files: the item file `{scene_id: [{context_change, questions_answers: [...]}]}` with
  `predicted_answer` added to each QA (a QA without one is no prediction).

Each record is one scorer prediction line plus its key candidates, `(field, value)` pairs, the benchmark's
own ids first and a VLMEvalKit `index` last; the caller maps them to its ids. A record that cannot be read
is reported in `errors` with where it is and left out.
"""

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .records import read_jsonl

# The benchmark's own ids, in the order a record's key is looked for: 3DSRBench `qid`, Hypo3D /
# CausalSpatial / M3-Verse `question_id`, CausalSpatial `id`, Spatial457 `question_index`.
ID_FIELDS = ("qid", "question_id", "id", "question_index")
# A VLMEvalKit row number: results key by it.
INDEX_FIELD = "index"
KEY_FIELDS = (*ID_FIELDS, INDEX_FIELD)
SPREADSHEET_SUFFIXES = (".xlsx", ".tsv", ".csv")


class PredictionFileError(ValueError):
    """The file as a whole cannot be read as predictions (no `prediction` column, not a workbook)."""


@dataclass(slots=True)
class PredictionRecord:
    """One prediction: where it is (`prediction line 3`, `preds.xlsx row 7`), its key candidates, and the
    scorer line as read (`{"id", "output", "repeat", ...}`; for a scorer line, exactly the line)."""

    where: str
    keys: tuple[tuple[str, str], ...]
    line: object


def key_text(value) -> str:
    """An id as text: `7`, `7.0` (a spreadsheet's number) and `"7"` are all `7`; no id is ""."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value).strip()


_WHOLE_NUMBER_TEXT = re.compile(r"^(\d+)\.0*$")


def key_candidates(row: dict) -> tuple[tuple[str, str], ...]:
    keys = tuple((field, text) for field in KEY_FIELDS if (text := key_text(row.get(field))))
    # a table written through a float column (pandas with a gap) says `3.0` for row 3
    return tuple((field, _WHOLE_NUMBER_TEXT.sub(r"\1", text) if field == INDEX_FIELD else text)
                 for field, text in keys)


def output_text(value) -> str:
    """A cell or a JSON value as an output string (VLMEvalKit reads predictions with str(x))."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else str(value)
    return value if isinstance(value, str) else str(value)


def _record(where: str, keys, output) -> PredictionRecord:
    return PredictionRecord(where, keys, {"id": keys[0][1], "output": output_text(output), "repeat": 0})


# --- one JSON record of each tool --------------------------------------------------------------


def lmms_eval_output(sample: dict):
    """`filtered_resps[0]` (the filtered answer the task scored), else the first raw response."""
    filtered = sample.get("filtered_resps")
    if isinstance(filtered, list) and filtered:
        output = filtered[0]
    else:
        resps = sample.get("resps")
        output = resps[0] if isinstance(resps, list) and resps else ""
        output = output[0] if isinstance(output, list) and output else output
    while isinstance(output, list):  # a filter that keeps every response: its first
        output = output[0] if output else ""
    return output


def _is_lmms_eval(row: dict) -> bool:
    return "doc_id" in row and ("resps" in row or "filtered_resps" in row)


def json_record(row, where: str, errors: list[str]) -> PredictionRecord | None:
    """One JSON value of a file: an lmms-eval sample, a CausalSpatial output line, a row with
    `predicted_answer` or `prediction`, or else a scorer prediction line (kept exactly as read)."""
    if isinstance(row, dict):
        if _is_lmms_eval(row):
            doc = row.get("doc") if isinstance(row.get("doc"), dict) else {}
            return _keyed(where, key_candidates(doc), lmms_eval_output(row), errors, "its doc has no")
        for field in ("model_answer", "predicted_answer", "prediction"):
            if field in row and "output" not in row:
                return _keyed(where, key_candidates(row), row[field], errors, "no")
    # the scorer's own line: the scorer reads it (and reports what is wrong with it) itself
    value = row.get("id") if isinstance(row, dict) else None
    keys = (("id", str(value)),) if type(value) in (str, int) else ()
    return PredictionRecord(where, keys, row)


def _keyed(where: str, keys, output, errors: list[str], lacking: str) -> PredictionRecord | None:
    if not keys:
        errors.append(f"{where}: {lacking} id ({', '.join(KEY_FIELDS)}); left out")
        return None
    return _record(where, keys, output)


def _is_hypo3d(data: dict) -> bool:
    return bool(data) and all(isinstance(changes, list) for changes in data.values()) and any(
        isinstance(change, dict) and "questions_answers" in change
        for changes in data.values()
        for change in changes
    )


def hypo3d_records(data: dict, label: str, errors: list[str]) -> Iterator[PredictionRecord]:
    """Each QA with a `predicted_answer`, keyed by its question_id."""
    for scene_id, changes in data.items():
        for c, change in enumerate(changes):
            qas = change.get("questions_answers") if isinstance(change, dict) else None
            for q, qa in enumerate(qas if isinstance(qas, list) else []):
                where = f"{label} {scene_id}[{c}].questions_answers[{q}]"
                if not isinstance(qa, dict) or "predicted_answer" not in qa:
                    continue  # no prediction for this question: scored as wrong, like any missing one
                record = _keyed(where, key_candidates(qa), qa["predicted_answer"], errors, "no")
                if record is not None:
                    yield record


# --- whole files -------------------------------------------------------------------------------


def json_records(data: bytes, label: str, errors: list[str]) -> Iterator[PredictionRecord]:
    """A JSON document (Hypo3D prediction file, lmms-eval `{"logs": [...]}`, a list of rows) or JSONL."""
    document = _whole_json(data)
    if isinstance(document, dict) and _is_hypo3d(document):
        yield from hypo3d_records(document, label, errors)
        return
    if isinstance(document, dict) and isinstance(document.get("logs"), list):
        rows = [(f"{label} logs[{n}]", row) for n, row in enumerate(document["logs"])]
    elif isinstance(document, list):
        rows = [(f"{label}[{n}]", row) for n, row in enumerate(document)]
    else:  # JSONL; a file of one object that is neither of the above is its line 1
        rows = ((f"{label} line {n}", row) for n, row in read_jsonl(data.split(b"\n"), label, errors))
    for where, row in rows:
        record = json_record(row, where, errors)
        if record is not None:
            yield record


def _whole_json(data: bytes):
    """The file parsed as one JSON document, when it is one."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    stripped = text.strip()
    if not stripped.startswith(("[", "{")):
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None


def table_records(rows: Iterator[list], label: str, errors: list[str]) -> Iterator[PredictionRecord]:
    """Rows of a VLMEvalKit result table (header first): keyed by their ids and `index`, output `prediction`."""
    header = next(rows, None)
    columns = [key_text(name) for name in header or []]
    if "prediction" not in columns:
        raise PredictionFileError("no 'prediction' column (a VLMEvalKit result file has one)")
    if not set(columns) & set(KEY_FIELDS):
        raise PredictionFileError(f"no id column: expected one of {', '.join(KEY_FIELDS)}")
    for number, values in enumerate(rows, start=2):
        if all(value in (None, "") for value in values):
            continue
        row = dict(zip(columns, values, strict=False))
        record = _keyed(f"{label} row {number}", key_candidates(row), row.get("prediction"), errors, "no")
        if record is not None:
            yield record


def _delimited_rows(data: bytes, delimiter: str) -> Iterator[list]:
    text = data.decode("utf-8-sig")
    limit = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)  # base64 images in the TSV's `image` column
    try:
        yield from csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    finally:
        csv.field_size_limit(limit)


def iter_records(data: bytes, name: str, errors: list[str], label: str = "prediction") -> Iterator[PredictionRecord]:
    """Every prediction record of one file, its shape told by its name (.xlsx, .tsv, .csv) or content;
    a bad record's error is appended to `errors` before the next record comes.

    `label` starts each record's place (`prediction line 3`, the words `python -m scoring` uses).
    Raises PredictionFileError when the file as a whole is unusable."""
    lowered = name.lower()
    try:
        if lowered.endswith(".xlsx"):
            raise PredictionFileError("a workbook's rows are read by the caller (scoring imports no openpyxl); "
                                      "pass them to table_records")
        if lowered.endswith((".tsv", ".csv")):
            rows = _delimited_rows(data, "\t" if lowered.endswith(".tsv") else ",")
            yield from table_records(rows, label, errors)
        else:
            yield from json_records(data, label, errors)
    except UnicodeDecodeError:
        raise PredictionFileError("not UTF-8 text") from None
    except csv.Error as error:
        raise PredictionFileError(f"not a readable table ({error})") from None


def read_records(data: bytes, name: str, errors: list[str], label: str = "prediction") -> list[PredictionRecord]:
    return list(iter_records(data, name, errors, label))
