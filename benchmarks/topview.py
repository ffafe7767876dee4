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
            }
        )
    return labels


def _draw_labels(image: Image.Image, labels: list[dict], size_px: int) -> Image.Image:
    """Label text centred on each centroid over a dark translucent box, kept inside the image."""
    font = ImageFont.load_default(size=max(11, round(size_px / 34)))
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    pad = 3
    for entry in labels:
        left, top, right, bottom = draw.textbbox((entry["x"], entry["y"]), entry["label"], font=font, anchor="mm")
        shift_x = max(0, pad - left) - max(0, right + pad - (image.width - 1))
        shift_y = max(0, pad - top) - max(0, bottom + pad - (image.height - 1))
        draw.rectangle(
            [left - pad + shift_x, top - pad + shift_y, right + pad + shift_x, bottom + pad + shift_y],
            fill=(20, 20, 28, 190),
        )
        draw.text(
            (entry["x"] + shift_x, entry["y"] + shift_y),
            entry["label"],
            font=font,
            anchor="mm",
            fill=(255, 255, 255, 255),
        )
    return Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB")


def render_topview(
    xyz: np.ndarray, rgb: np.ndarray, objects: list[dict], size_px: int = 512, semantic: bool = False
) -> tuple[bytes, dict]:
    """Render the cloud from above as PNG bytes, with the map data (bounds, object boxes) as a dict.

    `objects` holds {"instance_id", "label", "center": [x, y, z], "size": [sx, sy, sz]} (and an
    optional "yaw"); `semantic=True` writes each label at its object's centroid.
    """
    xyz = np.asarray(xyz, dtype=np.float64)
    rgb = np.asarray(rgb, dtype=np.uint8)
    width, height, scale, bounds = _grid(xyz, size_px)
    image = Image.fromarray(_zbuffer(xyz, rgb, width, height, scale, bounds))
    labels = _labels(objects, width, height, scale, bounds)
    if semantic:
        image = _draw_labels(image, labels, size_px)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    meta = {
        "width": width,
        "height": height,
        "bounds": [round(b, 4) for b in bounds],
        "labels": labels,
    }
    return buffer.getvalue(), meta
