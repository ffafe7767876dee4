"""What a benchmark family gives the engine, and the tallies every family shares.

A family first reads each prediction into an `Extraction` (the answer as it will be
scored, and how it was read), then scores each (gold item, prediction) pair into an outcome -- a dict of
metric -> value, a fraction in 0..1 or, for count metrics, a number -- and tallies
outcomes into `{key: {metric: [sum, n]}}` for groups of rows (`{key: [row index, ...]}`,
one group per `--by` value, or one group of every row). The engine turns tallies into
percentages (100 * sum / n) or counts (sum).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .records import GoldItem, Prediction, RecordError, letter_map

if TYPE_CHECKING:
    from .uncertainty import Bootstrap

Outcome = dict[str, float]
Groups = dict[object, list[int]]
Tallies = dict[object, dict[str, list[float]]]

# How an answer was read from an output: by the family's rules, by the caller's judge, or not at all.
# No family guesses an answer in place of a failed extraction: the row is wrong, except that
# spatial457 scores the whole output as its reference does (ROBUST mode, a format error).
RULE = "rule"
JUDGE = "judge"
FAILED = "failed"
EXTRACTION_METHODS = (RULE, JUDGE, FAILED)


@dataclass(slots=True)
class Extraction:
    # the answer as scored: a gold-order letter (3dsrbench, causalspatial), letters joined by ", "
    # (m3verse), the extracted text (spatial457), the normalised output (hypo3d); "" when nothing
    answer: str
    method: str


@dataclass
class Run:
    """What one scoring call carries besides the rows: its error list and the caller's options."""

    errors: list[str] = field(default_factory=list)
    # 3dsrbench: called as judge(question, {shown letter: option text}, output) -> shown letter or None
    judge: Callable[[str, dict[str, str], str], str | None] | None = None
    # hypo3d SBERT: True requires it, False skips it, None computes it when the extra is installed
    sbert: bool | None = None
    # intervals for every metric (`scoring.uncertainty`); None: point estimates only
    ci: "Bootstrap | None" = None


def gold_letters(item: GoldItem, pred: Prediction, run: Run) -> dict[str, str] | None:
    """Shown letter -> gold letter for a prediction's options; None, with the reason in the run's
    errors, when the options it was shown are not a reordering of the gold ones."""
    try:
        return letter_map(pred.choices, item.choices)
    except RecordError as error:
        run.errors.append(f"id {item.id!r}: {error}")
        return None


def tally_means(prepared: None, outcomes: list[Outcome], groups: Groups) -> Tallies:
    """Sum each metric over the rows of each group; a metric absent from an outcome is not counted."""
    names: set[str] = set()
    for outcome in outcomes:
        names.update(outcome)
    tallies: Tallies = {key: {} for key in groups}
    for name in names:
        column = [outcome.get(name) for outcome in outcomes]
        for key, rows in groups.items():
            values = [value for row in rows if (value := column[row]) is not None]
            if values:
                tallies[key][name] = [sum(values), len(values)]
    return tallies


def nothing_to_prepare(items: list[GoldItem]) -> None:
    return None


def no_check(item: GoldItem) -> str | None:
    return None


def own_tags(item: GoldItem) -> dict:
    return item.tags


def own_unit(item: GoldItem) -> str:
    return item.id


def question_of(family: "Family", row_id: str) -> str:
    """The question a scorer row id is a protocol variant of (3DSRBench's `X-2`, `X-flip`, `X-flip-1` are
    X's): the family's unit key read from the id alone."""
    return family.unit_key(GoldItem(id=row_id, answer_format="", question="", choices=(), answer="",
                                    not_sure=None, group=None, tags={}))


