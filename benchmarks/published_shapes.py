"""A release in each family's own published shape: the inverse of the family's importer
(benchmarks/importers/), so `import_items` of the file into a new benchmark gives the same items, ids,
answers and tags, and the benchmark's official scripts read it. Shapes: ../shared/FORMATS.md.

- Hypo3D: the scene-keyed JSON {scene_id: [{context_change, change_type, questions_answers}]};
- 3DSRBench, Spatial457: VLMEvalKit's TSV, images base64 as they publish them (written once, later rows
  naming the row that holds it), 3DSRBench's `-flip` rows on the mirrored image;
- CausalSpatial: its JSON rows (`not_sure` as a letter), the real-world shape (`options`) for items whose
  options are not written inside the question;
- M3-Verse: its JSONL.

Items are taken in release order (the release's JSONL); the benchmark id of an item written here is its
scoring id (its own id, else its release id), so the scorer keys of a re-imported copy are the same."""

import base64
import csv
import io
import json

from core.errors import DomainError

from .importers.causalspatial import CAUSAL_ID, parse_options
from .importers.rows import LETTERS
from .importers.spatial457 import SPATIAL457_DATA_FIELDS
from .importers.threedsrbench import SRBENCH_SUBTYPES
from .models import AssetRole, Item, Release
from .services import question_types_of

FLIPPED = "flipped"
# The file name (after the release's `<slug>-<version>-`) of each family's published shape.
PUBLISHED_NAMES = {"hypo3d": "hypo3d.json", "3dsrbench": "3dsrbench.tsv", "causalspatial": "causalspatial.json",
                   "spatial457": "spatial457.tsv", "m3verse": "m3verse.jsonl"}


ITEM_FIELDS = ("external_id", "origin_id", "source_index", "question", "answer_format", "choices", "answers", "tags",
               "scene__external_id", "change__raw_text", "change__refined_text", "change__change_type")


def release_items(release: Release) -> list[Item]:
    """The release's items in the order of its JSONL (by primary key, as they were frozen), with only the
    fields the files are written from (a release has tens of thousands)."""
    return list(release.items.select_related("scene", "change").only(*ITEM_FIELDS).order_by("pk"))


def read_bytes(asset) -> bytes:
    with asset.file.open("rb") as handle:
        return handle.read()


def scene_media(items: list[Item], roles: tuple[str, ...]) -> dict[tuple[int, str], list]:
    """(scene pk, role) -> the scene's assets of that role, oldest first (videos: before, then after)."""
    from .models import Asset

    found: dict[tuple[int, str], list] = {}
    scene_ids = {i.scene_id for i in items if i.scene_id}
    for asset in Asset.objects.filter(scene_id__in=scene_ids, role__in=roles).order_by("pk"):
        found.setdefault((asset.scene_id, asset.role), []).append(asset)
    return found


def item_image(item: Item, media: dict, cache: dict) -> bytes | None:
    """The image the item is shown: its scene's mirrored twin on a `-flip` row, else its scene's image."""
    if item.scene_id is None:
        return None
    flipped = (item.tags or {}).get("image_variant") == FLIPPED
    role = AssetRole.IMAGE_FLIPPED if flipped else AssetRole.IMAGE
    assets = media.get((item.scene_id, role)) or []
    if not assets:
        return None
    asset = assets[-1]
    if asset.pk not in cache:
        cache[asset.pk] = read_bytes(asset)
    return cache[asset.pk]


def _refused(item: Item, reason: str) -> DomainError:
    return DomainError(f"Item {item.scoring_id} cannot be written in the published shape: {reason}.", field="items")


# --- Hypo3D ---------------------------------------------------------------------------------------

def hypo3d_file(items: list[Item]) -> bytes:
    shape: dict[str, list[dict]] = {}
    by_change: dict[int, dict] = {}
    for item in items:
        if item.scene is None or item.change is None:
            raise _refused(item, "Hypo3D items need a scene and a context change")
        entry = by_change.get(item.change_id)
        if entry is None:
            entry = by_change[item.change_id] = {"context_change": item.change.text,
                                                 "change_type": item.change.change_type, "questions_answers": []}
            shape.setdefault(item.scene.external_id, []).append(entry)
        entry["questions_answers"].append({
            "question_id": item.scoring_id, "question_type": " ".join(question_types_of(item.tags)),
            "question": item.question, "answer": item.answers[0] if item.answers else "",
        })
    return (json.dumps(shape, indent=2, ensure_ascii=False) + "\n").encode()


# --- VLMEvalKit TSVs (3DSRBench, Spatial457) ------------------------------------------------------

def row_indexes(items: list[Item]) -> list[str]:
    """Each row's VLMEvalKit `index`: the item's own (`source_index`) where every item has a distinct one,
    else 0, 1, 2... in release order."""
    own = [item.source_index for item in items]
    if all(own) and len(set(own)) == len(own):
        return own
    return [str(n) for n in range(len(items))]


