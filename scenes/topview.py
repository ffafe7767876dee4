"""Server-side top-view maps of a point cloud: plain (colours only) and semantic (with object labels).

The view is orthographic from above (looking down -Z): world x runs to the right and world y up in
the image, so pixel (col, row) covers x = xmin + col / scale and y = ymax - row / scale. The
longer side of the scene gets `size_px` pixels and both axes share one scale.

Alongside the PNG we return the map as data: its bounds and one entry per object with the
projected centroid and footprint box in pixel coordinates, so a page can make labels hoverable by
a box lookup instead of ray-casting the cloud.
"""

import io
import math

import numpy as np
from PIL import Image, ImageDraw, ImageFont

BACKGROUND = (248, 248, 248)
MARGIN_FRACTION = 0.02
# Empty pixels between sampled points are filled from their highest neighbour, this many times.
HOLE_FILL_PASSES = 3
NEIGHBOURS = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0)]


def _grid(xyz: np.ndarray, size_px: int) -> tuple[int, int, float, list[float]]:
    """Image size, pixels per metre and world bounds [xmin, ymin, xmax, ymax] of the image edges."""
    if len(xyz):
        lo, hi = xyz[:, :2].min(axis=0).astype(float), xyz[:, :2].max(axis=0).astype(float)
    else:
        lo, hi = np.zeros(2), np.ones(2)
    margin = MARGIN_FRACTION * max(float((hi - lo).max()), 1e-6)
    lo, hi = lo - margin, hi + margin
    scale = size_px / float((hi - lo).max())
    width = max(1, round((hi[0] - lo[0]) * scale))
    height = max(1, round((hi[1] - lo[1]) * scale))
    return width, height, scale, [float(b) for b in (lo[0], lo[1], lo[0] + width / scale, lo[1] + height / scale)]


def _to_pixel(x, y, bounds: list[float], scale: float):
    return (np.asarray(x) - bounds[0]) * scale, (bounds[3] - np.asarray(y)) * scale


def _zbuffer(xyz: np.ndarray, rgb: np.ndarray, width: int, height: int, scale: float, bounds) -> np.ndarray:
    """Colour of the highest point per pixel, holes filled from neighbours; background elsewhere."""
    cols, rows = _to_pixel(xyz[:, 0], xyz[:, 1], bounds, scale)
    cols = np.clip(cols.astype(np.int64), 0, width - 1)
    rows = np.clip(rows.astype(np.int64), 0, height - 1)
    pixel = rows * width + cols
    # Sort by pixel, then height: the last entry of each pixel's run is its highest point.
    order = np.lexsort((xyz[:, 2], pixel))
    pixel_sorted = pixel[order]
    last = np.append(pixel_sorted[1:] != pixel_sorted[:-1], True)
    top = order[last]

    zbuf = np.full(height * width, -np.inf)
    colour = np.empty((height * width, 3), dtype=np.uint8)
    colour[:] = BACKGROUND
    zbuf[pixel[top]] = xyz[top, 2]
    colour[pixel[top]] = rgb[top]
    zbuf, colour = zbuf.reshape(height, width), colour.reshape(height, width, 3)

    for _ in range(HOLE_FILL_PASSES):
        padded_z = np.pad(zbuf, 1, constant_values=-np.inf)
        padded_c = np.pad(colour, ((1, 1), (1, 1), (0, 0)))
        best_z, best_c = zbuf.copy(), colour.copy()
        empty = np.isneginf(zbuf)
        for dy, dx in NEIGHBOURS:
            z = padded_z[1 + dy : 1 + dy + height, 1 + dx : 1 + dx + width]
            take = empty & (z > best_z)
            best_z[take] = z[take]
            best_c[take] = padded_c[1 + dy : 1 + dy + height, 1 + dx : 1 + dx + width][take]
        zbuf, colour = best_z, best_c
    return colour


def _footprint(obj: dict) -> tuple[np.ndarray, np.ndarray]:
    """World x and y of the object's box corners, turned by its yaw (0 when absent)."""
    cx, cy = obj["center"][0], obj["center"][1]
    hx, hy = obj["size"][0] / 2, obj["size"][1] / 2
    yaw = obj.get("yaw", 0.0)
    c, s = math.cos(yaw), math.sin(yaw)
    dx = np.array([-hx, hx, hx, -hx])
    dy = np.array([-hy, -hy, hy, hy])
    return cx + c * dx - s * dy, cy + s * dx + c * dy


