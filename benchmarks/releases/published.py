"""A release in each family's own published shape: the inverse of the family's importer
(benchmarks/importers/), so `import_items` of the file into a new benchmark gives the same items, ids,
answers and tags (and the paper tables the same cells), and the benchmark's official scripts read it.
Shapes: ../shared/FORMATS.md.

- Hypo3D: the scene-keyed JSON {scene_id: [{context_change, change_type, questions_answers}]}, the change
  type in the published words (`Object Movement`: metric_compute.py takes the second word), every accepted
  answer, the unchanged-scene answer and the irrelevant-change flag (Tables 3-4);
- 3DSRBench, Spatial457: VLMEvalKit's TSV with integer indexes, images base64 as they publish them (written
  once, later rows naming the row that holds it); 3DSRBench's rotation and `-flip` rows, on the mirrored
  image, for items built here too (variant_rows); Spatial457's per-level question files beside it;
- CausalSpatial: its JSON rows (`not_sure` as a letter), the real-world shape (`options`) for items whose
  options are not written inside the question, with `task` and `level` as fields;
- M3-Verse: its JSONL.

A row built here carries its item's provenance (and the release it was reviewed into, `released_in`), so
the copy is neither taken for a published item nor for a generator's draft. Items are taken in release order (the release's JSONL); the benchmark id of an
item written here is its scoring id (its own id, else its release id), so the scorer keys of a re-imported
copy are the same (3DSRBench's built items: their published-form qids)."""

import base64
import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass

from core.errors import DomainError

from ..importers.causalspatial import CAUSAL_ID, parse_options
from ..importers.rows import LETTERS, RELEASED_IN
from ..importers.spatial457 import SPATIAL457_DATA_FIELDS, SPATIAL457_LEVELS
from ..importers.threedsrbench import SRBENCH_SUBTYPES
from ..models import AssetRole, Item, Release
from ..protocols import FLIPPED, IMAGE_VARIANT, Protocol, flip_rule, shown_choices, variant_answer, variants
from ..services import question_types_of, shown_to_people
from .geometry import GEOMETRY_KEY, published_geometry

# The file name (after the release's `<slug>-<version>-`) of each family's published shape.
PUBLISHED_NAMES = {"hypo3d": "hypo3d.json", "3dsrbench": "3dsrbench.tsv", "causalspatial": "causalspatial.json",
                   "spatial457": "spatial457.tsv", "m3verse": "m3verse.jsonl"}


ITEM_FIELDS = ("external_id", "origin_id", "source_index", "question", "answer_format", "choices", "answers", "tags",
               "provenance", "unchanged_answers", "overlays", "scene__external_id", "change__raw_text", "change__refined_text",
               "change__change_type", "change__edit", "change__scene")


def release_items(release: Release) -> list[Item]:
    """The release's items in the order of its JSONL (by primary key, as they were frozen), with only the
    fields the files are written from (a release has tens of thousands)."""
    return list(release.items.select_related("scene", "change").only(*ITEM_FIELDS).order_by("pk"))


def read_bytes(asset) -> bytes:
    with asset.file.open("rb") as handle:
        return handle.read()


def scene_media(items: list[Item], roles: tuple[str, ...]) -> dict[tuple[int, str], list]:
    """(scene pk, role) -> the scene's assets of that role people are shown, oldest first (videos: before,
    then after)."""
    from ..models import Asset

    found: dict[tuple[int, str], list] = {}
    scene_ids = {i.scene_id for i in items if i.scene_id}
    for asset in shown_to_people(Asset.objects.filter(scene_id__in=scene_ids, role__in=roles)).order_by("pk"):
        found.setdefault((asset.scene_id, asset.role), []).append(asset)
    return found


def item_image(item: Item, media: dict, cache: dict, mirrored: bool = False) -> bytes | None:
    """The image the item is shown, as it is shown to evaluators and models (overlays.stimulus_image, the
    one drawing): its scene's image with the image's own overlays and the item's marks drawn in; mirrored
    (the stored twin where there is one) on a `-flip` row, or for a mirrored variant (`mirrored`)."""
    from ..overlays import stimulus_image

    if item.scene_id is None:
        return None
    mirror = mirrored != ((item.tags or {}).get(IMAGE_VARIANT) == FLIPPED)
    originals = media.get((item.scene_id, AssetRole.IMAGE)) or []
    if not originals:  # only a mirrored twin stored: shown as it is on a -flip row
        twins = (media.get((item.scene_id, AssetRole.IMAGE_FLIPPED)) or []) if mirror else []
        if not twins:
            return None
        if twins[-1].pk not in cache:
            cache[twins[-1].pk] = read_bytes(twins[-1])
        return cache[twins[-1].pk]
    asset, marked = originals[-1], bool(getattr(item, "overlays", None))
    key = (asset.pk, mirror, item.pk if marked else None)
    if key not in cache:
        cache[key] = stimulus_image(asset, len(originals) - 1, item if marked else None, mirror)
    return cache[key]