def tsv_bytes(columns: list[str], rows: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, delimiter="\t", lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


class ImageColumn:
    """VLMEvalKit's `image` cells: base64 the first time an image appears, that row's index after."""

    def __init__(self):
        self.owner: dict[bytes, str] = {}

    def cell(self, index: str, content: bytes | None) -> str:
        if content is None:
            return ""
        if content in self.owner:
            return self.owner[content]
        self.owner[content] = index
        return base64.b64encode(content).decode()


SRBENCH_COLUMNS = ["index", "qid", "question", "A", "B", "C", "D", "answer", "category", "image", "image_source",
                   "viewpoint", "scene_id"]


def srbench_file(items: list[Item]) -> bytes:
    media, cache, images, rows = scene_media(items, (AssetRole.IMAGE, AssetRole.IMAGE_FLIPPED)), {}, ImageColumn(), []
    for index, item in zip(row_indexes(items), items, strict=True):
        tags = item.tags or {}
        if tags.get("subtype") not in SRBENCH_SUBTYPES:
            raise _refused(item, "3DSRBench rows need a subtype tag (one of the 12, e.g. height_higher)")
        if not 2 <= len(item.choices) <= 4 or item.answer_format != "single":
            raise _refused(item, "3DSRBench rows are single-choice with 2 to 4 options")
        rows.append({
            "index": index, "qid": item.scoring_id, "question": item.question,
            **{LETTERS[k]: choice for k, choice in enumerate(item.choices)}, "answer": item.answers[0],
            "category": tags["subtype"], "image": images.cell(index, item_image(item, media, cache)),
            "image_source": tags.get("image_source", ""), "viewpoint": tags.get("viewpoint", ""),
            "scene_id": item.scene.external_id if item.scene else "",
        })
    return tsv_bytes(SRBENCH_COLUMNS, rows)


# The generator's fields beyond VLMEvalKit's columns travel as JSON cells, so a re-import keeps them.
SPATIAL457_COLUMNS = ["index", "question", "answer", "category", "image", "image_filename", "scene_id",
                      *SPATIAL457_DATA_FIELDS]


def spatial457_file(items: list[Item]) -> bytes:
    media, cache, images, rows = scene_media(items, (AssetRole.IMAGE,)), {}, ImageColumn(), []
    for item in items:
        tags = item.tags or {}
        if not tags.get("level"):
            raise _refused(item, "Spatial457 rows need a level tag (e.g. L1_single)")
        index = item.scoring_id
        rows.append({
            "index": index, "question": item.question, "answer": item.answers[0] if item.answers else "",
            "category": tags["level"], "image": images.cell(index, item_image(item, media, cache)),
            "image_filename": tags.get("image", ""), "scene_id": item.scene.external_id if item.scene else "",
            **{key: json.dumps(tags[key], ensure_ascii=False) for key in SPATIAL457_DATA_FIELDS if key in tags},
        })
    return tsv_bytes(SPATIAL457_COLUMNS, rows)


# --- CausalSpatial --------------------------------------------------------------------------------

def causalspatial_file(items: list[Item]) -> bytes:
    media, cache, rows = scene_media(items, (AssetRole.IMAGE,)), {}, []
    for item in items:
        tags = item.tags or {}
        if item.answer_format != "single" or not item.answers:
            raise _refused(item, "CausalSpatial items are single-choice")
        letter = item.answers[0]
        image = item_image(item, media, cache)
        picture = base64.b64encode(image).decode() if image is not None else tags.get("image")
        if CAUSAL_ID.match(item.external_id) and parse_options(item.question) == item.choices:
            row = {"id": item.external_id, "question": item.question, "answer": letter}
            for key in ("not_sure", "difficulty"):
                if tags.get(key) not in (None, ""):
                    row[key] = tags[key]
        else:  # the real-world shape: options as a list, the answer as the option's text
            row = {"id": item.scoring_id, "question": item.question, "options": item.choices,
                   "answer": item.choices[LETTERS.index(letter)]}
            for key in ("type", "not_sure"):
                if tags.get(key) not in (None, ""):
                    row[key] = tags[key]
        if picture:
            row["image"] = picture
        if item.scene:
            row["scene_id"] = item.scene.external_id
        rows.append(row)
    return (json.dumps(rows, indent=2, ensure_ascii=False) + "\n").encode()


# --- M3-Verse -------------------------------------------------------------------------------------

def m3verse_file(items: list[Item]) -> bytes:
    lines = []
    for item in items:
        tags = item.tags or {}
        if item.answer_format not in ("single", "multi"):
            raise _refused(item, "M3-Verse items are single- or multiple-choice")
        lines.append(json.dumps({
            "scene_id": item.scene.external_id if item.scene else "", "category": tags.get("category", ""),
            "question_id": item.scoring_id, "state_type": tags.get("state_type", ""), "question": item.question,
            "options": [f"{LETTERS[k]}. {choice}" for k, choice in enumerate(item.choices)],
            "answer": list(item.answers),
            "question_type": "single_choice" if item.answer_format == "single" else "multiple_choice",
            "subcategory": tags.get("subcategory", ""), "hallucination": bool(tags.get("hallucination")),
            "capabilities": tags.get("capabilities") or [],
        }, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode()


WRITERS = {"hypo3d": hypo3d_file, "3dsrbench": srbench_file, "causalspatial": causalspatial_file,
           "spatial457": spatial457_file, "m3verse": m3verse_file}


def published_file(release: Release) -> tuple[str, bytes]:
    """(file name, bytes) of the release in its family's published shape; a DomainError naming the
    first item that shape cannot hold."""
    family = release.benchmark.family
    prefix = f"{release.benchmark.slug}-{release.version}"
    return f"{prefix}-{PUBLISHED_NAMES[family]}", WRITERS[family](release_items(release))
