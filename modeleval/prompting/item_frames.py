"""Frames produced elsewhere for each item (CausalSpatial's world-model frames, "COW"), imported under a
source name and sent by runs with `inputs.extra_frames = source` (modeleval.prompting.run_inputs). An import is all
or nothing; importing an item's frames of a source again replaces them."""

import hashlib
import io
import re
from pathlib import Path

from django.core.files.base import ContentFile
from django.db import transaction
from PIL import Image, UnidentifiedImageError

from benchmarks.models import Benchmark, Item
from core.errors import DomainError

from ..models import ItemFrame

SOURCE = re.compile(r"^[-a-zA-Z0-9_]{1,50}$")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
MAX_FRAMES_PER_ITEM = 64


def _item(benchmark: Benchmark, key: str) -> Item | None:
    """The benchmark's item whose benchmark id is `key`, else whose row id is `#N` or `N`."""
    found = Item.objects.filter(benchmark=benchmark, external_id=key).first()
    if found is None and key.lstrip("#").isdigit():
        found = Item.objects.filter(benchmark=benchmark, pk=int(key.lstrip("#"))).first()
    return found


def import_item_frames(benchmark: Benchmark, source: str, frames: dict[str, list[tuple[str, bytes]]]) -> dict:
    """`frames`: {item key: [(file name, bytes)] in the order sent}. Returns {items, frames}."""
    if not isinstance(source, str) or not SOURCE.match(source):
        raise DomainError("source is a slug naming what produced the frames, e.g. cow.", field="source")
    if not frames:
        raise DomainError("No frames given.", field="files")
    errors, found = [], {}
    for key, files in sorted(frames.items()):
        item = _item(benchmark, key)
        if item is None:
            errors.append(f"{key}: no item of {benchmark.slug} has this id")
            continue
        if not files or len(files) > MAX_FRAMES_PER_ITEM:
            errors.append(f"{key}: from 1 to {MAX_FRAMES_PER_ITEM} frames per item")
        for name, data in files:
            try:
                with Image.open(io.BytesIO(data)) as image:
                    image.verify()
            except (UnidentifiedImageError, OSError, SyntaxError):
                errors.append(f"{key}/{name}: not a PNG or JPEG image")
        found[item] = files
    if errors:
        raise DomainError("; ".join(errors[:20]) + (f" (and {len(errors) - 20} more)" if len(errors) > 20 else ""),
                          field="files")
    with transaction.atomic():
        for item, files in found.items():
            ItemFrame.objects.filter(item=item, source=source).delete()
            for index, (name, data) in enumerate(files):
                frame = ItemFrame(item=item, source=source, index=index, sha256=hashlib.sha256(data).hexdigest())
                frame.file.save(f"{index:03d}{Path(name).suffix.lower() or '.png'}", ContentFile(data), save=False)
                frame.save()
    return {"items": len(found), "frames": sum(len(files) for files in found.values())}


def frames_in_folder(folder: Path) -> dict[str, list[tuple[str, bytes]]]:
    """A folder of `<item id>/<frame>.png|jpg` (an id with slashes is its nested path), frames in name order."""
    frames: dict[str, list[tuple[str, bytes]]] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES and path.parent != folder:
            key = path.parent.relative_to(folder).as_posix()
            frames.setdefault(key, []).append((path.name, path.read_bytes()))
    return frames
