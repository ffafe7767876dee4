"""3DSRBench's TSV rows of an item built here (benchmarks/published_shapes.py): the published TSV holds every
question's rotated-choice copies and mirrored-image rows, so an item whose variants the platform makes at
run time (benchmarks/protocols.py) is written as those rows. VLMEvalKit's circular and flip evaluation on
the file then groups them as it groups the published rows:

- `qid`: the 8-character base id (its flip+circular grouping reads `qid[:8]`), then `-1`..`-3` for the
  rotations, `-flip` on the mirrored image and `-flip-N` for its rotations;
- each row's options rotated as the run-time variant shows them, its answer the letter its gold text has
  there, swapped on `-flip` rows of an item whose answer swaps (`flip: swap`); `-flip` rows only for an
  item with a flip decision (swap or same) and an image.
"""

import base64
import hashlib
import re
from dataclasses import dataclass

from .protocols import Protocol, flip_rule, shown_choices, variant_answer, variants

LETTERS = "ABCDEFGHIJ"
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
