"""The frame-count sweep (M3-Verse Fig. 4) as an inline SVG line chart, drawn on the server from
`modeleval.analysis.sweep.frame_sweep`: one line per model, the metric (0-100 %) against frames per video on a
log scale (the counts run from a few to 1,000)."""

import math

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from .radar import series_colour

WIDTH, HEIGHT = 600, 360
LEFT, RIGHT, TOP, BOTTOM = 56, 20, 20, 48
TICKS = (0, 25, 50, 75, 100)


def _x(frames: float, low: float, high: float) -> float:
    span = math.log(high) - math.log(low) if high > low else 1.0
    share = (math.log(frames) - math.log(low)) / span if high > low else 0.5
    return round(LEFT + share * (WIDTH - LEFT - RIGHT), 1)


def _y(value: float) -> float:
    return round(TOP + (1 - max(0.0, min(value, 100.0)) / 100) * (HEIGHT - TOP - BOTTOM), 1)


def sweep_svg(sweep: dict) -> SafeString:
    """The chart as an <svg> element; empty when no line has two frame counts."""
    series = sweep.get("series") or []
    counts = sorted({point["frames"] for line in series for point in line["points"]})
    if not series or len(counts) < 2:
        return mark_safe("")
    low, high = counts[0], counts[-1]
    grid = format_html_join("", '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e0e0e0"/>'
                            '<text x="{}" y="{}" text-anchor="end" dominant-baseline="middle" font-size="12" '
                            'fill="currentColor">{}</text>',
                            ((LEFT, _y(t), WIDTH - RIGHT, _y(t), LEFT - 6, _y(t), t) for t in TICKS))
    ticks = format_html_join("", '<text class="sweep-tick" x="{}" y="{}" text-anchor="middle" font-size="12" '
                             'fill="currentColor">{}</text>',
                             ((_x(count, low, high), HEIGHT - BOTTOM + 18, count) for count in counts))
    lines = []
    for index, line in enumerate(series):
        colour = series_colour(index)
        drawn = [point for point in line["points"] if point["value"] is not None]
        path = " ".join(f"{_x(p['frames'], low, high)},{_y(p['value'])}" for p in drawn)
        dots = format_html_join("", '<circle cx="{}" cy="{}" r="3.5" fill="{}"><title>{} · {} frames: {}</title>'
                                '</circle>',
                                ((_x(p["frames"], low, high), _y(p["value"]), colour, line["name"], p["frames"],
                                  p["value"]) for p in drawn))
        lines.append(format_html('<g class="sweep-series" data-series="{}"><polyline points="{}" fill="none" '
                                 'stroke="{}" stroke-width="2"><title>{}</title></polyline>{}</g>',
                                 index, path, colour, line["name"], dots))
    axis_labels = format_html(
        '<text x="{}" y="{}" text-anchor="middle" font-size="13" fill="currentColor">{}</text>'
        '<text x="14" y="{}" text-anchor="middle" font-size="13" fill="currentColor" transform="rotate(-90 14 {})">'
        "{} (%)</text>",
        (LEFT + WIDTH - RIGHT) / 2, HEIGHT - 8, sweep.get("x", "frames per video"), HEIGHT / 2, HEIGHT / 2,
        sweep["metric"])
    return format_html('<svg id="sweep-chart" class="sweep" viewBox="0 0 {} {}" width="{}" height="{}" role="img" '
                       'aria-label="{} by frames per video">{}{}{}{}</svg>', WIDTH, HEIGHT, WIDTH, HEIGHT,
                       sweep["metric"], grid, ticks, axis_labels, mark_safe("".join(lines)))
