"""What a benchmark family gives the engine, and the tallies every family shares.

A family scores each (gold item, prediction) pair into an outcome -- a dict of
metric -> value, a fraction in 0..1 or, for count metrics, a number -- and tallies
outcomes into `{key: {metric: [sum, n]}}` for the keys a grouping function gives
each item. The engine turns tallies into percentages (100 * sum / n) or counts (sum).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .records import GoldItem, Prediction

Outcome = dict[str, float]
Tallies = dict[object, dict[str, list[float]]]
KeysOf = Callable[[GoldItem], Iterable[object]]


@dataclass
class Run:
    """What one scoring call carries besides the rows: its error list and the caller's options."""

    errors: list[str] = field(default_factory=list)
    # 3dsrbench: called as judge(question, {shown letter: option text}, output) -> shown letter or None
    judge: Callable[[str, dict[str, str], str], str | None] | None = None
    # hypo3d SBERT: True requires it, False skips it, None computes it when the extra is installed
    sbert: bool | None = None


def tally_means(items: list[GoldItem], outcomes: list[Outcome], keys_of: KeysOf) -> Tallies:
    """Sum each metric over the items of each key; a metric absent from an outcome is not counted."""
    tallies: Tallies = {}
    for item, outcome in zip(items, outcomes, strict=True):
        for key in keys_of(item):
            bucket = tallies.setdefault(key, {})
            for metric, value in outcome.items():
                total = bucket.get(metric)
                if total is None:
                    bucket[metric] = [value, 1]
                else:
                    total[0] += value
                    total[1] += 1
    return tallies


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
    score_rows: Callable[[list[GoldItem], list[Prediction | None], object, Run], list[Outcome]]
    # reported only when some outcome carries them (hypo3d SBERT and judge)
    optional_metrics: tuple[str, ...] = ()
    # reported as a sum, not a percentage
    counts: tuple[str, ...] = ()
    tally: Callable[[list[GoldItem], list[Outcome], KeysOf], Tallies] = tally_means
    check: Callable[[GoldItem], str | None] = no_check
    derive_tags: Callable[[GoldItem], dict] = own_tags

    @property
    def default_profile(self) -> str:
        return next(iter(self.profiles))
