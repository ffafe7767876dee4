"""The leaderboard's radar chart by question type (Hypo3D Fig. 5) as inline SVG, drawn on the server
from `scoring.tables.radar_chart`: one polygon per human or model row, one spoke per question type,
0 at the centre and 100% at the rim."""

import math
import textwrap

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from core.labels import words

# Wider than tall: axis labels sit left and right of the rim.
WIDTH, HEIGHT = 600, 420
CX, CY = WIDTH / 2, HEIGHT / 2
RADIUS = 150
RINGS = (25, 50, 75, 100)
# An axis label's lines: at 13 px, 14 characters fit between the rim's labels and the chart's edge
# (one line, "temporal understanding" ran past the right edge and was clipped).
LABEL_CHARACTERS = 14
# Colour-blind-safe (Okabe-Ito); human rows are drawn dashed as well.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")


def series_colour(index: int) -> str:
    return COLOURS[index % len(COLOURS)]


def _point(axis: int, n_axes: int, percent: float) -> tuple[float, float]:
    angle = -math.pi / 2 + 2 * math.pi * axis / n_axes  # first spoke points up, then clockwise
    radius = RADIUS * percent / 100
    # rounded: one decimal is finer than a pixel, and format_html only takes "{}" placeholders
    return round(CX + radius * math.cos(angle), 1), round(CY + radius * math.sin(angle), 1)


def _points(values: list[float], n_axes: int) -> str:
    return " ".join(f"{x},{y}" for x, y in (_point(i, n_axes, v) for i, v in enumerate(values)))


def _axis_label(axis: str, x: float, y: float) -> SafeString:
    """An axis's name in words beside its spoke, on as many lines as it needs, centred on the spoke's end."""
    lines = textwrap.wrap(words(axis), LABEL_CHARACTERS, break_long_words=False) or [""]
    anchor = "middle" if abs(x - CX) < 1 else ("start" if x > CX else "end")
    first_dy = -(len(lines) - 1) * 0.55  # em: half the block's height above the spoke's end
    tspans = format_html_join("", '<tspan x="{}" dy="{}em">{}</tspan>',
                              ((x, round(first_dy if i == 0 else 1.1, 2), line) for i, line in enumerate(lines)))
    return format_html('<text class="radar-axis" x="{}" y="{}" text-anchor="{}" dominant-baseline="middle" '
                       'font-size="13" fill="currentColor">{}</text>', x, y, anchor, tspans)


def radar_svg(chart: dict) -> SafeString:
    """The chart as an <svg> element; empty when no row has a value on any axis. A value missing for
    a row (none of its items has that type) is drawn at the centre and named so in its tooltip."""
    axes, series = chart["axes"], chart["series"]
    if not axes or not any(value is not None for s in series for value in s["values"]):
        return mark_safe("")
    n = len(axes)
    rings = format_html_join(
        "", '<polygon class="radar-ring" points="{}" fill="none" stroke="#c8c8c8"><title>{}%</title></polygon>',
        ((_points([ring] * n, n), ring) for ring in RINGS),
    )
    spokes = format_html_join(
        "", '<line class="radar-spoke" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#c8c8c8"/>',
        ((CX, CY, *_point(i, n, 100)) for i in range(n)),
    )
    labels = [_axis_label(axis, *_point(i, n, 110)) for i, axis in enumerate(axes)]
    polygons = []
    for index, s in enumerate(series):
        drawn = [0.0 if value is None else max(0.0, min(value, 100.0)) for value in s["values"]]
        colour = series_colour(index)
        dots = format_html_join(
            "", '<circle cx="{}" cy="{}" r="3" fill="{}"><title>{} · {}: {}</title></circle>',
            ((*_point(i, n, v), colour, s["name"], words(axis), "no items" if value is None else f"{value}%")
             for i, (axis, v, value) in enumerate(zip(axes, drawn, s["values"], strict=True))),
        )
        polygons.append(format_html(
            '<g class="radar-series {}-series" data-series="{}"><polygon points="{}" stroke="{}" stroke-width="2" fill="{}" fill-opacity="0.12"{}>'
            "<title>{}</title></polygon>{}</g>",
            s["kind"], index, _points(drawn, n), colour, colour,
            mark_safe(' stroke-dasharray="6 3"') if s["kind"] == "human" else "", s["name"], dots,
        ))
    return format_html(
        '<svg id="radar-chart" class="radar" viewBox="0 0 {} {}" width="{}" height="{}" role="img" '
        'aria-label="{} by {}">{}{}{}{}</svg>',
        WIDTH, HEIGHT, WIDTH, HEIGHT, words(chart["metric"]), words(chart["by"]).lower(), rings, spokes,
        mark_safe("".join(labels)), mark_safe("".join(polygons)),
    )
