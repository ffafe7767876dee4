"""Evaluation protocols shared by model runs and human studies (3DSRBench's CircularEval and FlipEval).

A protocol asks for circular choice orders (every rotation of an item's options) and/or flipped
images (the mirrored stimulus; left and right answers swapped on items marked `flip: swap`). Each
item then has a list of variants; a variant's scorer row id is the item's id plus the suffix the
3DSRBench scorer groups by: `<id>-<k>` for rotation k, `<id>-flip`, `<id>-flip-<k>`.

Pure functions on plain data; Pillow is imported only to mirror an image.
"""

import io
import re
from dataclasses import dataclass
from string import ascii_uppercase as LETTERS

from core.errors import DomainError

# The asset role of a stored mirrored twin of an image, and the meta key naming its original.
FLIPPED_IMAGE_ROLE = "image_flipped"
TWIN_OF = "flipped_from"
# An item's `flip` tag, its flip decision (asked by choice-on-image campaigns, edited on review): on
# the mirrored image its answer swaps left and right, stays the same, or there is no mirrored copy
# (`none`: mirroring would change what is asked, e.g. text in the image). Only swap and same get a
# flipped variant; FlipEval refuses items with no decision at all (modeleval.runs.run_options).
FLIP_SWAPS, FLIP_SAME, FLIP_NONE = "swap", "same", "none"
FLIP_DECISIONS = (FLIP_SWAPS, FLIP_SAME, FLIP_NONE)


@dataclass(frozen=True)
class Protocol:
    circular: bool = False
    flip: bool = False

    @classmethod
    def from_data(cls, data, field: str = "protocol") -> "Protocol":
        """{"circular": bool, "flip": bool}; None or {} is vanilla."""
        if data in (None, ""):
            return cls()
        if not isinstance(data, dict):
            raise DomainError("A protocol is an object like {\"circular\": true, \"flip\": false}.", field=field)
        unknown = set(data) - {"circular", "flip"}
        if unknown:
            raise DomainError(f"Unknown protocol setting(s): {', '.join(sorted(unknown))}.", field=field)
        if not all(isinstance(value, bool) for value in data.values()):
            raise DomainError("Protocol settings are true or false.", field=field)
        return cls(circular=data.get("circular", False), flip=data.get("flip", False))

    def as_data(self) -> dict:
        return {"circular": self.circular, "flip": self.flip}

    @property
    def name(self) -> str:
        return {(False, False): "vanilla", (True, False): "circular", (False, True): "flip"}.get(
            (self.circular, self.flip), "flip+circular"
        )


@dataclass(frozen=True)
class Variant:
    """One way of showing an item: its options rotated by `rotation`, on the mirrored image or not."""

    rotation: int = 0
    flip: bool = False

    @property
    def name(self) -> str:
        """'' (as is), 'k', 'flip' or 'flip-k': the scorer id suffix without its dash."""
        parts = (["flip"] if self.flip else []) + ([str(self.rotation)] if self.rotation else [])
        return "-".join(parts)

    @property
    def suffix(self) -> str:
        return f"-{self.name}" if self.name else ""

    @classmethod
    def parse(cls, name: str) -> "Variant":
        match = _VARIANT_NAME.fullmatch(name or "")
        if match is None:
            raise ValueError(f"not a variant name: {name!r}")
        rotation = match.group("rotation") or match.group("flip_rotation") or 0
        return cls(rotation=int(rotation), flip=bool(match.group("flip")))

    def order(self, n_choices: int) -> list[int]:
        """The canonical option index shown at each position."""
        return [(position + self.rotation) % n_choices for position in range(n_choices)]


VANILLA = Variant()
_VARIANT_NAME = re.compile(r"(?:(?P<flip>flip)(?:-(?P<flip_rotation>[1-9]\d*))?|(?P<rotation>[1-9]\d*))?")


# An item imported from a 3DSRBench `-flip` row is asked about the mirrored image (its stored twin).
IMAGE_VARIANT, FLIPPED = "image_variant", "flipped"


def shows_mirrored(tags, variant: "Variant") -> bool:
    """Whether the item's images are shown mirrored: on a flipped variant, or on an item imported from
    a `-flip` row (a flipped variant of that item mirrors it back to the original)."""
    return variant.flip != ((tags or {}).get(IMAGE_VARIANT) == FLIPPED)


def flip_rule(tags) -> str | None:
    value = (tags or {}).get("flip")
    return value if value in (FLIP_SWAPS, FLIP_SAME) else None


def flip_decided(tags) -> bool:
    """The item says how it reads on the mirrored image (swap, same or none)."""
    return (tags or {}).get("flip") in FLIP_DECISIONS


def undecided_flips(rows) -> list:
    """The ids of the (id, tags) rows without a flip decision, in the order given."""
    return [pk for pk, tags in rows if not flip_decided(tags)]


def variants(protocol: Protocol, n_choices: int, rule: str | None, has_image: bool = True) -> list[Variant]:
    """Every variant of one item: all rotations of its options (circular, choice items only), then
    the same on the mirrored image (flip, items with a flip rule and an image)."""
    rotations = range(n_choices) if protocol.circular and n_choices > 1 else range(1)
    flips = [False, True] if protocol.flip and rule is not None and has_image else [False]
    return [Variant(rotation, flip) for flip in flips for rotation in rotations]


