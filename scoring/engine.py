"""One scoring run: gold rows and predictions in, the result object out.

Shared by `score()` and the command line. Bad records never stop a run: each is
reported in `errors` with where it came from, and the rest is scored.
"""

import contextlib
import gc
import itertools
import statistics
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from . import causalspatial, hypo3d, m3verse, spatial457, threedsrbench, uncertainty
from .family import EXTRACTION_METHODS, Extraction, Family, Groups, Outcome, Run, Tallies
from .records import GoldItem, Prediction, RecordError, parse_gold, parse_prediction

REGISTRY: dict[str, Family] = {
    family.name: family
    for family in (
        hypo3d.FAMILY,
        threedsrbench.FAMILY,
        causalspatial.FAMILY,
        spatial457.FAMILY,
        m3verse.FAMILY,
    )
}
FAMILIES = tuple(REGISTRY)


@dataclass(frozen=True)
class Source:
    """Records with their positions, and how a message names a position: "gold line {}", "gold[{}]"."""

    records: Iterable[tuple[int, object]]
    place: str


_pause_lock = threading.Lock()
_pause_depth = 0
_collector_was_enabled = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a run, restoring it when the last concurrent run ends.

    A run builds a few objects per row and no reference cycles; meanwhile full collections
    would walk every object of the process again and again (a quarter of the time of a
    100,000-row run). Reference counting still frees everything as usual.
    """
    global _pause_depth, _collector_was_enabled
    with _pause_lock:
        if _pause_depth == 0:
            _collector_was_enabled = gc.isenabled()
            gc.disable()
        _pause_depth += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pause_depth -= 1
            if _pause_depth == 0 and _collector_was_enabled:
                gc.enable()


def get_family(name: str) -> Family:
    if name not in REGISTRY:
        raise ValueError(f"unknown family {name!r}; expected one of {', '.join(FAMILIES)}")
    return REGISTRY[name]


def resolve_profile(family: Family, name: str | None) -> str:
    name = family.default_profile if name is None else name
    if name not in family.profiles:
        raise ValueError(
            f"unknown profile {name!r} for {family.name}; expected one of {', '.join(family.profiles)}"
        )
    return name


def load_gold(family: Family, source: Source, errors: list[str]) -> list[GoldItem]:
    items: list[GoldItem] = []
    seen: set[str] = set()
    for position, record in source.records:
        try:
            item = parse_gold(record)
            if item.answer_format not in family.answer_formats:
                raise RecordError(f"answer_format {item.answer_format!r} is not used by {family.name}")
            problem = family.check(item)
            if problem:
                raise RecordError(problem)
        except RecordError as error:
            errors.append(f"{source.place.format(position)}: {error}")
            continue
        if item.id in seen:
            errors.append(f"{source.place.format(position)}: duplicate id {item.id!r}")
            continue
        seen.add(item.id)
        item.tags = family.derive_tags(item)
        items.append(item)
    return items


def load_predictions(source: Source, ids: set[str], errors: list[str]) -> dict[tuple[str, int], Prediction]:
    predictions: dict[tuple[str, int], Prediction] = {}
    for position, record in source.records:
        try:
            pred = parse_prediction(record)
        except RecordError as error:
            errors.append(f"{source.place.format(position)}: {error}")
            continue
        key = (pred.id, pred.repeat)
        if pred.id not in ids:
            errors.append(f"{source.place.format(position)}: unknown id {pred.id!r}")
        elif key in predictions:
            errors.append(
                f"{source.place.format(position)}: duplicate prediction for id {pred.id!r} "
                f"repeat {pred.repeat}; the first is kept"
            )
        else:
            predictions[key] = pred
    return predictions


def _label(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _tag_labels(item: GoldItem, tag: str) -> list[str]:
    value = item.tags.get(tag)
    if type(value) is str:
        return [value]
    if value is None:
        return []
    return [_label(v) for v in value] if isinstance(value, list) else [_label(value)]


def group_rows(items: list[GoldItem], spec: str) -> Groups:
    """`TAG=VALUE` -> rows having that value (a list puts a row in each); `a+b` crosses two tags.

    A row without the tag is in no group.
    """
    tags = spec.split("+")
    by_value: dict[str, list[int]] = {}
    for row, item in enumerate(items):
        if len(tags) == 1:
            labels = _tag_labels(item, spec)
        else:
            labels = [
                "+".join(combo) for combo in itertools.product(*(_tag_labels(item, tag) for tag in tags))
            ]
        for label in labels:
            by_value.setdefault(label, []).append(row)
    return {f"{spec}={value}": by_value[value] for value in sorted(by_value)}


def metric_values(family: Family, tallies: Tallies, key) -> dict[str, float]:
    return {
        metric: total[0] if metric in family.counts else 100 * total[0] / total[1]
        for metric, total in tallies.get(key, {}).items()
    }


def combine_runs(family: Family, metrics: list[str], runs: list[dict[str, float]]) -> dict:
    """Means over repeats of per-repeat values, with population standard deviations when repeated."""
    combined: dict = {}
    spreads: dict = {}
    for metric in metrics:
        values = [run[metric] for run in runs if metric in run]
        if not values:
            combined[metric] = None
        elif len(runs) == 1 and metric in family.counts:
            combined[metric] = values[0]
        else:
            combined[metric] = round(statistics.fmean(values), 2)
        if len(runs) > 1:
            spreads[f"{metric}_std"] = round(statistics.pstdev(values), 2) if values else None
    return {**combined, **spreads}


def grouping(items: list[GoldItem], by: Iterable[str]) -> Groups:
    """Every row (key None), then the rows of each value of each `by` spec."""
    groups: Groups = {None: list(range(len(items)))}
    for spec in dict.fromkeys(by):
        groups.update(group_rows(items, spec))
    return groups


def questions_per_group(family: str, gold: list[dict], by: Iterable[str] = ()) -> dict:
    """{group key (None: every row): how many questions its gold rows hold}, the rows of one question (its
    protocol variants: 3DSRBench's rotated and mirrored rows) counted once; unreadable rows left out."""
    scorer = get_family(family)
    items = load_gold(scorer, Source(enumerate(gold), "gold[{}]"), [])
    return {key: len({scorer.unit_key(items[row]) for row in rows}) for key, rows in grouping(items, by).items()}


def combined_metrics(
    family: Family, items: list[GoldItem], runs: list[list[Outcome]], metrics: list[str], groups: Groups,
    **tally_args,
) -> dict:
    """{group key: metrics} from the outcomes of each repeat."""
    prepared = family.prepare(items)
    per_run = [family.tally(prepared, outcomes, groups, **tally_args) for outcomes in runs]
    return {
        key: combine_runs(family, metrics, [metric_values(family, tallies, key) for tallies in per_run])
        for key in groups
    }


def summarize(
    family: Family,
    items: list[GoldItem],
    runs: list[list[Outcome]],
    metrics: list[str],
    by: Iterable[str] = (),
    **tally_args,
) -> tuple[dict, dict]:
    """(overall, by) metrics from the outcomes of each repeat."""
    combined = combined_metrics(family, items, runs, metrics, grouping(items, by), **tally_args)
    overall = combined.pop(None)
    return overall, combined


def add_intervals(
    family: Family, items: list[GoldItem], runs: list[list[Outcome]], groups: Groups, combined: dict,
    bootstrap: uncertainty.Bootstrap,
) -> dict:
    """Puts `ci` ({metric: [low, high]}) in each group's metrics; returns what they were computed over."""
    found, about = uncertainty.intervals(family, items, runs, groups, combined, bootstrap)
    for key, values in combined.items():
        values["ci"] = found[key]
    return about


def score_records(
    family: Family,
    gold: Source,
    predictions: Source,
    profile: str | None = None,
    by: Iterable[str] = (),
    run: Run | None = None,
    rows: bool = False,
    units: bool = False,
) -> dict:
    run = run or Run()
    profile = resolve_profile(family, profile)
    with collector_paused():
        return _score_records(family, gold, predictions, profile, by, run, rows, units)


def _score_records(
    family: Family, gold: Source, predictions: Source, profile: str, by: Iterable[str], run: Run, rows: bool,
    units: bool,
) -> dict:
    settings = family.profiles[profile]
    reported = len(run.errors)
    items = load_gold(family, gold, run.errors)
    preds = load_predictions(predictions, {item.id for item in items}, run.errors)
    # every error so far left a record out: unreadable, invalid, duplicate or an unknown id
    dropped = len(run.errors) - reported
    repeats = sorted({repeat for _, repeat in preds}) or [0]
    runs: list[list[Outcome]] = []
    methods = dict.fromkeys(EXTRACTION_METHODS, 0)
    read: list[dict] = []
    extract = family.extract
    for repeat in repeats:
        row_preds: list[Prediction | None] = []
        for item in items:
            pred = preds.get((item.id, repeat))
            if pred is None:
                which = f"id {item.id!r}" if len(repeats) == 1 else f"id {item.id!r} repeat {repeat}"
                run.errors.append(f"{which}: no prediction, scored as wrong")
            row_preds.append(pred)
        extractions: list[Extraction | None] = [
            None if pred is None else extract(item, pred, settings, run)
            for item, pred in zip(items, row_preds, strict=True)
        ]
        for item, extraction in zip(items, extractions, strict=True):
            if extraction is not None:
                methods[extraction.method] += 1
                if rows:
                    read.append({"id": item.id, "repeat": repeat, "answer": extraction.answer,
                                 "method": extraction.method})
        runs.append(family.score_rows(items, row_preds, extractions, settings, run))
    # an optional metric (hypo3d SBERT, judge) is computed for every row of a run or for none
    computed = {metric for outcomes in runs if outcomes for metric in outcomes[0]}
    metrics = [*family.metrics, *(metric for metric in family.optional_metrics if metric in computed)]
    groups = grouping(items, by)
    combined = combined_metrics(family, items, runs, metrics, groups)
    about = add_intervals(family, items, runs, groups, combined, run.ci) if run.ci else None
    paired = uncertainty.unit_tallies(family, items, runs, groups, run.ci and run.ci.cluster) if units else None
    overall = combined.pop(None)
    return {
        "family": family.name,
        "profile": profile,
        "n_items": len(items),
        "n_predictions": len(preds),
        "n_dropped": dropped,
        "overall": overall,
        **({"ci": overall["ci"], "uncertainty": about} if about else {}),
        "by": combined,
        "extraction": methods,
        "errors": run.errors,
        **({"rows": read} if rows else {}),
        **({"units": paired} if units else {}),
    }


def score(
    family: str,
    gold: list[dict],
    predictions: list[dict],
    profile: str | None = None,
    by: list[str] | tuple = (),
    *,
    judge=None,
    sbert: bool | None = None,
    rows: bool = False,
    ci: float | None = None,
    ci_seed: int = uncertainty.DEFAULT_SEED,
    cluster: str | None = None,
    units: bool = False,
) -> dict:
    """Score predictions against gold rows (dicts in the JSONL line formats); the object the CLI prints.

    judge: 3dsrbench only, a callable judge(question, {letter: option text}, output) -> letter or None
    asked when no letter can be read. sbert: hypo3d only, True to require SBERT, False to skip it,
    None to compute it when the optional extra is installed. rows: also list, per prediction scored,
    the answer read and how (`{"id", "repeat", "answer", "method"}`). ci: a level such as 0.95 adds
    `ci` ({metric: [low, high]}) to `overall` and each `by` group, a bootstrap seeded by ci_seed over
    items (3DSRBench: questions), or over the values of the tag `cluster` (a human row's participants).
    units: also give each unit's tallies (`uncertainty.unit_tallies`), what `scoring.tables` pairs
    two rows on to mark a best model only where a paired test separates it from the next.
    """
    return score_records(
        get_family(family),
        Source(enumerate(gold), "gold[{}]"),
        Source(enumerate(predictions), "predictions[{}]"),
        profile,
        by,
        Run(judge=judge, sbert=sbert,
            ci=None if ci is None else uncertainty.Bootstrap(ci, seed=ci_seed, cluster=cluster)),
        rows=rows,
        units=units,
    )