@dataclass(frozen=True)
class Table:
    """One of a family's paper tables: which result values go in which column (`scoring.tables`
    builds it from `score()` results).

    Columns: Overall, then one per value of the tag `by` (a result's `by` keys `BY=value`); with
    `within`, the `by` columns are grouped under each value of that tag (keys `WITHIN+BY=w+v`),
    with the group as a whole (`WITHIN=w`) as an "Avg." column first or last when `group_average`
    says so. Values come in the paper's order (`order`, `within_order`), then any others sorted.
    Each cell shows `metrics`; a name in `differences` is derived: first metric minus second.
    """

    key: str  # names the table in exports: ?table=<key>
    title: str
    metrics: tuple[str, ...]
    by: str | None = None
    order: tuple[str, ...] = ()
    within: str | None = None
    within_order: tuple[str, ...] = ()
    group_average: str | None = None  # "first", "last" or None
    differences: tuple[tuple[str, str, str], ...] = ()  # (name, minuend, subtrahend)
    # shown only when some result has one of its breakdown keys (3DSRBench's viewpoint splits)
    optional: bool = False
    # metrics with no better direction: never marked best (Not-Sure rate, a difference)
    not_ranked: tuple[str, ...] = ()
    # how a cell's interval is printed: "pm" (62.30 ± 2.10, its longer side) or "brackets"
    # ([60.20, 64.40]: where ± already gives the spread over repeats, as CausalSpatial's tables do)
    interval_style: str = "pm"

    @property
    def breakdowns(self) -> tuple[str, ...]:
        """The `by` specs a result must be scored with to fill this table."""
        if self.by is None:
            return ()
        if self.within is None:
            return (self.by,)
        return (self.within, f"{self.within}+{self.by}")


@dataclass(frozen=True)
class Family:
    name: str
    # profile name -> family-specific settings; the first one is the default (the official evaluation)
    profiles: dict[str, object]
    answer_formats: tuple[str, ...]
    # reported for every run, in this order (null where no item contributes)
    metrics: tuple[str, ...]
    # reads one prediction; the engine calls it for every prediction, then score_rows on the results
    extract: Callable[[GoldItem, Prediction, object, Run], Extraction]
    # (items, predictions, their extractions, profile settings, run) -> outcomes; None where no prediction
    score_rows: Callable[
        [list[GoldItem], list[Prediction | None], list[Extraction | None], object, Run], list[Outcome]
    ]
    # reported only when some outcome carries them (hypo3d SBERT and judge)
    optional_metrics: tuple[str, ...] = ()
    # reported as a sum, not a percentage
    counts: tuple[str, ...] = ()
    # what `tally` needs to know of the items, worked out once per run (3dsrbench: its question groups)
    prepare: Callable[[list[GoldItem]], object] = nothing_to_prepare
    tally: Callable[[object, list[Outcome], Groups], Tallies] = tally_means
    check: Callable[[GoldItem], str | None] = no_check
    derive_tags: Callable[[GoldItem], dict] = own_tags
    # The rows a bootstrap resamples together (`scoring.uncertainty`): each row alone, or 3DSRBench's
    # rotations and flips of one question, which its group metrics score as one.
    unit_key: Callable[[GoldItem], str] = own_unit
    # The metric that says whether one answer is right (feedback, attention checks, per-row exports).
    primary_metric: str = ""
    # The paper's tables, the main one first (its first metric is the headline, drawn on the radar).
    tables: tuple[Table, ...] = ()
    # The radar chart has one spoke per value of this tag.
    radar_axis: str | None = None
    # The values of `radar_axis` in the paper's order (Hypo3D: Scale, Direction, Semantic).
    question_types: tuple[str, ...] = ()
    # The fine question types authors choose from, {fine: (the `question_types` it counts in, ...)}.
    fine_question_types: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # What a question must meet, {key: text}: a reviewer rejecting a question names the ones it fails.
    question_criteria: dict[str, str] = field(default_factory=dict)
    # The chance rows the paper reports, as `chance_levels` names its guessers.
    chance_rows: tuple[str, ...] = ()

    @property
    def default_profile(self) -> str:
        return next(iter(self.profiles))
