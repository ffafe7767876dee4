"""One scoring run: gold rows and predictions in, the result object out.

Shared by `score()` and the command line. Bad records never stop a run: each is
reported in `errors` with where it came from, and the rest is scored.
"""

import itertools
import statistics
from collections.abc import Iterable

from . import causalspatial, hypo3d, m3verse, spatial457, threedsrbench
from .family import Family, KeysOf, Outcome, Run, Tallies
from .records import GoldItem, Prediction, RecordError, parse_gold, parse_prediction

REGISTRY: dict[str, Family] = {
    family.name: family
    for family in (hypo3d.FAMILY, threedsrbench.FAMILY, causalspatial.FAMILY, spatial457.FAMILY, m3verse.FAMILY)
}
FAMILIES = tuple(REGISTRY)

# (where, record): where names the record in messages, e.g. "gold line 3" or "predictions[0]"
Located = Iterable[tuple[str, object]]


def get_family(name: str) -> Family:
    if name not in REGISTRY:
        raise ValueError(f"unknown family {name!r}; expected one of {', '.join(FAMILIES)}")
    return REGISTRY[name]


def resolve_profile(family: Family, name: str | None) -> str:
    name = family.default_profile if name is None else name
    if name not in family.profiles:
        raise ValueError(f"unknown profile {name!r} for {family.name}; expected one of {', '.join(family.profiles)}")
    return name


def load_gold(family: Family, records: Located, errors: list[str]) -> list[GoldItem]:
    items: list[GoldItem] = []
    seen: set[str] = set()
    for where, record in records:
        try:
            item = parse_gold(record)
            if item.answer_format not in family.answer_formats:
                raise RecordError(f"answer_format {item.answer_format!r} is not used by {family.name}")
            problem = family.check(item)
            if problem:
                raise RecordError(problem)
        except RecordError as error:
            errors.append(f"{where}: {error}")
            continue
        if item.id in seen:
            errors.append(f"{where}: duplicate id {item.id!r}")
            continue
        seen.add(item.id)
        tags = family.derive_tags(item)
        items.append(item if tags is item.tags else GoldItem(**{**_fields(item), "tags": tags}))
    return items


def _fields(item: GoldItem) -> dict:
    return {name: getattr(item, name) for name in GoldItem.__slots__}


def load_predictions(records: Located, ids: set[str], errors: list[str]) -> dict[tuple[str, int], Prediction]:
    predictions: dict[tuple[str, int], Prediction] = {}
    for where, record in records:
        try:
            pred = parse_prediction(record)
        except RecordError as error:
            errors.append(f"{where}: {error}")
            continue
        key = (pred.id, pred.repeat)
        if pred.id not in ids:
            errors.append(f"{where}: unknown id {pred.id!r}")
        elif key in predictions:
            errors.append(f"{where}: duplicate prediction for id {pred.id!r} repeat {pred.repeat}; the first is kept")
        else:
            predictions[key] = pred
    return predictions


def _label(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _tag_values(item: GoldItem, tag: str) -> list:
    value = item.tags.get(tag)
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def keys_for(spec: str) -> KeysOf:
    """`TAG=VALUE` for each value of the tag (a list puts the item in each); `a+b` crosses two tags."""
    tags = spec.split("+")

    def keys_of(item: GoldItem) -> list[str]:
        combos = itertools.product(*(_tag_values(item, tag) for tag in tags))
        return [f"{spec}={'+'.join(_label(value) for value in combo)}" for combo in combos]

    return keys_of


def _overall(item: GoldItem) -> tuple[None]:
    return (None,)


def _values(family: Family, tallies: Tallies, key) -> dict[str, float]:
    return {
        metric: total[0] if metric in family.counts else 100 * total[0] / total[1]
        for metric, total in tallies.get(key, {}).items()
    }


def _combine(family: Family, metrics: list[str], runs: list[dict[str, float]]) -> dict:
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


def score_records(
    family: Family,
    gold: Located,
    predictions: Located,
    profile: str | None = None,
    by: Iterable[str] = (),
    run: Run | None = None,
) -> dict:
    run = run or Run()
    profile = resolve_profile(family, profile)
    settings = family.profiles[profile]
    items = load_gold(family, gold, run.errors)
    preds = load_predictions(predictions, {item.id for item in items}, run.errors)
    repeats = sorted({repeat for _, repeat in preds}) or [0]
    specs = list(dict.fromkeys(by))
    seen_metrics: set[str] = set()
    overall_runs: list[dict[str, float]] = []
    by_runs: list[dict[str, dict[str, float]]] = []
    for repeat in repeats:
        row_preds: list[Prediction | None] = []
        for item in items:
            pred = preds.get((item.id, repeat))
            if pred is None:
                which = f"id {item.id!r}" if len(repeats) == 1 else f"id {item.id!r} repeat {repeat}"
                run.errors.append(f"{which}: no prediction, scored as wrong")
            row_preds.append(pred)
        outcomes: list[Outcome] = family.score_rows(items, row_preds, settings, run)
        for outcome in outcomes:
            seen_metrics.update(outcome)
        overall_runs.append(_values(family, family.tally(items, outcomes, _overall), None))
        groups: dict[str, dict[str, float]] = {}
        for spec in specs:
            tallies = family.tally(items, outcomes, keys_for(spec))
            for key in sorted(tallies):
                groups[key] = _values(family, tallies, key)
        by_runs.append(groups)
    metrics = [*family.metrics, *(metric for metric in family.optional_metrics if metric in seen_metrics)]
    return {
        "family": family.name,
        "profile": profile,
        "n_items": len(items),
        "n_predictions": len(preds),
        "overall": _combine(family, metrics, overall_runs),
        "by": {key: _combine(family, metrics, [groups[key] for groups in by_runs]) for key in by_runs[0]},
        "errors": run.errors,
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
) -> dict:
    """Score predictions against gold rows (dicts in the JSONL line formats); the object the CLI prints.

    judge: 3dsrbench only, a callable judge(question, {letter: option text}, output) -> letter or None
    asked when no letter can be read. sbert: hypo3d only, True to require SBERT, False to skip it,
    None to compute it when the optional extra is installed.
    """
    return score_records(
        get_family(family),
        ((f"gold[{i}]", record) for i, record in enumerate(gold)),
        ((f"predictions[{i}]", record) for i, record in enumerate(predictions)),
        profile,
        by,
        Run(judge=judge, sbert=sbert),
    )
