"""Marks drawn on a stimulus image: CausalSpatial's motion arrow and start box, Spatial457's and
3DSRBench's (red) bounding boxes. The papers print them into the image, so what the human sees the
model gets: the session page draws them over the image (frontend/static/hypolab/image-viewer.js, an
SVG in the image's pixels) and `draw` prints the same shapes, with the same geometry, into the pixels
sent to models (modeleval.prompting.visual_inputs).

Two places hold them, in one shape (`type` and coordinates, `colour`, an optional `label`):
- an image asset's meta `overlays` (imported with an image set, scenes/image_sets.py):
  pixel coordinates of that image;
- an item's `overlays` (drawn on the authoring page, Item.overlays): coordinates normalised to the
  image (0-1) and the `image` they sit on (its index among the scene's images, by id), checked by
  `validate`.
Arrows have `from` and `to` ([x, y]); boxes (`box`, `start_box`) have `x, y, width, height`."""

import io
import math
import re

from core.errors import DomainError
from core.validation import text_problem

ARROW, BOX, START_BOX = "arrow", "box", "start_box"
TYPES = (ARROW, START_BOX, BOX)
BOX_TYPES = (BOX, START_BOX)
COLOURS = {ARROW: "#ff3b30", BOX: "#ff3b30", START_BOX: "#34c759"}  # the papers' red; a green start box
MAX_OVERLAYS = 20
MAX_LABEL_CHARS = 20
# The geometry image-viewer.js draws (SVG user units are the image's pixels): keep the two equal.
ARROW_WIDTH = 4  # the line's stroke-width; the head is the SVG marker "M0,0 L8,4 L0,8 z" scaled by it
HEAD = ((0, 0), (8, 4), (0, 8))
HEAD_REF = (6, 4)  # the marker's refX, refY: the point placed at the arrow's end
BOX_WIDTH = 3  # the rectangle's stroke-width, centred on its edge
LABEL_SIZE, LABEL_OFFSET = 18, (4, -6)  # font size; the text's baseline start from the shape's anchor
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
_FIELD = "overlays"


# --- an item's overlays: normalised, checked ------------------------------------------------------


def _fail(index: int, message: str):
    raise DomainError(f"Mark {index + 1}: {message}", field=_FIELD)