def released_provenance(item: Item, release: Release) -> dict | None:
    """An item's provenance as its published row carries it, for any item not imported from a published
    file (authored, generated, drafted): its fields, and the release it was reviewed into, so the copy keeps
    where it came from (None for a published item: the copy says `published` again)."""
    provenance = item.provenance or {}
    if provenance.get("source") in (None, "", "published"):
        return None
    kept = {key: value for key, value in provenance.items() if key not in ("file", "where")}
    kept[RELEASED_IN] = kept.get(RELEASED_IN) or f"{release.benchmark.slug}@{release.version}"
    # Keys sorted: PostgreSQL's jsonb gives them back in an order of its own, SQLite as they were written,
    # and a release's bytes must not depend on the database.
    return dict(sorted(kept.items()))


def _refused(item: Item, reason: str) -> DomainError:
    return DomainError(f"Item {item.scoring_id} cannot be written in the published shape: {reason}.", field="items")


# --- Hypo3D ---------------------------------------------------------------------------------------

# The change types as the Hypo3D release writes them: its metric_compute.py takes the second word.
PUBLISHED_CHANGE_TYPES = {"movement": "Object Movement", "removal": "Object Removal",
                          "attribute": "Object Attribute", "addition": "Object Addition",
                          "replacement": "Object Replacement"}


def hypo3d_qa(item: Item) -> dict:
    """One question as the release writes it; beyond its fields, what Tables 3-4 and several accepted
    answers need: `answers` (every accepted answer; `answer` is the first), `unchanged_answer` (the
    answer on the unchanged scene) and `irrelevant_change` (the importer reads them back)."""
    from ..counterfactual import AFFECTS, EFFECT_TAG, IRRELEVANT, IRRELEVANT_KEY

    answers = list(item.answers or [])
    qa = {"question_id": item.scoring_id, "question_type": " ".join(question_types_of(item.tags)),
          "question": item.question, "answer": answers[0] if answers else ""}
    if len(answers) > 1:
        qa["answers"] = answers
    effect = (item.tags or {}).get(EFFECT_TAG)
    unchanged = list(item.unchanged_answers or [])
    if effect == IRRELEVANT:
        qa[IRRELEVANT_KEY] = True
    elif unchanged:
        qa["unchanged_answer"] = unchanged[0] if len(unchanged) == 1 else unchanged
        if effect == AFFECTS:
            qa[IRRELEVANT_KEY] = False
    return qa


def hypo3d_file(items: list[Item], release: Release) -> bytes:
    """The scene-keyed JSON; a change with an edit also carries `change_geometry` ({object_ids, edit}) and
    each of its questions `derived_answer` and `agrees` (geometry.py)."""
    shape: dict[str, list[dict]] = {}
    by_change: dict[int, dict] = {}
    geometry, derived = published_geometry(items)
    for item in items:
        if item.scene is None or item.change is None:
            raise _refused(item, "Hypo3D items need a scene and a context change")
        entry = by_change.get(item.change_id)
        if entry is None:
            change_type = item.change.change_type
            entry = by_change[item.change_id] = {
                "context_change": item.change.text,
                "change_type": PUBLISHED_CHANGE_TYPES.get(change_type, change_type), "questions_answers": []}
            if item.change_id in geometry:
                entry[GEOMETRY_KEY] = geometry[item.change_id]
            shape.setdefault(item.scene.external_id, []).append(entry)
        qa = hypo3d_qa(item)
        if item.change_id in geometry:
            answer = derived.get(item.pk, {})
            qa["derived_answer"], qa["agrees"] = answer.get("derived"), answer.get("agrees")
        if (provenance := released_provenance(item, release)) is not None:
            qa["provenance"] = provenance
        entry["questions_answers"].append(qa)
    return (json.dumps(shape, indent=2, ensure_ascii=False) + "\n").encode()


