"""3DSRBench's published shape: VLMEvalKit's TSV (qid, question, options A-D, answer, category,
base64 images; `-flip` rows on the mirrored image)."""

import re
from collections.abc import Iterator

from benchmarks.models import AnswerFormat

from .images import image_data, tsv_images
from .rows import (
    LETTERS,
    ImageData,
    ItemRecord,
    Problem,
    cell,
    each_record,
    generated_provenance,
    need,
    read_tsv,
)

SRBENCH_SUBTYPES = {
    "height_higher": "height",
    "location_above": "location", "location_closer_to_camera": "location", "location_next_to": "location",
    "orientation_in_front_of": "orientation", "orientation_on_the_left": "orientation",
    "orientation_viewpoint": "orientation",
    "multi_object_closer_to": "multi_object", "multi_object_facing": "multi_object",
    "multi_object_viewpoint_towards_object": "multi_object", "multi_object_parallel": "multi_object",
    "multi_object_same_direction": "multi_object",
}
# `VIN6MS3J`, `VIN6MS3J-2`, `VIN6MS3J-flip`, `VIN6MS3J-flip-1`.
SRBENCH_QID = re.compile(r"^(?P<base>.+?)(?P<flip>-flip)?(?:-(?P<rotation>\d+))?$")


def _choice_letters(row: dict, where: str) -> list[str]:
    """Options A-D that are written, in order; a gap (C empty, D written) is refused."""
    cells = [cell(row, letter) for letter in "ABCD"]
    while cells and not cells[-1]:
        cells.pop()
    if "" in cells:
        raise ValueError(f"{where}: option {LETTERS[cells.index('')]} is empty but a later one is not")
    return cells


def _viewpoint(row: dict) -> str:
    viewpoint = cell(row, "viewpoint")
    if viewpoint:
        return viewpoint
    split = cell(row, "split").lower()
    if "uncommon" in split:
        return "uncommon"
    return "common" if "common" in split else ""


def srbench_records(text: str, name: str = "") -> Iterator[ItemRecord | Problem]:
    rows = read_tsv(text, {"qid", "question", "A", "B", "answer", "category"})
    images = tsv_images(rows) if rows and "image" in rows[0][1] else {}

    def build(where, row):
        qid = cell(row, "qid")
        if not qid:
            raise ValueError(f"{where}: 'qid' is missing or empty")
        choices = _choice_letters(row, where)
        answer = cell(row, "answer").upper().strip("() .")
        if len(choices) < 2:
            raise ValueError(f"{where}: expected at least options A and B")
        if answer not in LETTERS[: len(choices)] or not answer:
            raise ValueError(f"{where}: answer '{cell(row, 'answer')}' is not one of the {len(choices)} options")
        subtype = cell(row, "category")
        if subtype not in SRBENCH_SUBTYPES:
            raise ValueError(f"{where}: unknown category '{subtype}' (one of the 12 subtypes, e.g. height_higher)")
        parts = SRBENCH_QID.match(qid)
        flipped = bool(parts["flip"])
        tags = {"category": SRBENCH_SUBTYPES[subtype], "subtype": subtype}
        if cell(row, "image_source"):
            tags["image_source"] = cell(row, "image_source")
        if _viewpoint(row):
            tags["viewpoint"] = _viewpoint(row)
        if flipped:
            tags["image_variant"] = "flipped"
        if cell(row, "flip") in ("swap", "same", "none"):  # its flip decision (a HypoLab release writes it)
            tags["flip"] = cell(row, "flip")
        index = cell(row, "index")
        image = None
        if index in images:
            image = ImageData(images[index][1], flipped=flipped, key=qid.replace("-flip", "", 1))
        elif not index and image_data(cell(row, "image")):
            image = ImageData(cell(row, "image"), flipped=flipped, key=qid.replace("-flip", "", 1))
        return ItemRecord(
            where=where, question=need(row, "question", where), answer_format=AnswerFormat.SINGLE,
            answers=[answer], choices=choices, external_id=qid, id_label="qid", source_index=index, tags=tags,
            scene_id=cell(row, "scene_id") or parts["base"], image=image,
            generated=generated_provenance({"provenance": cell(row, "provenance")}, where),
        )

    return each_record(rows, build)