def shown_choices(choices, variant: Variant) -> list[str]:
    return [choices[index] for index in variant.order(len(choices))] if choices else []


_LEFT_RIGHT = re.compile(r"\b(left|right)\b", re.IGNORECASE)


def swap_left_right(text: str) -> str:
    """'on the left of' <-> 'on the right of', keeping the case of each word."""

    def swapped(match: re.Match) -> str:
        word = match.group(0)
        other = "right" if word.lower() == "left" else "left"
        return other.upper() if word.isupper() else other.capitalize() if word[0].isupper() else other

    return _LEFT_RIGHT.sub(swapped, text)


def flipped_letter(choices, letter: str) -> str:
    """The canonical letter that is correct on the mirrored image when the answer swaps: the option
    that reads as the gold with left and right exchanged, or else the other of two options."""
    index = LETTERS.index(letter)
    wanted = swap_left_right(choices[index]).strip().lower()
    matches = [i for i, text in enumerate(choices) if text.strip().lower() == wanted and i != index]
    if len(matches) == 1:
        return LETTERS[matches[0]]
    if len(choices) == 2:
        return LETTERS[1 - index]
    raise DomainError(
        f"Option '{choices[index]}' has no left/right counterpart among the options, so its answer on "
        "the mirrored image is unknown.", field="flip",
    )


def variant_answer(choices, answer, variant: Variant, rule: str | None):
    """The gold answer (a letter or a list of letters, canonical order) of one variant."""
    if not (variant.flip and rule == FLIP_SWAPS):
        return answer
    if isinstance(answer, str):
        return flipped_letter(choices, answer)
    return sorted(flipped_letter(choices, letter) for letter in answer)


def row_id(base: str, variant: Variant) -> str:
    return f"{base}{variant.suffix}"


def variant_gold(gold: dict, variant: Variant) -> dict:
    """A scorer gold line turned into one variant's line: suffixed id, its circular group (so
    rotations group even past 9 of them), and the answer on the mirrored image."""
    if variant == VANILLA:
        return gold
    base = gold["id"]
    return {
        **gold,
        "id": row_id(base, variant),
        "group": f"{base}-flip" if variant.flip else base,
        "answer": variant_answer(gold["choices"], gold["answer"], variant, flip_rule(gold.get("tags"))),
    }


def variant_prediction(base: str, output: str, choices, variant: Variant, repeat: int = 0) -> dict:
    """A scorer prediction line for one variant: the output and the options in the order shown."""
    line = {"id": row_id(base, variant), "output": output, "repeat": repeat}
    if choices and variant.rotation:
        line["choices"] = shown_choices(choices, variant)
    return line


def mirror_image(data: bytes) -> bytes:
    """The image mirrored left to right, in its own format (PNG when Pillow cannot say)."""
    from PIL import Image, ImageOps

    with Image.open(io.BytesIO(data)) as image:
        fmt = image.format or "PNG"
        mirrored = ImageOps.mirror(image)
    out = io.BytesIO()
    mirrored.save(out, format=fmt, **({"quality": 95} if fmt == "JPEG" else {}))
    return out.getvalue()


def image_width(data: bytes) -> int:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return image.width


def mirror_overlays(overlays: list[dict], width: int) -> list[dict]:
    """Overlays (image pixel coordinates: arrows `from`/`to`, boxes `x, y, width, height`) placed
    on the mirrored image."""
    mirrored = []
    for overlay in overlays:
        overlay = dict(overlay)
        if overlay.get("type") == "arrow":
            overlay["from"] = [width - overlay["from"][0], overlay["from"][1]]
            overlay["to"] = [width - overlay["to"][0], overlay["to"][1]]
        elif overlay.get("type") in ("box", "start_box"):
            overlay["x"] = width - overlay["x"] - overlay["width"]
        mirrored.append(overlay)
    return mirrored


# --- stored images (Asset rows, reached through their relations; no model import) ---------------


def flipped_twin(asset):
    """The stored mirrored twin of an image asset, if an import or a study made one."""
    if asset.scene is None:
        return None
    return asset.scene.assets.filter(role=FLIPPED_IMAGE_ROLE, **{f"meta__{TWIN_OF}": asset.pk}).first()


def flipped_image_bytes(asset) -> bytes:
    """The image as seen on a flipped variant: the stored twin when there is one, else mirrored now."""
    twin = flipped_twin(asset)
    with (twin or asset).file.open("rb") as handle:
        data = handle.read()
    return data if twin else mirror_image(data)


def ensure_flipped_twin(asset):
    """The asset's mirrored twin, stored (with its overlays mirrored) if it is not yet."""
    from .services import store_asset

    twin = flipped_twin(asset)
    if twin is not None:
        return twin
    with asset.file.open("rb") as handle:
        data = handle.read()
    meta = {**asset.meta, TWIN_OF: asset.pk}
    if asset.meta.get("overlays"):
        meta["overlays"] = mirror_overlays(asset.meta["overlays"], image_width(data))
    name = asset.file.name.rsplit("/", 1)[-1]
    return store_asset(asset.scene, FLIPPED_IMAGE_ROLE, f"flipped-{name}", mirror_image(data), meta)
