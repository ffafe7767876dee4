"""Study planning: how many participants give the human row an interval of a chosen half-width, per
cell of the benchmark's main paper table (`scoring.comparison.plan_cells`, the normal
approximation with the design effect of several items per participant).

Each cell's accuracy comes from the admin (the paper's numbers), else a pilot: the given study's
human row, else the benchmark's first human row; a cell without one assumes 50 %, the widest
interval (`assumed` says so). The study design page shows it (`frontend.pages.humaneval`).
"""

import math

from benchmarks.models import Benchmark
from core.errors import DomainError
from humaneval.models import Study
from scoring.comparison import plan_cells
from scoring.uncertainty import TABLE_LEVEL

from .services import HUMAN, benchmark_results

ASSUMED_ACCURACY = 50.0


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


def study_plan(benchmark: Benchmark, half_width, items_per_participant, icc=0.0, study: Study | None = None,
               accuracies: dict | None = None) -> dict:
    """{"metric", "level", "half_width", "items_per_participant", "icc", "pilot", "cells": [{"column",
    "accuracy", "assumed", "source", "answers", "participants", "design_effect"}], "participants"}; the
    study needs the largest number of participants over the cells. `accuracies`: {column: accuracy in
    %} the admin gives (the paper's numbers), in place of the pilot's; a blank one keeps the pilot's.
    `source` is "given", "pilot" or "assumed"."""
    half_width = _number(half_width, "half_width", 0, 100)
    icc = _number(icc, "icc", 0, 1, inclusive=True)
    try:
        per_participant = int(items_per_participant)
    except (TypeError, ValueError):
        raise DomainError("Must be a whole number.", field="items_per_participant") from None
    if not 1 <= per_participant <= 100_000:
        raise DomainError("Must be between 1 and 100000.", field="items_per_participant")
    results = benchmark_results(benchmark, study)
    table = results["tables"][0]
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
    planned = plan_cells(chosen, half_width, per_participant, icc, TABLE_LEVEL)
    cells = [
        {"column": title, "accuracy": chosen[title], "assumed": source == "assumed", "source": source,
         **planned[title]}
        for title, source in zip(titles, sources, strict=True)
    ]
    return {
        "metric": metric,
        "level": TABLE_LEVEL,
        "half_width": half_width,
        "items_per_participant": per_participant,
        "icc": icc,
        "pilot": pilot["name"] if pilot else None,
        "cells": cells,
        "participants": max(cell["participants"] for cell in cells),
    }