def _unit(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and 0 <= value <= 1


def _point(index: int, overlay: dict, key: str) -> list[float]:
    point = overlay.get(key)
    if not (isinstance(point, list) and len(point) == 2 and all(map(_unit, point))):
        _fail(index, f"an arrow's '{key}' is a point [x, y] inside the image (each from 0 to 1).")
    return [round(float(v), 4) for v in point]


def validate(overlays, n_images: int) -> list[dict]:
    """The item's overlays as stored (coordinates rounded to 4 places, the type's colour filled in),
    or a DomainError naming `overlays` and the mark at fault. `n_images`: the scene's images."""
    if overlays in (None, ""):
        return []
    if not isinstance(overlays, list):
        raise DomainError("Marks are a list of arrows and boxes.", field=_FIELD)
    if len(overlays) > MAX_OVERLAYS:
        raise DomainError(f"An item has at most {MAX_OVERLAYS} marks; this one has {len(overlays)}.", field=_FIELD)
    if overlays and not n_images:
        raise DomainError("The scene has no image to draw on.", field=_FIELD)
    checked = []
    for index, overlay in enumerate(overlays):
        if not isinstance(overlay, dict):
            _fail(index, "a mark is an object with a type and coordinates.")
        kind = overlay.get("type")
        if kind not in TYPES:
            _fail(index, f"the type is one of {', '.join(TYPES)}.")
        image = overlay.get("image", 0)
        if not isinstance(image, int) or isinstance(image, bool) or not 0 <= image < n_images:
            _fail(index, f"'image' is the index of one of the scene's {n_images} image(s), from 0.")
        colour = overlay.get("colour") or COLOURS[kind]
        if not isinstance(colour, str) or not _COLOUR.match(colour):
            _fail(index, "the colour is written #rrggbb.")
        mark = {"image": image, "type": kind}
        if kind == ARROW:
            mark["from"], mark["to"] = _point(index, overlay, "from"), _point(index, overlay, "to")
            if math.dist(mark["from"], mark["to"]) < 0.01:
                _fail(index, "an arrow's start and end are the same point; drag to draw it.")
        else:
            values = [overlay.get(k) for k in ("x", "y", "width", "height")]
            if not all(map(_unit, values)):
                _fail(index, "a box has x, y, width and height, each from 0 to 1.")
            x, y, width, height = (round(float(v), 4) for v in values)
            if width < 0.005 or height < 0.005:
                _fail(index, "a box has a width and a height; drag to draw it.")
            if x + width > 1.0001 or y + height > 1.0001:
                _fail(index, "a box lies inside the image.")
            mark |= {"x": x, "y": y, "width": width, "height": height}
        mark["colour"] = colour.lower()
        label = overlay.get("label")
        if label not in (None, ""):
            if not isinstance(label, str) or len(label.strip()) > MAX_LABEL_CHARS:
                _fail(index, f"a label is text of at most {MAX_LABEL_CHARS} characters.")
            if text_problem(label):  # the request guard's check, whatever way the label came in
                _fail(index, f"a label {text_problem(label)}.")
            mark["label"] = label.strip()
        checked.append(mark)
    return checked


def in_pixels(overlay: dict, width: int, height: int, mirrored: bool = False) -> dict:
    """A normalised overlay placed on a width x height image (mirrored left to right if asked)."""
    flip = (lambda x: 1 - x) if mirrored else (lambda x: x)
    placed = {k: v for k, v in overlay.items() if k in ("type", "colour", "label")}
    if overlay["type"] == ARROW:
        for key in ("from", "to"):
            placed[key] = [flip(overlay[key][0]) * width, overlay[key][1] * height]
    else:
        x = 1 - overlay["x"] - overlay["width"] if mirrored else overlay["x"]
        placed |= {"x": x * width, "y": overlay["y"] * height,
                   "width": overlay["width"] * width, "height": overlay["height"] * height}
    return placed


def image_size(asset) -> tuple[int, int]:
    """An image asset's width and height: from its meta when the import recorded them, else its header."""
    meta = asset.meta or {}
    if isinstance(meta.get("width"), int) and isinstance(meta.get("height"), int):
        return meta["width"], meta["height"]
    from PIL import Image

    with asset.file.open("rb") as handle, Image.open(handle) as image:
        return image.size


def item_overlays(item, index: int, size: tuple[int, int], mirrored: bool = False) -> list[dict]:
    """The item's marks on its `index`-th image, in that image's pixels."""
    if item is None:
        return []
    return [in_pixels(o, *size, mirrored=mirrored) for o in (item.overlays or []) if o.get("image", 0) == index]


def shown_overlays(asset, index: int, item=None, mirrored: bool = False, size=None) -> list[dict]:
    """Everything drawn on a scene image as shown: the image's own overlays (the asset's meta; on a
    mirrored variant, `asset` is the mirrored twin or the original whose overlays are mirrored here)
    and the item's marks on it. Pixel coordinates of the image shown."""
    from .protocols import FLIPPED_IMAGE_ROLE, mirror_overlays

    own = list((asset.meta or {}).get("overlays") or [])
    if not (item is not None and item.overlays) and not own:
        return []
    size = size or image_size(asset)
    if mirrored and asset.role != FLIPPED_IMAGE_ROLE:
        own = mirror_overlays(own, size[0])
    return own + item_overlays(item, index, size, mirrored)


# --- drawing into the pixels ------------------------------------------------------------------------


def _rgb(colour) -> tuple[int, int, int]:
    colour = colour if isinstance(colour, str) and _COLOUR.match(colour) else COLOURS[ARROW]
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def _arrow(draw, overlay: dict, colour) -> tuple[float, float]:
    (x1, y1), (x2, y2) = overlay["from"], overlay["to"]
    draw.line((x1, y1, x2, y2), fill=colour, width=ARROW_WIDTH)
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    ux, uy = (x2 - x1) / length, (y2 - y1) / length  # along the arrow; (-uy, ux) across it
    head = [(x2 + ARROW_WIDTH * ((mx - HEAD_REF[0]) * ux - (my - HEAD_REF[1]) * uy),
             y2 + ARROW_WIDTH * ((mx - HEAD_REF[0]) * uy + (my - HEAD_REF[1]) * ux)) for mx, my in HEAD]
    draw.polygon(head, fill=colour)
    return x1, y1


def _box(draw, overlay: dict, colour) -> tuple[float, float]:
    x, y, w, h = (overlay[k] for k in ("x", "y", "width", "height"))
    half = BOX_WIDTH / 2
    draw.rectangle((x - half, y - half, x + w + half, y + h + half), outline=colour, width=BOX_WIDTH)
    return x, y


def draw(data: bytes, overlays: list[dict]) -> bytes:
    """The image with its overlays (pixel coordinates) printed in, as PNG; the bytes unchanged when
    there are none. The same shapes image-viewer.js lays over the image for humans."""
    if not overlays:
        return data
    from PIL import Image, ImageDraw, ImageFont

    with Image.open(io.BytesIO(data)) as opened:
        image = opened.convert("RGB")
    pen = ImageDraw.Draw(image)
    for overlay in overlays:
        colour = _rgb(overlay.get("colour") or COLOURS.get(overlay.get("type"), COLOURS[ARROW]))
        if overlay.get("type") == ARROW:
            anchor = _arrow(pen, overlay, colour)
        elif overlay.get("type") in BOX_TYPES:
            anchor = _box(pen, overlay, colour)
        else:
            continue
        if overlay.get("label"):
            font = ImageFont.load_default(size=LABEL_SIZE)
            pen.text((anchor[0] + LABEL_OFFSET[0], anchor[1] + LABEL_OFFSET[1]), str(overlay["label"]),
                     fill=colour, font=font, anchor="ls")
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


# --- an item's stimulus, one function for every reader ------------------------------------------------


def stimulus_image(asset, index: int, item=None, mirrored: bool = False) -> bytes:
    """One image of a scene as it is shown: the image (on a mirrored variant its stored twin, or the
    image mirrored now) with its own overlays and `item`'s marks on it (its `index`-th image) printed
    into the pixels, as PNG; the file's bytes when nothing is drawn on it. What the model is sent
    (modeleval.prompting.visual_inputs) and the same pixels the evaluator's page draws over the image."""
    from .protocols import flipped_image_bytes

    if mirrored:
        data = flipped_image_bytes(asset)
    else:
        with asset.file.open("rb") as handle:
            data = handle.read()
    return draw(data, shown_overlays(asset, index, item, mirrored))


def stimulus_images(item, mirrored: bool = False) -> list[bytes]:
    """Every image of the item's scene (in id order, the index its marks name) with the marks drawn
    in: `stimulus_image` for each; [] for an item without a scene."""
    from .models import AssetRole

    if item is None or item.scene is None:
        return []
    assets = item.scene.assets.filter(role=AssetRole.IMAGE).order_by("id")
    return [stimulus_image(asset, index, item, mirrored) for index, asset in enumerate(assets)]
