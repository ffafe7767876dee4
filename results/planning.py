"""Study planning: how many participants give the human row an interval of a chosen half-width, per
cell of the benchmark's main paper table (`scoring.comparison.plan_cells`, the normal
approximation with the design effect of several items per participant).

Each cell's accuracy comes from the admin (the paper's numbers), else a pilot: the given study's
human row, else the benchmark's first human row; a cell without one assumes 50 %, the widest
interval (`assumed` says so). The study design page shows it (`frontend.pages.humaneval`).

A participant cannot answer more of a cell's items than it has: the plan is refused then, saying how many
items the smallest cell has. Its cost and duration: pay per hour x participants x the minutes a
participant spends, from the pilot's answering times (the median seconds per answer), else its time limit
per item (a study's setting).
"""

import math
import statistics

from benchmarks.models import Benchmark, Item
from core.errors import DomainError
from humaneval.models import Response, Study
from modeleval.runs.prediction_files import gold_lines
from scoring.comparison import plan_cells
from scoring.engine import questions_per_group
from scoring.tables import breakdowns
from scoring.uncertainty import TABLE_LEVEL

from .services import HUMAN, benchmark_results

ASSUMED_ACCURACY = 50.0
DEFAULT_ITEMS = 50  # items per participant when none is given
TIMED_ANSWERS = 2000  # the pilot's latest answers its time per answer is read from


def _number(value, field: str, low: float, high: float, inclusive: bool = False) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DomainError("Must be a number.", field=field) from None
    within = low <= number <= high if inclusive else low < number < high
    if not math.isfinite(number) or not within:
        raise DomainError(f"Must be {'from' if inclusive else 'above'} {low} {'to' if inclusive else 'and below'} "
                          f"{high}.", field=field)
    return number


def items_per_cell(benchmark: Benchmark, keys: list) -> list[int]:
    """How many approved questions each cell (a main-table column's group key) has."""
    items = list(Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).order_by("pk"))
    sizes = questions_per_group(benchmark.family, gold_lines(items), breakdowns(benchmark.family)) if items else {}
    return [sizes.get(key, 0) for key in keys]


def pilot_seconds_per_answer(benchmark: Benchmark, study: Study | None) -> tuple[float | None, Study | None]:
    """(median seconds from an item shown to its answer, the study timed): the given study's answers, else
    the benchmark's first study with answers; (None, that study or the newest) without any."""
    studies = [study] if study is not None else list(Study.objects.filter(benchmark=benchmark).order_by("created_at", "pk"))
    for each in studies:
        answered = (Response.objects.filter(session__study=each, answered_at__isnull=False)
                    .order_by("-answered_at").values_list("shown_at", "answered_at")[:TIMED_ANSWERS])
        seconds = [(answered_at - shown_at).total_seconds() for shown_at, answered_at in answered]
        if seconds:
            return statistics.median(seconds), each
    return None, studies[-1] if studies else None


def plan_cost(benchmark: Benchmark, study: Study | None, participants: int, per_participant: int,
              pay_per_hour: float) -> dict:
    """{"seconds_per_answer", "timed_by" ("pilot" or "limit"), "minutes", "hours", "cost", "pay_per_hour"}:
    one participant's minutes, every participant's hours, and their pay."""
    seconds, timed = pilot_seconds_per_answer(benchmark, study)
    timed_by = "pilot" if seconds is not None else "limit"
    if seconds is None:
        seconds = timed.seconds_per_item if timed else Study._meta.get_field("seconds_per_item").default
    minutes = seconds * per_participant / 60
    hours = participants * minutes / 60
    return {"seconds_per_answer": round(seconds, 1), "timed_by": timed_by, "study": timed.name if timed else None,
            "minutes": round(minutes, 1), "hours": round(hours, 1), "pay_per_hour": pay_per_hour,
            "cost": round(pay_per_hour * hours, 2)}


def study_plan(benchmark: Benchmark, half_width, items_per_participant, icc=0.0, study: Study | None = None,
               accuracies: dict | None = None, pay_per_hour=12) -> dict:
    """{"metric", "level", "half_width", "items_per_participant", "icc", "pilot", "cells": [{"column",
    "accuracy", "assumed", "source", "answers", "participants", "design_effect"}], "participants"}; the
    study needs the largest number of participants over the cells. `accuracies`: {column: accuracy in
    %} the admin gives (the paper's numbers), in place of the pilot's; a blank one keeps the pilot's.
    `source` is "given", "pilot" or "assumed"; each cell's "items" is how many it has; "cost" is
    `plan_cost`'s."""
    half_width = _number(half_width, "half_width", 0, 100)
    icc = _number(icc, "icc", 0, 1, inclusive=True)
    per_participant = None  # not given: DEFAULT_ITEMS, or the smallest cell's items if fewer
    if items_per_participant not in (None, ""):
        try:
            per_participant = int(items_per_participant)
        except (TypeError, ValueError):
            raise DomainError("Must be a whole number.", field="items_per_participant") from None
        if not 1 <= per_participant <= 100_000:
            raise DomainError("Must be between 1 and 100000.", field="items_per_participant")
    pay_per_hour = _number(pay_per_hour, "pay_per_hour", 0, 10_000, inclusive=True)
    results = benchmark_results(benchmark, study)
    table = results["tables"][0]
    sizes = items_per_cell(benchmark, table["keys"])
    metric = table["metrics"][0]
    pilot = next((row for row in table["rows"] if row["kind"] == HUMAN), None)
    titles = [f"{group} {label}" if group else label for group, label in zip(table["groups"], table["columns"],
                                                                            strict=True)]
    values = [cell[0]["value"] for cell in pilot["cells"]] if pilot else [None] * len(titles)
    sources = ["assumed" if value is None else "pilot" for value in values]
    for index, title in enumerate(titles):
        given = (accuracies or {}).get(title)
        if given not in (None, ""):
            values[index] = _number(given, f"accuracy {title}", 0, 100, inclusive=True)
            sources[index] = "given"
    chosen = {title: ASSUMED_ACCURACY if value is None else value for title, value in zip(titles, values,
                                                                                         strict=True)}
    smallest = min(range(len(titles)), key=lambda index: sizes[index])
    if sizes[smallest] == 0:
        raise DomainError(f"The cell “{titles[smallest]}” has no approved item yet: approve items before planning "
                          "a study.", field="items_per_participant")
    if per_participant is None:
        per_participant = min(DEFAULT_ITEMS, sizes[smallest])
    elif per_participant > sizes[smallest]:
        raise DomainError(f"The cell “{titles[smallest]}” has {sizes[smallest]} approved items: a participant can "
                          f"answer at most {sizes[smallest]} of a cell, not {per_participant}.",
                          field="items_per_participant")
    planned = plan_cells(chosen, half_width, per_participant, icc, TABLE_LEVEL)
    cells = [
        {"column": title, "accuracy": chosen[title], "assumed": source == "assumed", "source": source,
         "items": size, **planned[title]}
        for title, source, size in zip(titles, sources, sizes, strict=True)
    ]
    participants = max(cell["participants"] for cell in cells)
    return {
        "metric": metric,
        "level": TABLE_LEVEL,
        "half_width": half_width,
        "items_per_participant": per_participant,
        "icc": icc,
        "pilot": pilot["name"] if pilot else None,
        "cells": cells,
        "participants": participants,
        "smallest_cell": sizes[smallest],
        "cost": plan_cost(benchmark, study, participants, per_participant, pay_per_hour),
    }
