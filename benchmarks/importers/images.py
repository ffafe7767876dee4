"""Images carried inside item files: base64 text (VLMEvalKit TSVs, data: URIs, VLMEvalKit's
references to another row's image) and Hugging Face image fields."""

import base64
import binascii
import io
import re

from .rows import ImageData, cell

BASE64_TEXT = re.compile(r"[A-Za-z0-9+/=\s]+")
# VLMEvalKit writes an image once and lets other rows name that row's index instead (64 chars at most).
IMAGE_REFERENCE_MAX = 64


def image_data(value) -> ImageData | None:
    """A base64 image (plain, or as a data: URI), a Hugging Face image dict with bytes; else None."""
    if isinstance(value, dict):
        inner = value.get("bytes")
        return image_data(inner) if inner else None
    if isinstance(value, bytes | bytearray):
        return ImageData(bytes(value))
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.startswith("data:image/") and ";base64," in text:
        return ImageData(text.split(",", 1)[1])
    if len(text) > IMAGE_REFERENCE_MAX and _looks_like_image(text) and BASE64_TEXT.fullmatch(text):
        return ImageData(text)
    return None


IMAGE_MAGIC = (b"\xff\xd8\xff", b"\x89PNG", b"GIF8", b"RIFF", b"BM")


def _looks_like_image(text: str) -> bool:
    """The first bytes of base64 text are an image file's signature (JPEG, PNG, GIF, WebP, BMP)."""
    try:
        head = base64.b64decode(text[:24], validate=True)
    except (binascii.Error, ValueError):
        return False
    return head.startswith(IMAGE_MAGIC)


def decode_image(image: ImageData) -> tuple[bytes, dict]:
    """The image's bytes and {width, height, format}; ValueError when it is not a readable image."""
    from PIL import Image, UnidentifiedImageError

    content = image.data
    if isinstance(content, str):
        try:
            content = base64.b64decode("".join(content.split()), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("the image is not valid base64") from None
    try:
        with Image.open(io.BytesIO(content)) as picture:
            facts = {"width": picture.width, "height": picture.height, "format": (picture.format or "").lower()}
            picture.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise ValueError(f"the image is not a readable image ({exc})") from None
    return content, facts


def tsv_images(rows: list[tuple[str, dict]]) -> dict[str, tuple[str, str]]:
    """index -> (index of the row that holds the image, the base64 text), following VLMEvalKit's
    short references (a row whose `image` is another row's index)."""
    by_index = {cell(row, "index"): cell(row, "image") for _, row in rows if cell(row, "index")}
    resolved = {}
    for index, value in by_index.items():
        owner = index
        if value and len(value) <= IMAGE_REFERENCE_MAX and value in by_index:
            owner, value = value, by_index[value]
        if value and len(value) > IMAGE_REFERENCE_MAX:
            resolved[index] = (owner, value)
    return resolved


def image_field(row: dict, tags: dict) -> ImageData | None:
    """A Hugging Face `image`: base64 bytes become the item's image; a path is kept in tags."""
    value = row.get("image")
    image = image_data(value)
    if image is None:
        path = value.get("path") if isinstance(value, dict) else value
        if isinstance(path, str) and path.strip():
            tags["image"] = path.strip()
    return image