def _labels(objects: list[dict], width: int, height: int, scale: float, bounds) -> list[dict]:
    labels = []
    for obj in objects:
        x, y = _to_pixel(obj["center"][0], obj["center"][1], bounds, scale)
        corner_cols, corner_rows = _to_pixel(*_footprint(obj), bounds, scale)
        left, right = np.clip([corner_cols.min(), corner_cols.max()], 0, width - 1)
        top, bottom = np.clip([corner_rows.min(), corner_rows.max()], 0, height - 1)
        labels.append(
            {
                "instance_id": int(obj["instance_id"]),
                "label": obj["label"],
                "x": int(np.clip(round(float(x)), 0, width - 1)),
                "y": int(np.clip(round(float(y)), 0, height - 1)),
                "box": [math.floor(left), math.floor(top), math.ceil(right), math.ceil(bottom)],
                # The footprint as turned by the object's yaw: hover tests this polygon.
                "corners": [[round(float(c), 1), round(float(r), 1)] for c, r in zip(corner_cols, corner_rows,
                                                                                      strict=True)],
                "text_box": None,
            }
        )
    return labels


# Walls, floors and ceilings are labelled last: a room's structure matters least on its own map.
STRUCTURE = ("wall", "floor", "ceiling")
LABEL_GAP = 2
ELLIPSIS = "…"


def _overlaps(a, b) -> bool:
    return a[0] < b[2] + LABEL_GAP and b[0] < a[2] + LABEL_GAP and a[1] < b[3] + LABEL_GAP and b[1] < a[3] + LABEL_GAP


def _label_order(labels: list[dict]) -> list[dict]:
    def key(entry):
        left, top, right, bottom = entry["box"]
        structural = any(word in entry["label"].lower() for word in STRUCTURE)
        return (structural, -(right - left) * (bottom - top), entry["instance_id"])

    return sorted(labels, key=key)


def _texts(label: str) -> list[str]:
    """The label, then shorter forms of it (at most two)."""
    texts = [label]
    if len(label) > 10:
        texts.append(label[:9].rstrip() + ELLIPSIS)
    if len(label) > 5:
        texts.append(label[:4].rstrip() + ELLIPSIS)
    return texts