# --- VLMEvalKit TSVs (3DSRBench, Spatial457) ------------------------------------------------------

def row_indexes(items: list[Item]) -> list[str]:
    """Each row's VLMEvalKit `index`, an integer (its scorers call int(line["index"])): the item's own
    (`source_index`) where every item has a distinct integer one, else 0, 1, 2... in release order."""
    own = [item.source_index for item in items]
    if all(index.isdigit() for index in own) and len({int(index) for index in own}) == len(own):
        return [str(int(index)) for index in own]
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


# --- 3DSRBench's rows of an item built here ----------------------------------------------------------
# 3DSRBench's TSV rows of an item built here: the published TSV holds every
# question's rotated-choice copies and mirrored-image rows, so an item whose variants the platform makes at
# run time (benchmarks/protocols.py) is written as those rows. VLMEvalKit's circular and flip evaluation on
# the file then groups them as it groups the published rows:
#
# - `qid`: the 8-character base id (its flip+circular grouping reads `qid[:8]`), then `-1`..`-3` for the
#   rotations, `-flip` on the mirrored image and `-flip-N` for its rotations;
# - each row's options rotated as the run-time variant shows them, its answer the letter its gold text has
#   there, swapped on `-flip` rows of an item whose answer swaps (`flip: swap`); `-flip` rows only for an
#   item with a flip decision (swap or same) and an image.

BASE_QID = re.compile(r"^[A-Za-z0-9]{8}$")


def base_qid(scoring_id: str) -> str:
    """The item's id when it is already a published-form base id (8 letters or digits), else 8 characters
    of its id's hash (base32): the same item always gets the same qid."""
    if BASE_QID.match(scoring_id):
        return scoring_id
    return base64.b32encode(hashlib.sha1(scoring_id.encode()).digest()).decode()[:8]


@dataclass(frozen=True)
class VariantRow:
    qid: str
    choices: list[str]
    answer: str
    flipped: bool


def variant_rows(choices: list[str], answer: str, scoring_id: str, tags: dict, has_image: bool) -> list[VariantRow]:
    """Every row of one item: the vanilla order, each rotation, then (with a flip decision and an image) the
    same on the mirrored image. Raises DomainError when a swapped answer has no left/right counterpart."""
    rule = flip_rule(tags)
    base = base_qid(scoring_id)
    rows = []
    for variant in variants(Protocol(circular=True, flip=True), len(choices), rule, has_image):
        canonical = variant_answer(choices, answer, variant, rule)
        order = variant.order(len(choices))
        rows.append(VariantRow(qid=base + variant.suffix, choices=shown_choices(choices, variant),
                               answer=LETTERS[order.index(LETTERS.index(canonical))], flipped=variant.flip))
    return rows


def built_here(item) -> bool:
    """An item built here, whose variants are made at run time: not imported from a published file, nor
    read back from a release (`released_in`: its rows were written out, each an item now)."""
    provenance = item.provenance or {}
    return provenance.get("source") != "published" and not provenance.get("released_in")


SRBENCH_COLUMNS = ["index", "qid", "question", "A", "B", "C", "D", "answer", "category", "image", "image_source",
                   "viewpoint", "scene_id", "flip", "provenance"]


def _srbench_checked(item: Item) -> dict:
    tags = item.tags or {}
    if tags.get("subtype") not in SRBENCH_SUBTYPES:
        raise _refused(item, "3DSRBench rows need a subtype tag (one of the 12, e.g. height_higher)")
    if not 2 <= len(item.choices) <= 4 or item.answer_format != "single" or not item.answers:
        raise _refused(item, "3DSRBench rows are single-choice with 2 to 4 options")
    return tags


