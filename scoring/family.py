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

from .records import GoldItem, Prediction

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

    @property
    def default_profile(self) -> str:
        return next(iter(self.profiles))