def _place(draw, font, entry: dict, placed: list, size: tuple[int, int], pad: int):
    """(text, x, y, box) for the first spot where the label (or a shorter form) fits beside no
    other: on its centroid, then above, below, left and right of it, then two lines above or
    below; None where none is free."""
    width, height = size
    for text in _texts(entry["label"]):
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font, anchor="mm")
        w, h = right - left + 2 * pad, bottom - top + 2 * pad
        step = h + LABEL_GAP + 1
        for dx, dy in ((0, 0), (0, -step), (0, step), (-w // 2 - 4, 0), (w // 2 + 4, 0), (0, -2 * step),
                       (0, 2 * step)):
            cx = min(max(entry["x"] + dx, w // 2 + 1), width - 1 - w // 2 - 1)
            cy = min(max(entry["y"] + dy, h // 2 + 1), height - 1 - h // 2 - 1)
            box = [cx - w // 2, cy - h // 2, cx - w // 2 + w, cy - h // 2 + h]
            if not any(_overlaps(box, other) for other in placed):
                return text, cx, cy, box
    return None


def _font(size_px: int):
    return ImageFont.load_default(size=max(11, round(size_px / 34)))


def _layout_labels(labels: list[dict], size: tuple[int, int], size_px: int) -> None:
    """Where each label's text goes on the semantic map, set on the entries (both maps share the
    data): biggest objects first (walls and floors last), each on its centroid or just beside it,
    shortened if that makes it fit, never over another label. `text_box` [left, top, right,
    bottom] in pixels, `shown_as` when shortened; a label that fits nowhere keeps `text_box` None
    and is shown on hover only."""
    draw = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
    font = _font(size_px)
    placed = []
    for entry in _label_order(labels):
        spot = _place(draw, font, entry, placed, size, pad=3)
        if spot is None:
            continue
        text, cx, cy, box = spot
        placed.append(box)
        entry["text_box"] = box
        if text != entry["label"]:
            entry["shown_as"] = text


def _draw_labels(image: Image.Image, labels: list[dict], size_px: int) -> Image.Image:
    """Each placed label over a dark translucent box; a dot marks each centroid whose label moved
    aside or is left to hover."""
    font = _font(size_px)
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for entry in labels:  # dots first: a label drawn over a dot wins
        box = entry["text_box"]
        if box is None or ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2) != (entry["x"], entry["y"]):
            x, y, r = entry["x"], entry["y"], 3
            draw.ellipse([x - r, y - r, x + r, y + r], fill=(20, 20, 28, 220), outline=(255, 255, 255, 255))
    for entry in labels:
        box = entry["text_box"]
        if box is None:
            continue
        draw.rectangle([box[0], box[1], box[2] - 1, box[3] - 1], fill=(20, 20, 28, 190))
        draw.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), entry.get("shown_as", entry["label"]), font=font,
                  anchor="mm", fill=(255, 255, 255, 255))
    return Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB")


# When labels would collide (one shortened or left to hover), the semantic map numbers every object
# at its centroid and lists "N label" in full in a legend beside the map: a model cannot hover.
LEGEND_PAD = 8


def _legend_entries(labels: list[dict]) -> list[dict]:
    """Every object's number and full label, numbered by instance id; [] when each label fits whole."""
    if all(e["text_box"] is not None and "shown_as" not in e for e in labels):
        return []
    ordered = sorted(labels, key=lambda e: e["instance_id"])
    return [{"number": n, "instance_id": e["instance_id"], "label": e["label"]} for n, e in enumerate(ordered, 1)]


def _legend_layout(legend: list[dict], map_size: tuple[int, int], size_px: int) -> dict:
    """Where the legend goes: columns of rows right of the map, as many columns as the map's
    height needs. {"x": left edge, "row_height", "column_width", "rows", "size": [w, h]} of the whole image."""
    draw = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    font = _font(size_px)
    lines = [f"{e['number']}  {e['label']}" for e in legend]
    row = max(draw.textbbox((0, 0), line, font=font)[3] for line in lines) + 4
    column = max(draw.textbbox((0, 0), line, font=font)[2] for line in lines) + 2 * LEGEND_PAD
    width, height = map_size
    rows = max(1, (height - 2 * LEGEND_PAD) // row)
    columns = math.ceil(len(lines) / rows)
    return {"x": width, "row_height": row, "column_width": column, "rows": rows,
            "size": [width + columns * column + LEGEND_PAD, height]}


def _draw_legend(image: Image.Image, labels: list[dict], legend: list[dict], layout: dict, size_px: int):
    """The map widened by the legend: each object's number in a badge on its centroid (moved aside
    like a label when it would cover another), and "N label" in full beside the map."""
    font = _font(size_px)
    canvas = Image.new("RGB", tuple(layout["size"]), (255, 255, 255))
    canvas.paste(image, (0, 0))
    draw = ImageDraw.Draw(canvas)
    by_id = {e["instance_id"]: e for e in labels}
    placed = []
    for entry in legend:
        spot = _place(draw, font, {**by_id[entry["instance_id"]], "label": str(entry["number"])}, placed,
                      image.size, pad=2)
        obj = by_id[entry["instance_id"]]
        if spot is None:  # crowded beyond any free spot: on its centroid all the same
            text, cx, cy = str(entry["number"]), obj["x"], obj["y"]
            left, top, right, bottom = draw.textbbox((cx, cy), text, font=font, anchor="mm")
            box = [left - 2, top - 2, right + 2, bottom + 2]
        else:
            text, cx, cy, box = spot
        placed.append(box)
        entry["badge"] = box
        draw.rectangle([box[0], box[1], box[2] - 1, box[3] - 1], fill=(20, 20, 28))
        draw.text((cx, cy), text, font=font, anchor="mm", fill=(255, 255, 255))
    rows, row, column = layout["rows"], layout["row_height"], layout["column_width"]
    for index, entry in enumerate(legend):
        x = layout["x"] + LEGEND_PAD + (index // rows) * column
        y = LEGEND_PAD + (index % rows) * row
        draw.text((x, y), f"{entry['number']}  {entry['label']}", font=font, fill=(20, 20, 28))
    return canvas


def render_topview(
    xyz: np.ndarray, rgb: np.ndarray, objects: list[dict], size_px: int = 512, semantic: bool = False
) -> tuple[bytes, dict]:
    """Render the cloud from above as PNG bytes, with the map data (bounds, object boxes) as a dict.

    `objects` holds {"instance_id", "label", "center": [x, y, z], "size": [sx, sy, sz]} (and an
    optional "yaw"); `semantic=True` writes each label at (or beside) its object's centroid, no
    two labels overlapping (`_layout_labels`). Each label entry carries the footprint's pixel box,
    its turned `corners` (for hover) and its `text_box` (None: shown on hover only). Where a label
    would be shortened or left to hover, the semantic map instead numbers every object and lists
    the labels in full in a legend right of the map: the meta's `legend` ([] when none is needed)
    and `semantic_size` (the semantic PNG's [width, height]; the map keeps its pixels at the left).
    """
    xyz = np.asarray(xyz, dtype=np.float64)
    rgb = np.asarray(rgb, dtype=np.uint8)
    width, height, scale, bounds = _grid(xyz, size_px)
    image = Image.fromarray(_zbuffer(xyz, rgb, width, height, scale, bounds))
    labels = _labels(objects, width, height, scale, bounds)
    _layout_labels(labels, (width, height), size_px)
    legend = _legend_entries(labels)
    layout = _legend_layout(legend, (width, height), size_px) if legend else {"size": [width, height]}
    if semantic:
        image = _draw_legend(image, labels, legend, layout, size_px) if legend else _draw_labels(image, labels, size_px)
    elif legend:  # the badges' spots as the semantic map draws them: both maps share one meta
        _draw_legend(image, labels, legend, layout, size_px)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    meta = {
        "width": width,
        "height": height,
        "bounds": [round(b, 4) for b in bounds],
        "labels": labels,
        "legend": legend,
        "semantic_size": layout["size"],
    }
    return buffer.getvalue(), meta