def srbench_file(items: list[Item], release: Release) -> bytes:
    """The published rows as they are; an item built here as its rotation and `-flip` rows (variant_rows),
    the `-flip` ones on the mirrored image. Indexes are unique integers (0, 1, 2... once any row is made)."""
    media, cache, images = scene_media(items, (AssetRole.IMAGE, AssetRole.IMAGE_FLIPPED)), {}, ImageColumn()
    planned = []  # (item, qid, choices, answer letter, on the mirrored image)
    for item in items:
        tags = _srbench_checked(item)
        if not built_here(item):
            planned.append((item, item.scoring_id, item.choices, item.answers[0], None))
            continue
        has_image = bool(media.get((item.scene_id, AssetRole.IMAGE)))
        try:
            rows = variant_rows(item.choices, item.answers[0], item.scoring_id, tags, has_image)
        except DomainError as exc:
            raise _refused(item, exc.message) from None
        planned += [(item, row.qid, row.choices, row.answer, row.flipped) for row in rows]
    qids = [qid for _, qid, *_ in planned]
    if len(set(qids)) != len(qids):
        repeated = next(qid for qid in qids if qids.count(qid) > 1)
        raise _refused(planned[qids.index(repeated)][0], f"its qid {repeated} is another row's too")
    indexes = (row_indexes(items) if all(flipped is None for *_, flipped in planned)
               else [str(n) for n in range(len(planned))])
    out = []
    for index, (item, qid, choices, answer, flipped) in zip(indexes, planned, strict=True):
        tags = item.tags or {}
        image = item_image(item, media, cache, mirrored=bool(flipped))  # -flip rows: the mirrored image
        provenance = released_provenance(item, release)
        out.append({
            "index": index, "qid": qid, "question": item.question,
            **{LETTERS[k]: choice for k, choice in enumerate(choices)}, "answer": answer,
            "category": tags["subtype"], "image": images.cell(index, image),
            "image_source": tags.get("image_source", ""), "viewpoint": tags.get("viewpoint", ""),
            "scene_id": item.scene.external_id if item.scene else "", "flip": tags.get("flip", ""),
            "provenance": json.dumps(provenance, ensure_ascii=False) if provenance else "",
        })
    return tsv_bytes(SRBENCH_COLUMNS, out)


# The generator's fields beyond VLMEvalKit's columns travel as JSON cells, so a re-import keeps them;
# `question_id` is the item's id (the `index` is an integer, as VLMEvalKit's Spatial457 scorer reads it).
SPATIAL457_COLUMNS = ["index", "question", "answer", "category", "image", "question_id", "image_filename",
                      "scene_id", *SPATIAL457_DATA_FIELDS, "provenance"]


def _spatial457_level(item: Item) -> str:
    level = (item.tags or {}).get("level")
    if not level:
        raise _refused(item, "Spatial457 rows need a level tag (e.g. L1_single)")
    return level


def spatial457_file(items: list[Item], release: Release) -> bytes:
    media, cache, images, rows = scene_media(items, (AssetRole.IMAGE,)), {}, ImageColumn(), []
    for index, item in zip(row_indexes(items), items, strict=True):
        tags, level = item.tags or {}, _spatial457_level(item)
        provenance = released_provenance(item, release)
        rows.append({
            "index": index, "question": item.question, "answer": item.answers[0] if item.answers else "",
            "category": level, "image": images.cell(index, item_image(item, media, cache)),
            "question_id": item.scoring_id, "image_filename": tags.get("image", ""),
            "scene_id": item.scene.external_id if item.scene else "",
            **{key: json.dumps(tags[key], ensure_ascii=False) for key in SPATIAL457_DATA_FIELDS if key in tags},
            "provenance": json.dumps(provenance, ensure_ascii=False) if provenance else "",
        })
    return tsv_bytes(SPATIAL457_COLUMNS, rows)


_IMAGE_NUMBER = re.compile(r"(\d+)\.\w+$")


def spatial457_questions(items: list[Item], release: Release) -> dict[str, bytes]:
    """The generator's shape, one file per level (`<level>.json`: {"info", "split", "questions"}), as the official
    repository and generator keep them. `question_index` is the item's own where it has one, else the next
    free number of its level; an item whose id is not `<level>/<question_index>` says it as `question_id`."""
    by_level: dict[str, list[Item]] = {}
    for item in items:
        by_level.setdefault(_spatial457_level(item), []).append(item)
    files = {}
    for level in [*(lv for lv in SPATIAL457_LEVELS if lv in by_level), *sorted(set(by_level) - set(SPATIAL457_LEVELS))]:
        taken = {item.tags["question_index"] for item in by_level[level]
                 if isinstance(item.tags.get("question_index"), int)}
        free, questions, image_numbers = 0, [], {}
        for item in by_level[level]:
            tags = item.tags or {}
            number = tags.get("question_index")
            if not isinstance(number, int):
                while free in taken:
                    free += 1
                number, free = free, free + 1
            filename = tags.get("image", "")
            found = _IMAGE_NUMBER.search(filename or "")
            image_index = int(found.group(1)) if found else image_numbers.setdefault(filename, len(image_numbers))
            question = {"split": level, "image_filename": filename, "image_index": image_index,
                        "question": item.question, "answer": item.answers[0] if item.answers else "",
                        **{key: tags[key] for key in SPATIAL457_DATA_FIELDS if key in tags},
                        "question_index": number}
            if item.scoring_id != f"{level}/{number}":
                question["question_id"] = item.scoring_id
            if item.scene and item.scene.external_id != filename:
                question["scene_id"] = item.scene.external_id
            if (provenance := released_provenance(item, release)) is not None:
                question["provenance"] = provenance
            questions.append(question)
        info = {"split": level, "hypolab_release": f"{release.benchmark.slug}@{release.version}"}
        shape = {"info": info, "split": level, "questions": questions}  # construction/generators/spatial457's
        files[f"{level}.json"] = (json.dumps(shape, indent=2, ensure_ascii=False)
                                  + "\n").encode()
    return files


# --- CausalSpatial --------------------------------------------------------------------------------

def causalspatial_file(items: list[Item], release: Release) -> bytes:
    """The synthetic shape (`<Task>_Level_<n>_<i>` id, options inside the question) for items that are in it;
    any other item in the real-world shape (options as a list, the answer as its text) with its `task` and
    `level` as fields, so the copy's level x task cells are the release's."""
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
            extra = ("not_sure", "difficulty")
        else:  # the real-world shape: options as a list, the answer as the option's text
            row = {"id": item.scoring_id, "question": item.question, "options": item.choices,
                   "answer": item.choices[LETTERS.index(letter)]}
            extra = ("type", "task", "level", "not_sure", "difficulty")
        for key in extra:
            if tags.get(key) not in (None, ""):
                row[key] = tags[key]
        if picture:
            row["image"] = picture
        if item.scene:
            row["scene_id"] = item.scene.external_id
        if (provenance := released_provenance(item, release)) is not None:
            row["provenance"] = provenance
        rows.append(row)
    return (json.dumps(rows, indent=2, ensure_ascii=False) + "\n").encode()


# --- M3-Verse -------------------------------------------------------------------------------------

def m3verse_file(items: list[Item], release: Release) -> bytes:
    lines = []
    for item in items:
        tags = item.tags or {}
        if item.answer_format not in ("single", "multi"):
            raise _refused(item, "M3-Verse items are single- or multiple-choice")
        line = {
            "scene_id": item.scene.external_id if item.scene else "", "category": tags.get("category", ""),
            "question_id": item.scoring_id, "state_type": tags.get("state_type", ""), "question": item.question,
            "options": [f"{LETTERS[k]}. {choice}" for k, choice in enumerate(item.choices)],
            "answer": list(item.answers),
            "question_type": "single_choice" if item.answer_format == "single" else "multiple_choice",
            "subcategory": tags.get("subcategory", ""), "hallucination": bool(tags.get("hallucination")),
            "capabilities": tags.get("capabilities") or [],
        }
        if (provenance := released_provenance(item, release)) is not None:
            line["provenance"] = provenance
        lines.append(json.dumps(line, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode()


WRITERS = {"hypo3d": hypo3d_file, "3dsrbench": srbench_file, "causalspatial": causalspatial_file,
           "spatial457": spatial457_file, "m3verse": m3verse_file}


def published_file(release: Release) -> tuple[str, bytes]:
    """(file name, bytes) of the release in its family's published shape; a DomainError naming the
    first item that shape cannot hold."""
    family = release.benchmark.family
    prefix = f"{release.benchmark.slug}-{release.version}"
    return f"{prefix}-{PUBLISHED_NAMES[family]}", WRITERS[family](release_items(release), release)


# Files a published shape keeps beside its main file, by family: (folder in the release, writer).
COMPANIONS = {"spatial457": ("spatial457_questions", spatial457_questions)}


def published_companions(release: Release) -> dict[str, bytes]:
    """The files beside the published file (Spatial457: one question file per level), by their path in an
    exported release folder (`spatial457_questions/L1_single.json`); {} for the other families."""
    family = release.benchmark.family
    if family not in COMPANIONS:
        return {}
    folder, write = COMPANIONS[family]
    return {f"{folder}/{name}": content for name, content in write(release_items(release), release).items()}
